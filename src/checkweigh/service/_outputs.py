"""Report outputs: the files a stored run is written to, one registry of them.

An output is one object with a ``name``, the ``help`` shown by ``checkweigh plugins``, the
``flag`` a built-in has of its own (``--json``) and ``write(report, path)``, which writes one
:class:`StoredReport` to ``path`` and returns the line said about it. The built-ins (``json``,
``junit``, ``markdown``) are the table of :data:`OUTPUTS`; an installed package adds its own
through the ``checkweigh.outputs`` entry-point group, and ``--output NAME=PATH`` reaches any.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..core import CaseResult, PassPolicy, RunSummary
from ..plugins import PluginError, Registry
from ..reports import write_json_report, write_junit, write_markdown
from ..store import RunInfo, RunStatus


@dataclass(frozen=True)
class StoredReport:
    """One stored run as every output reads it: read once from the store, its results
    streamed from there on demand (a large run is never held in memory)."""

    info: RunInfo
    """The stored run: its id, suite, repeats and configuration snapshot."""
    status: RunStatus
    """How it ended: complete or incomplete."""
    summary: RunSummary
    """Its aggregates: rubrics, metrics, gates."""
    policy: PassPolicy
    """The pass policy it was run with (each case's passed/failed/errored)."""
    with_cases: bool
    """Whether results should carry the case each evaluated (``--json-cases``)."""
    read_results: Callable[[bool], Iterator[CaseResult]]
    """The store's stream of the run's results, in case-then-repeat order; the argument asks
    for each result's case. Read it through :meth:`results`."""

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self.info.id

    @property
    def suite(self) -> str:
        """The suite's name."""
        return self.info.suite

    def results(self, *, with_cases: bool | None = None) -> Iterator[CaseResult]:
        """The run's results, streamed afresh on each call (with their cases when
        ``with_cases``, default :attr:`with_cases`)."""
        return self.read_results(self.with_cases if with_cases is None else with_cases)


@runtime_checkable
class Output(Protocol):
    """A report output: how one stored run is written to one file.

    A plugin registers a class (instantiated without arguments) or an instance in the
    ``checkweigh.outputs`` entry-point group; the entry's name is its ``name``.
    """

    name: str
    """What ``--output NAME=PATH`` calls it."""
    help: str
    """One line saying what the file holds."""
    flag: str | None
    """The flag of its own a built-in has (``--json``); None: reached by ``--output``."""

    def write(self, report: StoredReport, path: Path) -> str:
        """Write ``report`` to ``path`` and return the line to say about it.

        Raises:
            OSError: the file cannot be written (reported naming the flag; the run is kept).
        """
        ...


class JsonOutput:
    """The full results as JSON (what ``POST /api/runs`` uploads)."""

    name = "json"
    help = "the full results as JSON (what a server's POST /api/runs uploads)"
    flag: str | None = "--json"

    def write(self, report: StoredReport, path: Path) -> str:
        """Every result, the summary and the run's configuration."""
        n = write_json_report(
            path,
            run=report.info.model_dump(mode="json", exclude={"summary"}),
            summary=report.summary,
            results=report.results(),
            policy=report.policy,
            cases=report.with_cases,
        )
        return f"wrote {n} result(s) to {path}"


class JunitOutput:
    """A JUnit XML report: one test case per execution, one per gate."""

    name = "junit"
    help = "a JUnit XML report for CI"
    flag: str | None = "--junit"

    def write(self, report: StoredReport, path: Path) -> str:
        """One test case per execution and per gate."""
        n = write_junit(
            path,
            suite=report.suite,
            run_id=report.run_id,
            policy=report.policy,
            summary=report.summary,
            results=report.results(with_cases=False),
            repeats=report.info.repeat > 1,
        )
        return f"wrote {n} test case(s) to {path}"


class MarkdownOutput:
    """A Markdown summary for a pull-request comment or a job summary."""

    name = "markdown"
    help = "a Markdown summary (pull-request comment, job summary)"
    flag: str | None = "--markdown"

    def write(self, report: StoredReport, path: Path) -> str:
        """The summary: rubrics, metrics and gates."""
        write_markdown(
            path,
            suite=report.suite,
            run_id=report.run_id,
            status=report.status.value,
            summary=report.summary,
        )
        return f"wrote the Markdown summary to {path}"


def _output(value: object) -> Output:
    """A plugin's entry as an output: an instance, or a class made with no arguments."""
    if isinstance(value, type):
        cls = value
        try:
            value = cls()
        except Exception as exc:  # noqa: BLE001 - a broken plugin: named by the registry
            raise TypeError(f"{cls.__qualname__}() failed: {type(exc).__name__}: {exc}") from None
    missing = [a for a in ("name", "help", "write") if not hasattr(value, a)]
    if missing or not callable(getattr(value, "write", None)):
        raise TypeError(f"an output needs name, help and write(report, path); {value!r} has not")
    return value  # type: ignore[return-value]  # checked above; `flag` may be left out


OUTPUTS: Registry[Output] = Registry(
    "outputs",
    {
        "json": "._outputs:JsonOutput",
        "junit": "._outputs:JunitOutput",
        "markdown": "._outputs:MarkdownOutput",
    },
    package=__package__ or "checkweigh.service",
    label="output",
    accept=_output,
)
"""Every report output by name: the built-ins' one table, and the installed plugins'."""


def get_output(name: str, *, field: str | None = "--output") -> Output:
    """The output called ``name``.

    Raises:
        InputError: no such output (listing the known ones).
        PluginError: its plugin is broken, or gives another name than its entry point's.
    """
    output = OUTPUTS.get(name, field=field)
    declared = getattr(output, "name", None)
    if declared != name:
        raise PluginError(
            f"output {name!r} ({OUTPUTS.group}) is named {declared!r}: the entry point's "
            "name and the output's `name` must be the same"
        )
    return output
