"""User checks referenced by dotted path: a ``@check`` function or a class with ``evaluate``."""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from ..errors import CheckweighError
from ._base import CheckLike, FunctionCheck
from ._model import BuiltinCheck


class ImportTargetError(CheckweighError, ValueError):
    """A dotted path that does not name an importable object of the right kind."""


class PythonCheck(BuiltinCheck):
    """A reference to user code: ``function: "package.module:name"`` with keyword ``args``."""

    type: Literal["python"] = "python"
    function: str
    """``module:attribute`` (or ``module.attribute``) of a ``@check`` function, a plain
    function, a check object or a class with an ``evaluate(case)`` method."""
    args: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for the function or the class."""

    @field_validator("function")
    @classmethod
    def _dotted(cls, value: str) -> str:
        module, _, attr = split_dotted(value)
        if not module or not attr or module.startswith("."):
            raise ValueError(f"expected 'module:function', got {value!r}")
        return value


def split_dotted(text: str) -> tuple[str, str, str]:
    """Split ``a.b:c`` or ``a.b.c`` into (module, sep, attribute)."""
    if ":" in text:
        module, _, attr = text.partition(":")
        return module, ":", attr
    module, _, attr = text.rpartition(".")
    return module, ".", attr


@contextmanager
def import_paths(paths: Sequence[Path]) -> Iterator[None]:
    """Temporarily put ``paths`` first on ``sys.path``."""
    added = [str(p) for p in paths if str(p) not in sys.path]
    sys.path[:0] = added
    try:
        yield
    finally:
        for p in added:
            if p in sys.path:
                sys.path.remove(p)


def _forget_shadowed(module_name: str, search: Sequence[Path]) -> None:
    """Drop a module of the same name imported from another folder, when a folder of
    ``search`` holds its own: two suites in one process, each with its ``agent.py``, must not
    share the first one's (a silent wrong answer)."""
    top = module_name.split(".", 1)[0]
    cached = sys.modules.get(top)
    file = getattr(cached, "__file__", None)
    if file is None:
        return
    for folder in search:
        for own in (folder / f"{top}.py", folder / top / "__init__.py"):
            if own.is_file():
                if own.resolve() != Path(file).resolve():
                    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
                        del sys.modules[name]
                return


def load_object(dotted: str, search: Sequence[Path] = ()) -> Any:
    """Import and return the object named by ``module:attr``.

    Raises:
        ImportTargetError: the module cannot be imported or lacks the attribute.
    """
    module_name, _, attr = split_dotted(dotted)
    if not module_name or not attr or module_name.startswith("."):
        raise ImportTargetError(f"expected 'module:function', got {dotted!r}")
    with import_paths(search):
        _forget_shadowed(module_name, search)
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ImportTargetError(f"cannot import module {module_name!r}: {exc}") from None
        except SyntaxError as exc:
            where = f"{exc.filename}:{exc.lineno}" if exc.filename else module_name
            raise ImportTargetError(f"syntax error in {where}: {exc.msg}") from None
        except Exception as exc:  # noqa: BLE001 - the user's module failed while importing
            raise ImportTargetError(
                f"importing module {module_name!r} raised {type(exc).__name__}: {exc}"
            ) from None
        except (SystemExit, KeyboardInterrupt, GeneratorExit) as exc:
            # a module that exits while imported must not end checkweigh with its own code
            did = (
                f"called sys.exit({exc.code!r})"
                if isinstance(exc, SystemExit)
                else f"raised {type(exc).__name__}"
            )
            raise ImportTargetError(f"importing module {module_name!r} {did}") from None
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ImportTargetError(f"module {module_name!r} has no attribute {attr!r}") from None
    return obj


def resolve_python_check(spec: PythonCheck, search: Sequence[Path] = ()) -> CheckLike:
    """Turn a :class:`PythonCheck` into something with ``evaluate(case)``.

    Raises:
        ImportTargetError: the target is missing, of the wrong kind, or rejects ``args``.
    """
    obj = load_object(spec.function, search)
    try:
        if isinstance(obj, FunctionCheck):
            return obj.bind(**spec.args)
        if inspect.isclass(obj):
            if not callable(getattr(obj, "evaluate", None)):
                raise ImportTargetError(f"{spec.function} is a class without an evaluate method")
            instance = obj(**spec.args)
            if not isinstance(instance, CheckLike):
                raise ImportTargetError(f"{spec.function} did not build a check")
            return instance
        if callable(getattr(obj, "evaluate", None)):
            if spec.args:
                raise ImportTargetError(f"{spec.function} is a check object; it takes no args")
            if not isinstance(obj, CheckLike):
                raise ImportTargetError(f"{spec.function} is not a check")
            return obj
        if callable(obj):
            return FunctionCheck(obj).bind(**spec.args)
    except TypeError as exc:
        raise ImportTargetError(
            f"{spec.function} does not accept args {spec.args}: {exc}"
        ) from None
    raise ImportTargetError(f"{spec.function} is not a function or a check class")
