#!/usr/bin/env python3
"""The Euler characteristic curve of every file in a folder, on a Dask cluster, in one table.

    python examples/dask_batch.py FOLDER [--out ecc.csv | ecc.parquet]
        [--scheduler ADDRESS | --scheduler-file FILE | --workers N]
        [--pattern GLOB] [--recursive] [--smooth SIGMA] [--construction top-cells|vertices]
        [--superlevel] [--nan reject|absent] [--backend auto|cuda|cpu] [--threads T]

Without --scheduler or --scheduler-file it starts a LocalCluster of --workers processes on this
machine. Each task reads its file on the worker that runs it, so on a cluster the workers must
see FOLDER at the same path (a shared file system), and sends back the curve; the results are
written in file order as they arrive, as rows (file, threshold, chi): CSV (thresholds written
as the command line writes them) or, for an --out ending in .parquet, Parquet (needs pandas and
pyarrow). A file that cannot be read or computed does not stop the batch: its error is printed
and written to OUT's stem + ".failures.csv" (file, error), and the exit status is 1.

topoview computes each curve on every core it is given (or the worker's GPU); --threads sets
the cores per worker process (default: this machine's cores divided by --workers for a
LocalCluster, all of a worker's cores on a remote cluster).
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from pathlib import Path

import topoview

_threads_set = False


def ecc_of(path: str, options: dict, threads: int | None):
    """Runs on a worker: (path, thresholds, chi, None) or (path, None, None, error message)."""
    global _threads_set
    if threads and not _threads_set:
        _threads_set = True
        try:
            topoview.set_threads(threads)
        except topoview.TopoviewError:
            pass  # this worker process already computed (its threads are set)
    try:
        t, chi = topoview.ecc(topoview.open(path), **options)
        return path, t, chi, None
    except topoview.TopoviewError as e:
        return path, None, None, str(e)  # the message names the file and the problem
    except Exception as e:  # noqa: BLE001 - one file's failure must not stop the batch
        return path, None, None, f"{type(e).__name__}: {e}"


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
            schema = pa.schema([("file", pa.string()), ("threshold", pa.float64()), ("chi", pa.int64())])
            self.parquet = pq.ParquetWriter(str(out), schema)
        else:
            self.parquet = None
            self.handle = open(out, "w", newline="")
            self.csv = csv.writer(self.handle)
            self.csv.writerow(["file", "threshold", "chi"])

    def write(self, path, thresholds, chi):
        self.rows += len(chi)
        if self.parquet is not None:
            pa = self.pa
            batch = pa.table({
                "file": pa.array([path] * len(chi), pa.string()),
                "threshold": pa.array(thresholds.astype("float64")),
                "chi": pa.array(chi),
            })
            self.parquet.write_table(batch)
        else:
            # str() of a numpy scalar is its shortest round-trip form, as the command line writes.
            self.csv.writerows((path, str(t), int(c)) for t, c in zip(thresholds, chi))

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
    p.add_argument("--pattern", default="*", help="file name pattern (default: every file)")
    p.add_argument("--recursive", action="store_true", help="look in subfolders too")
    p.add_argument("--smooth", type=float, help="Gaussian sigma in voxels, applied first")
    p.add_argument("--construction", default="top-cells", choices=["top-cells", "vertices"])
    p.add_argument("--superlevel", action="store_true")
    p.add_argument("--nan", default="reject", choices=["reject", "absent"])
    p.add_argument("--backend", default="auto", choices=["auto", "cuda", "cpu"])
    a = p.parse_args(argv)

    from dask.distributed import Client, LocalCluster

    files = files_of(a.folder, a.pattern, a.recursive)
    if not files:
        print(f"{a.folder}: no file matches {a.pattern!r}", file=sys.stderr)
        return 1
    options = dict(construction=a.construction, superlevel=a.superlevel, nan=a.nan, smooth=a.smooth, backend=a.backend)
    cluster = None
    if a.scheduler:
        client = Client(a.scheduler)
    elif a.scheduler_file:
        client = Client(scheduler_file=a.scheduler_file)
    else:
        if a.workers < 1:
            p.error("--workers must be at least 1")
        # One task at a time per process: topoview spreads each file over the process's threads.
        cluster = LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        if a.threads is None:
            a.threads = max(1, (os.cpu_count() or 1) // a.workers)
    workers = len(client.scheduler_info()["workers"])
    print(f"{len(files)} files on {workers} workers ({client.scheduler.address})", file=sys.stderr)

    started = time.perf_counter()
    table, failures = Table(a.out), []
    try:
        futures = client.map(ecc_of, files, options=options, threads=a.threads, pure=False)
        for path, future in zip(files, futures):
            try:
                path, thresholds, chi, err = future.result()
            except Exception as e:  # noqa: BLE001 - a worker died (killed, out of memory)
                thresholds, chi, err = None, None, f"{type(e).__name__}: {e}"
            future.release()
            if err is None:
                table.write(path, thresholds, chi)
            else:
                failures.append((path, err))
                print(f"{path}: {err}", file=sys.stderr)
    finally:
        table.close()
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
        report = a.out.with_name(a.out.name.split(".")[0] + ".failures.csv")
        with open(report, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["file", "error"])
            w.writerows(failures)
        print(f"wrote {report}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
