"""Lazy public names for a package (PEP 562): a name is imported from its module when first read.

``import checkweigh.store`` (or any submodule of it) then costs only the package's own file;
SQLAlchemy, pydantic models and the rest load when a command reads a name that needs them.
Each package keeps its imports under ``if typing.TYPE_CHECKING:`` for the type checker and
gives the same names here, to be found at run time.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def exports(
    package: str, names: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose public names load on first use.

    Args:
        package: the package's ``__name__``.
        names: each public name and where it is defined: ``".module"`` (relative to the package),
            or ``".module:attribute"`` when the package exports it under another name.
    """

    def __getattr__(name: str) -> object:
        where = names.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = where.partition(":")
        value = getattr(importlib.import_module(module, package), attribute or name)
        setattr(sys.modules[package], name, value)  # the next read is a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__
