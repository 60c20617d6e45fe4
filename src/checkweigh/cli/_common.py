"""What every command shares: the typer app, consoles, the --db option and exit codes."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TextIO

import typer
from rich.console import Console
from rich.text import Text
from typer.core import TyperGroup

from ..errors import InputError
from ..reports import clean
from ._usage import Context, NoArgsIsHelpError, UsageError, usage_line

if TYPE_CHECKING:
    from ..core import RunSummary
    from ..importers import OnBadRecord
    from ..store import RunInfo


class _OneLineUsage(TyperGroup):
    """The app's command group: a usage error in any command (a bad flag value, an unknown
    option, a missing argument) is one line on stderr and exit 2, not click's usage box."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: Context | None = None,
        **extra: Any,
    ) -> Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except UsageError as exc:
            _usage_exit(exc)

    def invoke(self, ctx: Context) -> Any:
        try:
            return super().invoke(ctx)  # parses the command's own arguments, then runs it
        except UsageError as exc:
            _usage_exit(exc)


def _usage_exit(exc: UsageError) -> NoReturn:
    if isinstance(exc, NoArgsIsHelpError):  # bare `checkweigh`: the help, as before
        raise exc
    Console(stderr=True).print(labelled("error:", usage_line(exc)), soft_wrap=True)
    raise typer.Exit(EXIT_INPUT)


app = typer.Typer(
    name="checkweigh",
    help="Evaluate LLM agents with binary weighted checks.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    cls=_OneLineUsage,
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("checkweigh")
        except PackageNotFoundError:  # run from a source tree that is not installed
            from .. import __version__ as number
        typer.echo(f"checkweigh {number}")
        raise typer.Exit(0)


@app.callback()
def _root(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Evaluate LLM agents with binary weighted checks."""


def consoles() -> tuple[Console, Console]:
    """Fresh stdout and stderr consoles, so the width follows the current terminal/$COLUMNS.

    Output that is not a terminal (CI logs, files) gets 120 columns unless $COLUMNS says so.
    """
    width = None
    if not sys.stdout.isatty() and "COLUMNS" not in os.environ:
        width = 120
    # bound to the streams of now, not read from sys.stdout/sys.stderr at each write: while
    # a run executes those are the user code's (see user_output_inert)
    return Console(width=width, file=sys.stdout), Console(stderr=True, file=sys.stderr)


class _InertStream(io.TextIOBase):
    """A text stream that writes to another with control characters shown escaped."""

    def __init__(self, raw: TextIO) -> None:
        super().__init__()
        self._raw = raw

    @property
    def encoding(self) -> str:  # type: ignore[override]  # read-only in TextIOBase's stub
        return getattr(self._raw, "encoding", "utf-8")

    def write(self, text: str) -> int:
        self._raw.write(clean(text, lines=True))
        return len(text)

    def flush(self) -> None:
        self._raw.flush()

    def isatty(self) -> bool:
        return self._raw.isatty()


class QuietOnClosedPipe(io.TextIOBase):
    """A stream that goes quiet once its reader has gone (``checkweigh run ... | head -1``)
    or its descriptor was closed (by an agent): the command still stores, exports and exits
    with the code its gates decide, instead of click's exit 1 (which means a failed gate) or
    an internal error on the first write."""

    def __init__(self, raw: TextIO) -> None:
        super().__init__()
        self._raw = raw
        self._gone = False

    @property
    def encoding(self) -> str:  # type: ignore[override]  # read-only in TextIOBase's stub
        return getattr(self._raw, "encoding", "utf-8")

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                self._raw.write(text)
            except (OSError, ValueError):  # EPIPE, EBADF; ValueError: a closed file object
                self._gone = True
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._raw.flush()
            except (OSError, ValueError):
                self._gone = True

    def isatty(self) -> bool:
        return self._raw.isatty()

    def fileno(self) -> int:
        return self._raw.fileno()


@contextmanager
def user_output_inert() -> Iterator[None]:
    """While agents and checks run, what they print to ``sys.stdout`` and ``sys.stderr``
    reaches the terminal with its control characters escaped: an agent echoing a model's or a
    web page's text cannot retitle, clear or link the user's terminal. Writes that bypass
    ``sys.stdout`` (``os.write(1, ...)``, a child process) are the agent's own."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _InertStream(saved[0]), _InertStream(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="SQLAlchemy URL of the results store \\[env: CHECKWEIGH_DB].",
        show_default=False,
    ),
]

OnBadRecordOption = Annotated[
    str | None,
    typer.Option(
        "--on-bad-record",
        help="A log record that cannot be read: fail (stop, exit 2) or skip it and report it "
        "(default: fail, or the suite's on_bad_record).",
        show_default=False,
    ),
]


def check_writable(path: Path, flag: str, inputs: Mapping[str, Path | None] | None = None) -> None:
    """:func:`checkweigh.service.check_writable`, imported when a command first checks a file
    (the service package is not needed to parse flags or print help)."""
    from ..service import check_writable as check

    check(path, flag, inputs)


def bad_record_choice(value: str | None) -> OnBadRecord | None:
    """The ``--on-bad-record`` flag's value, checked."""
    if value is None:
        return None
    if value == "skip":
        return "skip"
    if value == "fail":
        return "fail"
    raise InputError(f"expected skip or fail, got {value!r}", field="--on-bad-record")


EXIT_GATES_FAILED = 1
EXIT_INPUT = 2
EXIT_INTERNAL = 3
"""An unexpected error inside checkweigh: a bug to report."""
EXIT_NOT_DECIDED = 4
"""The run is complete but a gate could not be decided: it rests on a judge check below its
``trust:`` bar, or reads a calibrated rate whose interval holds its bound."""
EXIT_INTERRUPTED = 130


def gates_exit(summary: RunSummary) -> int:
    """The exit code of a complete run's gates: 0 passed, 1 failed, 4 not decided."""
    passed = summary.gates_passed
    if passed:
        return 0
    if passed is None and summary.gates_not_decided is None:
        return EXIT_NOT_DECIDED
    return EXIT_GATES_FAILED


def labelled(label: str, text: str) -> Text:
    """A red label and plain text: user text is never read as markup or emoji codes, and its
    control characters are shown escaped."""
    return Text.assemble((label, "bold red"), " ", clean(text))


def fail_input(err: Console, exc: InputError) -> NoReturn:
    err.print(labelled("error:", exc.one_line()), soft_wrap=True)
    raise typer.Exit(EXIT_INPUT)


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
