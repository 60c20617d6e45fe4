"""A stored run's files: the JSON results, JUnit XML and Markdown summary (``--json``,
``--junit``, ``--markdown``), checked before a run and written after it."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..core import PassPolicy
from ..errors import InputError
from ..reports import write_json_report, write_junit, write_markdown
from ..runs import RunOutcome
from ..store import Store


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

    def files(self) -> Iterator[tuple[Path, str]]:
        """Each wanted file with its flag, in the order they are written.

        Raises:
            InputError: ``json_cases`` without a JSON file to put them in.
        """
        if self.json_cases and self.json_path is None:
            raise InputError(
                "the cases go in the JSON results; give --json FILE too", field="--json-cases"
            )
        for path, flag in (
            (self.json_path, "--json"),
            (self.junit, "--junit"),
            (self.markdown, "--markdown"),
        ):
            if path is not None:
                yield path, flag


def write_exports(
    store: Store, outcome: RunOutcome, exports: Exports, say: Callable[[str], None]
) -> None:
    """Write the wanted files of the stored run ``outcome``, calling ``say`` with one line as
    each is written.

    Raises:
        InputError: a file cannot be written (naming its flag; the stored run is kept).
    """
    wanted = list(exports.files())
    if not wanted:
        return
    info = store.get_run(outcome.run_id)
    policy = PassPolicy.from_snapshot(info.config.get("thresholds"))
    for path, flag in wanted:
        try:
            if flag == "--json":
                n = write_json_report(
                    path,
                    run=info.model_dump(mode="json", exclude={"summary"}),
                    summary=outcome.summary,
                    results=store.iter_results(outcome.run_id, with_cases=exports.json_cases),
                    policy=policy,
                    cases=exports.json_cases,
                )
                say(f"wrote {n} result(s) to {path}")
            elif flag == "--junit":
                n = write_junit(
                    path,
                    suite=info.suite,
                    run_id=info.id,
                    policy=policy,
                    summary=outcome.summary,
                    results=store.iter_results(outcome.run_id),
                    repeats=info.repeat > 1,
                )
                say(f"wrote {n} test case(s) to {path}")
            else:
                write_markdown(
                    path,
                    suite=info.suite,
                    run_id=info.id,
                    status=outcome.status.value,
                    summary=outcome.summary,
                )
                say(f"wrote the Markdown summary to {path}")
        except OSError as exc:
            raise InputError(
                f"cannot write {path}: {exc.strerror or exc}; the run is stored as "
                f"{outcome.run_id}",
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
