"""Every package lists exactly the names it exports, sorted, and writes each of them once.

httpx's test, for every package: ``__all__`` equals the public names the package gives (its
lazy names and what it binds itself), in isort's order. And one place per name: a package names
an export once, as an ``X as X`` import in its ``TYPE_CHECKING`` block (the explicit re-export
mypy and pyright read); ``checkweigh._lazy`` derives the run-time map and ``__all__`` from it.
"""

from __future__ import annotations
import __future__

import ast
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import checkweigh
from checkweigh._lazy import sort_key

PACKAGES = sorted(
    {"checkweigh"}
    | {
        info.name
        for info in pkgutil.walk_packages(checkweigh.__path__, "checkweigh.")
        if info.ispkg and not info.name.endswith(".migrations")  # Alembic's scripts, no API
    }
)

# KNOWN EXCEPTIONS (issue 23): packages still writing their names out by hand, being rewritten
# on other branches; the lead empties this list when they merge. Add nothing here.
WRITTEN_OUT = {
    "checkweigh.runs.targets": "the target kinds are rewritten (issue 23, item 2)",
}


def _public(module: ModuleType) -> set[str]:
    """The public names ``module`` gives: what it binds and what it loads on first read."""
    return {
        name
        for name in dir(module)
        if (not name.startswith("_") or name == "__version__")
        and not isinstance(getattr(module, name), ModuleType | __future__._Feature)
    }


def test_every_package_is_checked() -> None:
    # the walk finds the packages: a new one is checked without being listed
    assert {"checkweigh.cli", "checkweigh.runs.targets", "checkweigh.server"} <= set(PACKAGES)
    assert len(PACKAGES) >= 16


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_every_public_name(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert len(exported) == len(set(exported)), "duplicate names in __all__"
    assert set(exported) == _public(module)
    if name not in WRITTEN_OUT:
        assert exported == sorted(exported, key=sort_key)


@pytest.mark.parametrize("name", PACKAGES)
def test_star_import_gives_all(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from {name} import *", namespace)  # reads __all__ through the package's __getattr__
    del namespace["__builtins__"]
    module = importlib.import_module(name)
    assert set(namespace) == set(module.__all__)
    assert all(namespace[n] is getattr(module, n) for n in namespace)


def _init(name: str) -> ast.Module:
    module = importlib.import_module(name)
    return ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", [n for n in PACKAGES if n not in WRITTEN_OUT])
def test_each_public_name_is_written_once(name: str) -> None:
    tree = _init(name)
    # no __all__ list and no name map: both are derived from the imports
    assigned = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    assert "__all__" not in assigned
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "_lazy.exports"
    ]
    assert [ast.unparse(call) for call in calls] == ["_lazy.exports(__name__)"]
    # an export is re-exported explicitly (X as X), else type checkers do not see it
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) or (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Attribute | ast.Name)
            and ast.unparse(node.test).endswith("TYPE_CHECKING")
        ):
            for imported in node.body if isinstance(node, ast.If) else [node]:
                assert isinstance(imported, ast.ImportFrom), ast.unparse(imported)
                for alias in imported.names:
                    public = not (alias.asname or alias.name).startswith("_")
                    if public and imported.module != "__future__":
                        assert alias.asname == alias.name, f"{name}: {ast.unparse(imported)}"


def test_a_lazy_name_loads_its_module_on_first_read_only() -> None:
    code = (
        "import sys, checkweigh.store as s; print('checkweigh.store._store' in sys.modules);"
        "print('Store' in dir(s), 'Store' in s.__all__, 'checkweigh.store._store' in sys.modules);"
        "print(s.Store.__module__, 'checkweigh.store._store' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [
        "False",
        "True True False",  # dir() and __all__ read the package's source, not its modules
        "checkweigh.store._store True",
    ]


def test_an_unknown_name_is_an_attribute_error() -> None:
    import checkweigh.store

    with pytest.raises(AttributeError, match=r"module 'checkweigh\.store' has no attribute 'Nope'"):
        _ = checkweigh.store.Nope  # type: ignore[attr-defined]
    assert not hasattr(checkweigh.store, "__wrapped__")  # dunders never read the source


@pytest.fixture(scope="module")
def reference() -> Any:
    """checkweigh as mkdocstrings reads it for the API reference: with griffe, which knows a
    written-out ``__all__`` only, and docs/hooks/griffe_exports.py, which gives it the names
    checkweigh._lazy derives."""
    griffe = pytest.importorskip("griffe", reason="the docs extra (mkdocstrings) is not installed")
    root = Path(checkweigh.__file__).parents[2]
    extensions = griffe.load_extensions(str(root / "docs" / "hooks" / "griffe_exports.py"))
    return griffe.load(
        "checkweigh", search_paths=[str(root / "src")], extensions=extensions, resolve_aliases=False
    )


@pytest.mark.parametrize("name", [n for n in PACKAGES if n not in WRITTEN_OUT])
def test_the_api_reference_sees_the_same_names(reference: Any, name: str) -> None:
    package = reference if name == "checkweigh" else reference[name.removeprefix("checkweigh.")]
    public = {
        n for n, member in package.members.items() if member.is_public and not member.is_module
    }
    assert public == set(importlib.import_module(name).__all__)
