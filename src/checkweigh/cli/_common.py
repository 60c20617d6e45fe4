"""What every command shares: the typer app, consoles, the --db option and exit codes."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from ..errors import InputError
from ..reports import clean
from ..store import RunInfo

app = typer.Typer(
    name="checkweigh",
    help="Evaluate LLM agents with binary weighted checks.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def consoles() -> tuple[Console, Console]:
    """Fresh stdout and stderr consoles, so the width follows the current terminal/$COLUMNS.

    Output that is not a terminal (CI logs, files) gets 120 columns unless $COLUMNS says so.
    """
    width = None
    if not sys.stdout.isatty() and "COLUMNS" not in os.environ:
        width = 120
    return Console(width=width), Console(stderr=True)


DbOption = Annotated[
    str | None,
    typer.Option(
        "--db", help="SQLAlchemy URL of the results store [env: CHECKWEIGH_DB].", show_default=False
    ),
]

EXIT_GATES_FAILED = 1
EXIT_INPUT = 2
EXIT_INTERNAL = 3
"""An unexpected error inside checkweigh: a bug to report."""
EXIT_INTERRUPTED = 130


def labelled(label: str, text: str) -> Text:
    """A red label and plain text: user text is never read as markup or emoji codes, and its
    control characters are shown escaped."""
    return Text.assemble((label, "bold red"), " ", clean(text))


def fail_input(err: Console, exc: InputError) -> NoReturn:
    err.print(labelled("error:", exc.one_line()), soft_wrap=True)
    raise typer.Exit(EXIT_INPUT)


def check_writable(path: Path, flag: str) -> None:
    """Fail before the run, not after it, when an output file cannot be written."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if path.is_dir() or not os.access(folder, os.W_OK) or not folder.is_dir():
        raise InputError(f"cannot write {path}: {folder} is not a writable folder", field=flag)


def warn_abandoned(err: Console, info: RunInfo) -> None:
    """Say so when a run's process died before finishing it."""
    if info.abandoned:
        err.print(
            labelled(
                "warning:",
                f"run {info.id} was abandoned: its process died before finishing it; it keeps "
                f"{info.executions} stored execution(s) and its summary was rebuilt from them",
            ),
            soft_wrap=True,
        )
