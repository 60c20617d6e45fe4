"""Lazy public names for a package (PEP 562): a name is imported from its module when first read.

``import checkweigh.store`` (or any submodule of it) then costs only the package's own file;
SQLAlchemy, pydantic models and the rest load when a command reads a name that needs them.

Each public name is written once, as an import in the package's ``if TYPE_CHECKING:`` block::

    if _typing.TYPE_CHECKING:
        from ._store import Store as Store
    else:  # the names load when first read: see checkweigh._lazy
        __getattr__, __dir__ = _lazy.exports(__name__)

The type checker reads the block (``X as X`` marks an explicit re-export, PEP 484); at run time
:func:`exports` reads the same block from the package's source the first time a name is
missing, and derives from it where each name lives and the package's ``__all__`` (PEP 562's
``__getattr__`` is consulted for ``__all__`` too, so ``from package import *`` works). Public
names the package binds itself (an eager import, a constant) are part of ``__all__`` as well.
Packages without their source (bytecode only) cannot be read this way.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ast


def exports(
    package: str, names: Mapping[str, str] | None = None
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose public names load on first use.

    Args:
        package: the package's ``__name__``.
        names: each public name and where it is defined (``".module"``, or ``".module:attribute"``
            when exported under another name), for a package that writes the map out; by
            default it is read from the package's ``TYPE_CHECKING`` block when first needed.
    """
    read: list[tuple[dict[str, tuple[str, str]], list[str]]] = []  # (where, __all__), once

    def where() -> tuple[dict[str, tuple[str, str]], list[str]]:
        if not read:  # two threads may both read the source: each appends a whole answer
            if names is None:
                lazy, own = read_exports(sys.modules[package])
                read.append((lazy, sorted({*lazy, *own}, key=sort_key)))
            else:
                written = {
                    n: (p.partition(":")[0], p.partition(":")[2] or n) for n, p in names.items()
                }
                read.append((written, []))
        return read[0]

    def __getattr__(name: str) -> object:
        if name == "__all__" and names is None:
            value: object = list(where()[1])
        else:
            place = None if name.startswith("__") else where()[0].get(name)
            if place is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            value = getattr(importlib.import_module(place[0], package), place[1])
        setattr(sys.modules[package], name, value)  # the next read is a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where()[0]})

    return __getattr__, __dir__


def sort_key(name: str) -> tuple[int, str]:
    """The order of ``__all__``: constants, then classes, then functions (as isort sorts)."""
    if name.isupper():
        return 0, name
    return (1, name) if name[:1].isupper() else (2, name)


def read_exports(module: ModuleType) -> tuple[dict[str, tuple[str, str]], set[str]]:
    """A lazy package's exports, read from its source.

    Returns:
        Each name of its ``TYPE_CHECKING`` block with the module it comes from and its name
        there; and the other public names the package binds when it runs.
    """
    import ast  # only when a name is first read: `import checkweigh` does not need it

    spec = module.__spec__
    source = spec.loader.get_source(spec.name) if spec and spec.loader else None  # type: ignore[attr-defined]
    if not source:
        raise ImportError(f"{module.__name__}: its exports are read from its source, not found")
    return exported(ast.parse(source))


def exported(tree: ast.Module) -> tuple[dict[str, tuple[str, str]], set[str]]:
    """What :func:`read_exports` reads, from a package's parsed ``__init__`` (also used by the
    API reference's griffe extension, ``docs/hooks/griffe_exports.py``)."""
    import ast

    lazy: dict[str, tuple[str, str]] = {}
    own: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and _names(node.test) & {"TYPE_CHECKING"}:
            for imported in node.body:
                if isinstance(imported, ast.ImportFrom):
                    origin = "." * imported.level + (imported.module or "")
                    for alias in imported.names:
                        lazy[alias.asname or alias.name] = (origin, alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            own.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            own.update(alias.asname or alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            own.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            dunder = isinstance(node.value, ast.Constant)  # __version__ = "1.0" is public
            own.update(n for n in _names(*targets) if dunder or not n.startswith("__"))
    return lazy, {name for name in own if not name.startswith("_") or name.endswith("__")}


def _names(*nodes: object) -> set[str]:
    """The plain names an expression ends in: ``TYPE_CHECKING`` in ``_typing.TYPE_CHECKING``."""
    return {getattr(node, "attr", None) or getattr(node, "id", None) or "" for node in nodes} - {""}
