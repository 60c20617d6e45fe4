"""``checkweigh import FORMAT FILE... --out cases.jsonl``: agent logs to a cases file.

The logs are streamed (memory stays flat however large they are) and the cases file is
written beside its final name and renamed into place at the end, so a failure or Ctrl-C
leaves no half-written file.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from ..errors import InputError
from ..importers import BUILTIN_FORMATS
from ..reports import plain
from ._common import (
    EXIT_INTERRUPTED,
    OnBadRecordOption,
    app,
    bad_record_choice,
    check_writable,
    consoles,
    fail_input,
    labelled,
)

if TYPE_CHECKING:
    from ..importers import ImportContext

SHOWN_SKIPPED = 10
"""How many skipped records the command lists one by one."""


@app.command("import")
def import_logs(
    fmt: Annotated[
        str,
        typer.Argument(
            metavar="FORMAT",
            help=f"The logs' format: {', '.join(BUILTIN_FORMATS)}, or a plugin's "
            "(entry-point group checkweigh.formats).",
            show_default=False,
        ),
    ],
    files: Annotated[
        list[Path],
        typer.Argument(
            metavar="FILE...", help="Log files (JSON, a JSON list or JSONL).", show_default=False
        ),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="The cases file to write (.jsonl).", show_default=False),
    ],
    on_bad_record: OnBadRecordOption = None,
    mapping: Annotated[
        Path | None,
        typer.Option(
            "--mapping",
            help="Field mapping (YAML) of the mapping format: where each record keeps the case.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Convert agent logs in FORMAT to a checkweigh cases file (checkweigh run reads it)."""
    from ..importers import ImportContext, get_format, import_lines

    stdout, err = consoles()
    ctx = ImportContext()
    try:
        ctx.on_bad_record = bad_record_choice(on_bad_record) or "fail"
        options = _options(fmt, mapping)
        _check_out(out, files, mapping)
        lines = import_lines(get_format(fmt, **options), files, ctx)
        with _interruptible():
            _write_atomically(out, lines, ctx)
    except InputError as exc:
        fail_input(err, exc)
    except KeyboardInterrupt:
        err.print(labelled("interrupted:", f"nothing written to {out}"), soft_wrap=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    _report(stdout, ctx, len(files), out)


def _options(fmt: str, mapping: Path | None) -> dict[str, Any]:
    """The format's options; a format that is not registered, or a mapping where it does not
    belong, is the user's mistake."""
    from ..importers import FORMATS
    from ..suites import load_mapping

    if fmt not in FORMATS:
        raise InputError(
            f"unknown log format {fmt!r}; expected one of {', '.join(FORMATS.names())}",
            field="FORMAT",
        )
    if fmt == "mapping":
        if mapping is None:
            raise InputError(
                "the mapping format needs --mapping MAPPING.yaml (where each record keeps the "
                "case: id, messages, final_state...)",
                field="--mapping",
            )
        return {"mapping": load_mapping(mapping)}
    if mapping is not None:
        raise InputError(f"--mapping applies to the mapping format, not {fmt}", field="--mapping")
    return {}


def _check_out(out: Path, files: Iterable[Path], mapping: Path | None) -> None:
    if out.suffix not in (".jsonl", ".ndjson"):
        raise InputError(
            "expected a .jsonl file name (checkweigh run reads cases from JSONL), "
            f"got {out.name!r}",
            field="--out",
        )
    if out.exists() and not out.is_file():
        raise InputError(f"cannot write {out}: it is not a regular file", field="--out")
    inputs: dict[str, Path | None] = {f"the log file {f}": f for f in files}
    inputs["the mapping file"] = mapping
    check_writable(out, "--out", inputs)


def _write_atomically(out: Path, lines: Iterator[bytes], ctx: ImportContext) -> None:
    """Write the cases' JSONL ``lines`` to a temporary file beside ``out`` and rename it into place;
    on any failure (or no case at all) remove it and write nothing.

    Raises:
        InputError: a bad record (under ``fail``), an unreadable file, no case, a full disk.
    """
    folder = out.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=folder, prefix=f".{out.name}.", suffix=".part")
    except OSError as exc:
        raise InputError(f"cannot write {out}: {exc.strerror or exc}", field="--out") from None
    temp = Path(name)
    try:
        with os.fdopen(fd, "wb") as fh:
            for line in lines:
                fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
        if ctx.cases == 0:
            raise InputError(_no_cases(ctx), field="FILE")
        umask = os.umask(0)
        os.umask(umask)
        temp.chmod(0o666 & ~umask)  # as an ordinary new file would be, not mkstemp's 0600
        temp.replace(out)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise InputError(f"cannot write {out}: {exc.strerror or exc}", field="--out") from None
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def _no_cases(ctx: ImportContext) -> str:
    if ctx.records == 0:
        return "the log files hold no records; nothing written"
    if not ctx.skipped_total:  # good input that holds no case (OTel traces without GenAI)
        why = "; ".join(f"{n} {why}" for why, n in ctx.without_case.items())
        return f"no case in {ctx.records} record(s): {why or 'none holds one'}; nothing written"
    first = ctx.skipped[0].one_line() if ctx.skipped else ""
    return f"no case: all {ctx.records} record(s) were bad (first: {first}); nothing written"


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP raise KeyboardInterrupt while writing, so the temporary file
    is removed (outside a run they end the process at once)."""

    def interrupt(_signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signums = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    saved = {s: signal.signal(s, interrupt) for s in signums}
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


def _report(out: Console, ctx: ImportContext, files: int, path: Path) -> None:
    out.print(
        plain(
            f"read {ctx.records} record(s) from {files} file(s); wrote {ctx.cases} case(s) to "
            f"{path}"
        ),
        soft_wrap=True,
    )
    for why, n in ctx.without_case.items():
        out.print(plain(f"{n} {why}: no case made"), soft_wrap=True)
    for warning in ctx.warnings[:SHOWN_SKIPPED]:
        out.print(plain(f"note: {warning.one_line()}"), soft_wrap=True)
    if ctx.warnings_total > SHOWN_SKIPPED:
        out.print(plain(f"note: ... and {ctx.warnings_total - SHOWN_SKIPPED} more"), soft_wrap=True)
    if not ctx.skipped_total:
        return
    out.print(plain(f"skipped {ctx.skipped_total} bad record(s):"), soft_wrap=True)
    for bad in ctx.skipped[:SHOWN_SKIPPED]:
        out.print(plain(f"  {bad.one_line()}"), soft_wrap=True)
    if ctx.skipped_total > SHOWN_SKIPPED:
        out.print(plain(f"  ... and {ctx.skipped_total - SHOWN_SKIPPED} more"), soft_wrap=True)
