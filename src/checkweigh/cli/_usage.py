"""A command-line usage error (a bad flag value, an unknown option, a missing argument) as one
line: ``--repeat: expected an integer >= 1, got 0 (see 'checkweigh run --help')``."""

from __future__ import annotations

import re
from typing import Any

try:  # typer carries its own copy of click since 0.2x
    from typer._click.core import Context
    from typer._click.exceptions import (
        BadOptionUsage,
        BadParameter,
        MissingParameter,
        NoArgsIsHelpError,
        NoSuchOption,
        UsageError,
    )
except ImportError:  # pragma: no cover - an older typer, on click itself
    from click import Context  # type: ignore[no-redef,import-not-found,assignment,unused-ignore]
    from click.exceptions import (  # type: ignore[no-redef,import-not-found,assignment,unused-ignore]
        BadOptionUsage,
        BadParameter,
        MissingParameter,
        NoArgsIsHelpError,
        NoSuchOption,
        UsageError,
    )

from ..suites import inert, shown

__all__ = ["Context", "NoArgsIsHelpError", "UsageError", "usage_line"]

_NUMBER = re.compile(r"[-+]?[0-9_.]{1,40}([eE][-+]?[0-9]{1,4})?\Z")
_BOUNDS = {
    "greater_than_equal": ("ge", ">="),
    "greater_than": ("gt", ">"),
    "less_than_equal": ("le", "<="),
    "less_than": ("lt", "<"),
}
_KINDS = {
    "int_parsing": "an integer",
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_parsing": "a number",
    "float_type": "a number",
    "finite_number": "a finite number",
    "bool_parsing": "true or false",
}


def usage_line(exc: UsageError) -> str:
    """``FLAG: what was expected, got what`` and where to read more, on one line."""
    ctx = exc.ctx
    hint = ""
    if ctx is not None:  # named as the docs name it, however it was started (python -m, -c)
        names: list[str] = []  # the command's path below the program: `labels import`
        level = ctx
        while level.parent is not None:
            names.insert(0, level.info_name or "")
            level = level.parent
        command = " ".join(["checkweigh", *names])
        hint = f" (see '{command} --help')"
    if isinstance(exc, NoSuchOption):
        message = f"no such option {exc.option_name}"
        close = sorted(set(exc.possibilities or ()) - {"--help"})
        if close:
            message += f"; did you mean {' or '.join(close)}?"
        return inert(message) + hint
    if isinstance(exc, BadOptionUsage):
        message = _sentence(exc.message)
        if message.endswith("requires an argument"):
            message = "expected a value after it"
        return inert(f"{exc.option_name}: {message}") + hint
    if isinstance(exc, BadParameter):
        name = _name(exc.param)
        if isinstance(exc, MissingParameter):
            what = "argument" if _is_argument(exc.param) else "option"
            return inert(f"{name}: missing {what}") + hint
        return inert(f"{name}: {_expected(exc)}") + hint
    return inert(_sentence(exc.format_message())) + hint


def _is_argument(param: Any) -> bool:
    return getattr(param, "param_type_name", "") == "argument"


def _name(param: Any) -> str:
    if param is None:
        return "value"
    if _is_argument(param):
        return str(getattr(param, "metavar", None) or getattr(param, "name", "value")).upper()
    opts = [o for o in getattr(param, "opts", ()) if o.startswith("--")] or list(
        getattr(param, "opts", ()) or [getattr(param, "name", "value")]
    )
    return str(opts[0])


def _expected(exc: BadParameter) -> str:
    from pydantic import ValidationError  # only on this error path: not needed to start

    cause = exc.__cause__
    if not isinstance(cause, ValidationError) or not cause.errors():
        return _sentence(exc.message)
    err = cause.errors(include_url=False)[0]
    kind = err["type"]
    got = f", got {_given(err.get('input'))}"
    ctx = err.get("ctx") or {}
    if kind in _BOUNDS:
        key, op = _BOUNDS[kind]
        bound = ctx.get(key)
        noun = "an integer" if isinstance(bound, int) else "a number"
        return f"expected {noun} {op} {bound}{got}"
    if kind in _KINDS:
        return f"expected {_KINDS[kind]}{got}"
    if kind in ("enum", "literal_error"):
        return f"expected {ctx.get('expected')}{got}"
    return _sentence(err["msg"]) + got


def _given(value: object) -> str:
    """A flag's value as typed: bare when it is a plain number, quoted if not."""
    if isinstance(value, str) and _NUMBER.match(value):
        return value
    return shown(value)


def _sentence(text: str) -> str:
    """Click's ``Option '--x' requires an argument.`` as ``option '--x' requires an argument``."""
    text = " ".join(str(text).split()).rstrip(".")
    return text[:1].lower() + text[1:]
