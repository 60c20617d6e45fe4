"""A griffe extension: a checkweigh package's public names, for the API reference.

A package writes each public name once, as an ``X as X`` import in its ``if TYPE_CHECKING:``
block, and has no literal ``__all__`` (``checkweigh._lazy`` derives it). griffe reads
``__all__`` only when written out, so this gives each package's ``exports`` from the same
reading ``checkweigh._lazy`` does at run time. Use it in mkdocs.yml, under the python handler's
options: ``extensions: [docs/hooks/griffe_exports.py]``.
"""

from __future__ import annotations

import ast
from typing import Any

import griffe

from checkweigh._lazy import exported, sort_key


class PublicExports(griffe.Extension):
    """Sets ``exports`` of every ``checkweigh`` package that does not write ``__all__`` out."""

    def on_module_members(
        self, *, node: ast.AST | griffe.ObjectNode, mod: griffe.Module, **kwargs: Any
    ) -> None:
        if not (mod.is_init_module and mod.path.split(".")[0] == "checkweigh"):
            return
        if mod.exports is not None or not isinstance(node, ast.Module):
            return
        lazy, own = exported(node)
        mod.exports = sorted({*lazy, *own}, key=sort_key)
