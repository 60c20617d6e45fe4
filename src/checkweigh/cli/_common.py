"""What every command shares: the typer app, consoles, the --db option and exit codes."""

from __future__ import annotations

import os
import sys
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from ..errors import InputError

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
EXIT_INTERRUPTED = 130


def labelled(label: str, text: str) -> Text:
    """A red label and plain text: user text is never read as markup or emoji codes."""
    return Text.assemble((label, "bold red"), " ", text)


def fail_input(err: Console, exc: InputError) -> NoReturn:
    err.print(labelled("error:", exc.one_line()), soft_wrap=True)
    raise typer.Exit(EXIT_INPUT)
