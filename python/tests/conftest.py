"""Shared fixtures: the repository's bundled files and the command line to compare with.

The command line is found at $TOPOVIEW_CLI, else target/release/topoview, else
target/debug/topoview; CI sets TOPOVIEW_CLI, and a test that needs it fails (rather than
skips) when the variable names a missing file."""

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
ASSETS = REPO / "assets"

# Every bundled file the readers accept without options, and the raw file with its options.
READABLE = [
    ASSETS / "mni152_t1_09a.nii.gz",
    ASSETS / "coins.png",
    DATA / "camera.png",
    DATA / "horse_rgba.png",
    DATA / "mpl_jacksboro_dem_int16.tif",
    DATA / "multipage_2x15x10.tif",
    DATA / "nibabel_standard_4x5x7.nii.gz",
    DATA / "nipy_some_blobs.nii",
    DATA / "pydicom_emri_small.nii.gz",
    DATA / "pydicom_emri_small_stack_uint16.tif",
]
RAW = (DATA / "pydicom_emri_small_64x64x10_uint16_le.raw", dict(dims=(64, 64, 10), dtype="u16"))
BAD = sorted(p for p in (DATA / "bad").iterdir() if p.suffix != ".py")


def _cli_path():
    named = os.environ.get("TOPOVIEW_CLI")
    if named:
        if not Path(named).is_file():
            raise FileNotFoundError(f"TOPOVIEW_CLI={named} is not a file")
        return Path(named)
    for p in (REPO / "target" / "release" / "topoview", REPO / "target" / "debug" / "topoview"):
        if p.is_file():
            return p
    return None


@pytest.fixture(scope="session")
def cli():
    """Runs the command line; returns (returncode, stdout, stderr)."""
    path = _cli_path()
    if path is None:
        pytest.skip("no topoview command line built (cargo build --release) and TOPOVIEW_CLI unset")

    def run(*args):
        r = subprocess.run([str(path), *map(str, args)], capture_output=True, text=True, timeout=600)
        return r.returncode, r.stdout, r.stderr

    return run


@pytest.fixture(scope="session")
def cli_json(cli, tmp_path_factory):
    """Runs a command line subcommand with --json and returns the parsed export."""

    def run(*args):
        out = tmp_path_factory.mktemp("cli") / "out.json"
        code, _, err = cli(*args, "--json", out)
        assert code == 0, err
        return json.loads(out.read_text())

    return run
