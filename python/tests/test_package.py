"""The package's surface: every public name documented and in the type stubs."""

import ast
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
    cargo = (REPO / "Cargo.toml").read_text()
    assert f'version = "{topoview.__version__}"' in cargo
