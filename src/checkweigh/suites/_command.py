"""A command target's program, folder and environment, found from the suite's folder and
checkweigh's own environment (when the suite loads, so a mistake is a one-line error naming
the field, and again when a run starts)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from string import Template

from ..errors import CheckweighError
from ._targets import CommandTargetSpec
from ._text import shown


class CommandSpecError(CheckweighError, ValueError):
    """A command target that cannot run as written: ``loc`` is the field within ``target``."""

    def __init__(self, loc: tuple[str, ...], message: str) -> None:
        super().__init__(message)
        self.loc = loc
        self.message = message


@dataclass(frozen=True, slots=True)
class ResolvedCommand:
    """What to start for each call."""

    argv: tuple[str, ...]
    """The program (an absolute path) and its arguments."""
    cwd: Path
    """The folder it runs in."""
    env: dict[str, str]
    """Its whole environment: checkweigh's, with the spec's ``env`` over it."""


def resolve_command(
    spec: CommandTargetSpec, base: Path, environ: Mapping[str, str] | None = None
) -> ResolvedCommand:
    """Find the program, the folder and the environment ``spec`` names.

    Args:
        spec: the suite's ``target:`` block.
        base: the suite's folder (relative paths start there).
        environ: the environment to inherit and read ``$NAME`` from (default ``os.environ``).

    Raises:
        CommandSpecError: a variable that is not set, a folder or program not found, a
            program that is not executable.
    """
    environ = os.environ if environ is None else environ
    env = dict(environ)
    for name, value in spec.env.items():
        env[name] = _expand(name, value, environ)
    cwd = base if spec.cwd is None else base / spec.cwd
    if not cwd.is_dir():
        found = "not a folder" if cwd.exists() else "folder not found"
        raise CommandSpecError(("cwd",), f"{found}: {cwd}")
    program = spec.command[0]
    if "/" in program:
        path = Path(os.path.abspath(base / program))
        if not path.exists():
            raise CommandSpecError(("command",), f"program not found: {path}")
        if not path.is_file() or not os.access(path, os.X_OK):
            raise CommandSpecError(
                ("command",),
                f"program is not an executable file: {path} (chmod +x it, or name its "
                "interpreter first: [sh, script.sh])",
            )
    else:
        which = shutil.which(program, path=env.get("PATH", os.defpath))
        if which is None:
            local = (cwd / program).is_file() or (base / program).is_file()
            hint = f"; for the file in the suite's folder write ./{program}" if local else ""
            message = f"program {shown(program)} not found on PATH{hint}"
            raise CommandSpecError(("command",), message)
        path = Path(os.path.abspath(which))
    return ResolvedCommand((str(path), *spec.command[1:]), cwd.resolve(), env)


def _expand(name: str, value: str, environ: Mapping[str, str]) -> str:
    try:
        return Template(value).substitute(environ)
    except KeyError as exc:
        raise CommandSpecError(
            ("env", name), f"names ${exc.args[0]}, which is not set in the environment"
        ) from None
    except ValueError:
        raise CommandSpecError(
            ("env", name), "a '$' must start $NAME or ${NAME}; write $$ for a '$' itself"
        ) from None
