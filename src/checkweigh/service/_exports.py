"""A stored run's files: the JSON results, JUnit XML and Markdown summary (``--json``,
``--junit``, ``--markdown``) and any registered output (``--output NAME=PATH``), checked
before a run and written after it."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..core import PassPolicy
from ..errors import InputError
from ..runs import RunOutcome
from ..store import Store
from ._outputs import OUTPUTS, Output, StoredReport, get_output


class Exports(BaseModel):
    """The files to write once a run is stored (None: not wanted)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    json_path: Path | None = None
    """The full results as JSON (``--json``; what ``POST /api/runs`` uploads)."""
    json_cases: bool = False
    """Each result in the JSON carries the case it evaluated (``--json-cases``): bigger, and
    a server it is uploaded to shows the conversations."""
    junit: Path | None = None
    """A JUnit XML report (``--junit``)."""
    markdown: Path | None = None
    """A Markdown summary for a pull-request comment or job summary (``--markdown``)."""
    outputs: tuple[tuple[str, Path], ...] = ()
    """Any registered output by name, each with its file (``--output NAME=PATH``)."""

    def files(self) -> Iterator[tuple[Path, str]]:
        """Each wanted file with its flag, in the order they are written.

        Raises:
            InputError: ``json_cases`` without a JSON file to put them in, or an unknown
                output name.
            PluginError: an output's plugin is broken.
        """
        for _, path, flag in self.wanted():
            yield path, flag

    def wanted(self) -> Iterator[tuple[Output, Path, str]]:
        """Each wanted output with its file and the flag that asked for it, in the order
        they are written (the built-in flags first, then ``--output`` in the order given).

        Raises:
            InputError: ``json_cases`` without a JSON file to put them in, or an unknown
                output name.
            PluginError: an output's plugin is broken.
        """
        if self.json_cases and self.json_path is None and "json" not in dict(self.outputs):
            raise InputError(
                "the cases go in the JSON results; give --json FILE too", field="--json-cases"
            )
        for path, name in (
            (self.json_path, "json"),
            (self.junit, "junit"),
            (self.markdown, "markdown"),
        ):
            if path is not None:
                yield get_output(name), path, f"--{name}"
        for name, path in self.outputs:
            yield get_output(name), path, "--output"


def parse_outputs(values: Iterable[str]) -> tuple[tuple[str, Path], ...]:
    """``--output NAME=PATH`` values as (name, path) pairs (names are checked when the
    outputs are looked up, before the run).

    Raises:
        InputError: a value not of that form.
    """
    pairs: list[tuple[str, Path]] = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name.strip() or not path:
            raise InputError(
                f"expected NAME=PATH with NAME one of {', '.join(OUTPUTS.names())}, got {value!r}",
                field="--output",
            )
        pairs.append((name.strip(), Path(path)))
    return tuple(pairs)


def write_exports(
    store: Store, outcome: RunOutcome, exports: Exports, say: Callable[[str], None]
) -> None:
    """Write the wanted files of the stored run ``outcome``, calling ``say`` with one line as
    each is written.

    Raises:
        InputError: a file cannot be written, or a plugin's output failed (naming its flag;
            the stored run is kept).
    """
    wanted = list(exports.wanted())
    if not wanted:
        return
    info = store.get_run(outcome.run_id)
    report = StoredReport(
        info=info,
        status=outcome.status,
        summary=outcome.summary,
        policy=PassPolicy.from_snapshot(info.config.get("thresholds")),
        with_cases=exports.json_cases,
        read_results=lambda cases: store.iter_results(outcome.run_id, with_cases=cases),
    )
    builtin = OUTPUTS.builtin_names()
    for output, path, flag in wanted:
        try:
            say(output.write(report, path))
        except OSError as exc:
            raise InputError(
                f"cannot write {path}: {exc.strerror or exc}; the run is stored as "
                f"{outcome.run_id}",
                field=flag,
            ) from None
        except Exception as exc:
            if output.name in builtin:
                raise  # a bug of checkweigh's own: the main loop reports it as one
            raise InputError(
                f"output {output.name!r} failed writing {path}: {type(exc).__name__}: {exc}; "
                f"the run is stored as {outcome.run_id}",
                field=flag,
            ) from None


def check_writable(path: Path, flag: str, inputs: Mapping[str, Path | None] | None = None) -> None:
    """Fail before the run, not after it, when an output file cannot be written or would
    overwrite one of ``inputs`` (what it is -> its path: the database, the suite...).

    Raises:
        InputError: naming ``flag`` and why.
    """
    for what, used in (inputs or {}).items():
        if used is not None and path.resolve() == used.resolve():
            raise InputError(
                f"cannot write {path}: it is {what}; give another file name", field=flag
            )
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if path.is_dir():
        raise InputError(f"cannot write {path}: it is a folder", field=flag)
    if not folder.is_dir():
        raise InputError(f"cannot write {path}: {folder} is a file, not a folder", field=flag)
    if not os.access(folder, os.W_OK):
        raise InputError(f"cannot write {path}: {folder} is not a writable folder", field=flag)
    if path.is_fifo():
        _check_reader(path, flag)


_HELD_OPEN: list[int] = []
"""Named pipes checked for a reader, held open until the process ends: closing the probe would
hand the reader its end of file before the report is written."""


def _check_reader(path: Path, flag: str) -> None:
    """A named pipe nobody reads would block the report's write forever, after the run."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise InputError(
                f"cannot write {path}: it is a named pipe that nothing reads", field=flag
            ) from None
        raise InputError(f"cannot write {path}: {exc.strerror or exc}", field=flag) from None
    _HELD_OPEN.append(fd)
