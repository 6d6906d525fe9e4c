#!/usr/bin/env python3
"""The Euler characteristic curve of every file in a folder, on a Dask cluster, in one table.

    python examples/dask_batch.py FOLDER [--out ecc.csv | ecc.parquet]
        [--scheduler ADDRESS | --scheduler-file FILE | --workers N]
        [--pattern GLOB] [--recursive] [--smooth SIGMA] [--construction top-cells|vertices]
        [--superlevel] [--nan reject|absent] [--backend auto|cuda|cpu] [--threads T]
        [--files-per-task K]

Without --scheduler or --scheduler-file it starts a LocalCluster of --workers processes on this
machine. Each task reads its file on the worker that runs it, so on a cluster the workers must
see FOLDER at the same path (a shared file system), and sends back the curve; the results are
written in file order as they arrive, as rows (file, threshold, chi): CSV (thresholds written
as the command line writes them) or, for an --out ending in .parquet, Parquet (needs pandas and
pyarrow). A file that cannot be read or computed does not stop the batch: its error is printed
and written to OUT's stem + ".failures.csv" (file, error), and the exit status is 1. A file that
kills its worker (a crash, the memory limit) fails alone: its task's files go again one by one.

topoview computes each curve on every core it is given (or the worker's GPU); --threads sets
the cores per worker process (default: this machine's cores divided by --workers for a
LocalCluster, all of a worker's cores on a remote cluster).
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import sys
import time
from pathlib import Path

import numpy as np

import topoview

_threads_set = False


def csv_rows(path: str, thresholds, chi) -> str:
    """The rows of one curve as CSV text. Formatting is most of a CSV's cost for curves of
    many thresholds, so the workers do it, in parallel, and the client only writes."""
    quoted = io.StringIO()
    csv.writer(quoted, lineterminator="").writerow([path])
    name = quoted.getvalue()
    # A float32 scalar's str() is its shortest round-trip form, as the command line writes
    # it; other dtypes round-trip through Python ints and floats.
    values = map(str, thresholds) if thresholds.dtype == "float32" else thresholds.tolist()
    return "".join(f"{name},{t},{c}\n" for t, c in zip(values, chi.tolist()))


def ecc_of(path: str, options: dict, threads: int | None, as_csv: bool):
    """Runs on a worker: (path, result, rows, None), the result CSV text or the curve's two
    arrays, or (path, None, 0, error message)."""
    global _threads_set
    if threads and not _threads_set:
        _threads_set = True
        try:
            topoview.set_threads(threads)
        except topoview.TopoviewError:
            pass  # this worker process already computed (its threads are set)
    try:
        t, chi = topoview.ecc(topoview.open(path), **options)
        return path, csv_rows(path, t, chi) if as_csv else (t, chi), len(chi), None
    except topoview.TopoviewError as e:
        return path, None, 0, str(e)  # the table of failures names the file
    except Exception as e:  # noqa: BLE001 - one file's failure must not stop the batch
        return path, None, 0, f"{type(e).__name__}: {e}"


def one_by_one(client, path: str, options: dict, threads: int | None, as_csv: bool):
    """One file in a task of its own, not retried: its result, or the reason its worker died."""
    future = client.submit(ecc_of, path, options, threads, as_csv, pure=False, retries=0)
    try:
        return future.result()
    except Exception as e:  # noqa: BLE001 - this file's worker died
        return path, None, 0, f"{type(e).__name__}: {e}"
    finally:
        future.release()


def ecc_of_files(paths: list, options: dict, threads: int | None, as_csv: bool):
    """Runs on a worker: ecc_of for each file of a task, in order."""
    return [ecc_of(p, options, threads, as_csv) for p in paths]


def files_of(folder: Path, pattern: str, recursive: bool) -> list[str]:
    found = folder.rglob(pattern) if recursive else folder.glob(pattern)
    return sorted(str(p) for p in found if p.is_file())


class Table:
    """Rows (file, threshold, chi) written as they come: CSV, or Parquet one file at a time."""

    def __init__(self, out: Path):
        self.out, self.rows = out, 0
        if out.suffix == ".parquet":
            try:
                import pyarrow as pa
                import pyarrow.parquet as pq
            except ImportError:
                sys.exit(f"{out}: writing Parquet needs pyarrow (pip install pyarrow), or give a .csv name")
            self.pa = pa
            # The file column is dictionary-encoded: one string per file, not per row.
            self.file_type = pa.dictionary(pa.int32(), pa.string())
            schema = pa.schema([("file", self.file_type), ("threshold", pa.float64()), ("chi", pa.int64())])
            # Dictionary encoding pays for the file names only (2x faster than for every column).
            self.parquet = pq.ParquetWriter(str(out), schema, use_dictionary=["file"])
        else:
            self.parquet = None
            self.handle = open(out, "w", newline="")
            self.handle.write("file,threshold,chi\n")

    def write(self, path, result, rows):
        """One file's rows: CSV text from csv_rows, or (thresholds, chi) for Parquet."""
        self.rows += rows
        if self.parquet is not None:
            pa = self.pa
            thresholds, chi = result
            file = pa.DictionaryArray.from_arrays(pa.array(np.zeros(len(chi), np.int32)), pa.array([path]))
            batch = pa.table({"file": file, "threshold": thresholds.astype("float64"), "chi": chi})
            self.parquet.write_table(batch.cast(self.parquet.schema))
        else:
            self.handle.write(result)

    def close(self):
        if self.parquet is not None:
            self.parquet.close()
        else:
            self.handle.close()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder", type=Path)
    p.add_argument("--out", type=Path, default=Path("ecc.csv"))
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", help="address of a running scheduler (tcp://host:8786)")
    where.add_argument("--scheduler-file", help="a scheduler file (dask scheduler --scheduler-file, dask-mpi)")
    where.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes (default 2)")
    p.add_argument("--threads", type=int, help="CPU threads topoview uses in each worker process")
    p.add_argument("--files-per-task", type=int, help="files a task takes (default: about 16 tasks per worker, at most 64 files)")
    p.add_argument("--pattern", default="*", help="file name pattern (default: every file)")
    p.add_argument("--recursive", action="store_true", help="look in subfolders too")
    p.add_argument("--smooth", type=float, help="Gaussian sigma in voxels, applied first")
    p.add_argument("--construction", default="top-cells", choices=["top-cells", "vertices"])
    p.add_argument("--superlevel", action="store_true")
    p.add_argument("--nan", default="reject", choices=["reject", "absent"])
    p.add_argument("--backend", default="auto", choices=["auto", "cuda", "cpu"])
    a = p.parse_args(argv)
    for flag, value in [("--files-per-task", a.files_per_task), ("--threads", a.threads), ("--workers", a.workers)]:
        if value is not None and value < 1:
            p.error(f"{flag} must be at least 1")

    from dask.distributed import Client, LocalCluster

    files = files_of(a.folder, a.pattern, a.recursive)
    if not files:
        print(f"{a.folder}: no file matches {a.pattern!r}", file=sys.stderr)
        return 1
    options = dict(construction=a.construction, superlevel=a.superlevel, nan=a.nan, smooth=a.smooth, backend=a.backend)
    # The output first: a table that cannot be written stops the batch before any cluster starts.
    table, failures = Table(a.out), []
    cluster = client = None
    try:
        if a.scheduler:
            client = Client(a.scheduler)
        elif a.scheduler_file:
            client = Client(scheduler_file=a.scheduler_file)
        else:
            # One task at a time per process: topoview spreads each file over the process's threads.
            cluster = LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
            if a.threads is None:
                a.threads = max(1, (os.cpu_count() or 1) // a.workers)
        workers = len(client.scheduler_info()["workers"])
        print(f"{len(files)} files on {workers} workers ({client.scheduler.address})", file=sys.stderr)
        started = time.perf_counter()
        as_csv = table.parquet is None
        # A task takes several files when they are many: Dask's cost per task (a few ms, more
        # when the scheduler shares the cores) would otherwise rival a small file's.
        per_task = a.files_per_task or max(1, min(64, len(files) // (16 * max(1, workers))))
        groups = [files[i : i + per_task] for i in range(0, len(files), per_task)]
        futures = client.map(ecc_of_files, groups, options=options, threads=a.threads, as_csv=as_csv, pure=False)
        for group, future in zip(groups, futures):
            try:
                results = future.result()
            except Exception:  # noqa: BLE001 - a worker died (killed, out of memory)
                # Which file killed it is unknown: each goes again alone, so one bad file
                # fails only itself.
                results = [one_by_one(client, path, options, a.threads, as_csv) for path in group]
            future.release()
            for path, result, rows, err in results:
                if err is None:
                    table.write(path, result, rows)
                else:
                    failures.append((path, err))
                    print(f"{path}: {err}", file=sys.stderr)
    finally:
        table.close()
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    seconds = time.perf_counter() - started
    done = len(files) - len(failures)
    print(
        f"wrote {a.out}: {table.rows} rows from {done} files, {len(failures)} failed; "
        f"{seconds:.2f} s, {len(files) / seconds:.1f} files/s",
        file=sys.stderr,
    )
    if failures:
        report = a.out.with_name(a.out.stem + ".failures.csv")
        with open(report, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["file", "error"])
            w.writerows(failures)
        print(f"wrote {report}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
