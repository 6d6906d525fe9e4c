"""The package's surface: every public name documented and in the type stubs."""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import topoview
from conftest import REPO


def test_public_names_have_docstrings_and_stubs():
    stub = Path(topoview.__file__).with_suffix(".pyi")
    tree = ast.parse(stub.read_text())
    stubbed = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    for name in topoview.__all__:
        assert name in stubbed, f"{name} is missing from {stub.name}"
        assert getattr(topoview, name).__doc__, f"{name} has no docstring"
    assert (Path(topoview.__file__).parent / "py.typed").exists()


def test_version_is_the_crates():
    # Every crate takes the workspace's version.
    cargo = (REPO / "Cargo.toml").read_text()
    package = re.search(r"^\[workspace\.package\]$(.*?)^\[", cargo, re.M | re.S).group(1)
    assert re.search(rf'^version = "{re.escape(topoview.__version__)}"$', package, re.M)
    python_crate = (REPO / "crates" / "python" / "Cargo.toml").read_text()
    assert re.search(r"^version\.workspace = true$", python_crate, re.M)


def test_a_process_forked_after_use_gets_an_error_not_a_hang():
    """topoview's threads do not survive a fork: the child is told to use 'spawn'."""
    code = (
        "import multiprocessing as mp, numpy as np, topoview\n"
        "def child(q):\n"
        "    try:\n"
        "        topoview.ecc(np.zeros((3, 3), np.uint8), backend='cpu')\n"
        "        q.put('computed')\n"
        "    except topoview.TopoviewError as e:\n"
        "        q.put(str(e))\n"
        "topoview.ecc(np.zeros((3, 3), np.uint8), backend='cpu')\n"
        "q = mp.get_context('fork').Queue()\n"
        "p = mp.get_context('fork').Process(target=child, args=(q,))\n"
        "p.start(); print(q.get(timeout=60)); p.join()\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "start worker processes with the 'spawn' method" in r.stdout, r.stdout + r.stderr


def test_open_takes_paths_as_str_bytes_and_pathlike():
    p = REPO / "tests" / "data" / "nibabel_standard_4x5x7.nii.gz"
    for given in [str(p), p, os.fsencode(p)]:
        assert topoview.open(given).path == str(p)
