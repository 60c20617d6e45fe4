"""Running a suite as ``checkweigh run`` is asked: a :class:`RunRequest` (the engine's
:class:`~checkweigh.runs.RunOptions` plus where the results go and which files to write) run
through the one engine, :func:`checkweigh.runs.run`, which checks it in one place and one
order, so the CLI and any other caller refuse the same request with the same one-line message
naming the flag.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..core import CaseResult, PassPolicy
from ..errors import InputError
from ..judges import CachedJudge
from ..runs import (
    JudgeSetup,
    RunOptions,
    RunOutcome,
    RunReport,
    RunStart,
    StopToken,
    Thresholds,
    graded_weights,
    make_cached_judge,
    parse_prices,
    plan_run,
    run,
)
from ..runs.executors import Executor
from ..store import Store, database_file, in_memory
from ..suites import Suite
from ._exports import Exports, check_writable

JudgeRequest = JudgeSetup
"""The judge of a run (``--judge`` and the ``--judge-*`` flags): :class:`JudgeSetup`."""

__all__ = [  # re-exported here, where they were first defined
    "JudgeRequest",
    "Thresholds",
    "graded_weights",
    "make_cached_judge",
    "parse_prices",
]


class RunRequest(RunOptions):
    """Everything that describes one run of a suite, as ``checkweigh run`` takes it: the
    engine's options, the suite file, the store and the files to write afterwards."""

    suite: Path
    """The suite file (YAML)."""
    db: str | None = None
    """SQLAlchemy URL of the store (None: ``$CHECKWEIGH_DB`` or the default file)."""
    exports: Exports = Exports()
    """Files to write once the run is stored."""
    screen: bool = True
    """As ``checkweigh run``: every case is validated before the run is created."""

    def options(self) -> RunOptions:
        """The engine's part of the request."""
        return RunOptions.model_validate(
            {name: getattr(self, name) for name in RunOptions.model_fields}
        )


def run_request(
    request: RunRequest,
    *,
    on_start: Callable[[RunStart], None] | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    stop: StopToken | None = None,
    on_note: Callable[[str], None] | None = None,
) -> RunReport:
    """Run ``request`` through the engine (:func:`checkweigh.runs.run`): its options checked,
    then the database and the export files (before the store is opened), then each result
    stored as it finishes. The results are read from the store, not kept in the report.

    Raises:
        InputError: bad input, in one line naming the flag (or the file) and what was expected.
        StoreError: the database cannot be opened or written.
        RunStopped: the run ended early (its finished cases stored, the run incomplete).
    """
    return run(
        request.suite,
        request.options(),
        store=lambda suite: open_store(request, suite),
        on_start=on_start,
        on_result=on_result,
        on_progress=on_progress,
        stop=stop,
        keep_results=False,
        on_note=on_note,
    )


def open_store(request: RunRequest, suite: Suite) -> Store:
    """The store ``request`` names, after checking that it is a file (not memory) and that
    no export file would overwrite the database, the suite or its cases.

    Raises:
        InputError: naming ``--db`` or the export's flag.
        StoreError: the database cannot be opened.
    """
    if in_memory(request.db):
        # e.g. sqlite:///$DB with $DB unset: "stored", then gone when the command ends
        raise InputError(
            f"{request.db or os.environ.get('CHECKWEIGH_DB')!r} is an in-memory database: the "
            "run would be lost when the command ends; give a file, e.g. sqlite:///results.db",
            field="--db",
        )
    inputs = {
        "the database": database_file(request.db),
        "the suite": request.suite,
        "the cases file": suite.cases_path,
    }
    for path, flag in request.exports.files():
        check_writable(path, flag, inputs)
    return Store(request.db)


@dataclass
class PreparedRun:
    """Deprecated with :func:`prepare_run`: a checked :class:`RunRequest` and its open store."""

    request: RunRequest
    suite: Suite
    judge: CachedJudge | None
    graded_weights: dict[str, float]
    policy: PassPolicy
    total: int
    store: Store
    executor: Executor | None = None
    screened: bool = True


def prepare_run(request: RunRequest) -> PreparedRun:
    """Deprecated: use :func:`run_request` (or :func:`checkweigh.run` with
    :meth:`RunRequest.options`), which checks the request in the same order. Checks
    ``request`` and opens its store, without running it."""
    warnings.warn(
        "checkweigh.service.prepare_run() is deprecated and will be removed in the next "
        "release; use checkweigh.service.run_request()",
        DeprecationWarning,
        stacklevel=2,
    )
    p = plan_run(request.suite, request.options(), judge=None, cases_given=False)
    store = open_store(request, p.suite)
    judge = p.judge if isinstance(p.judge, CachedJudge) else None
    total = (
        p.total
        if p.total is not None
        else p.suite.cases.count() * (request.repeat or p.suite.repeats)
    )
    return PreparedRun(
        request, p.suite, judge, p.graded_weights, p.policy, total, store, p.executor, p.screened
    )


def run_prepared(
    prepared: PreparedRun,
    *,
    on_result: Callable[[CaseResult], None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    stop: StopToken | None = None,
) -> RunOutcome:
    """Deprecated: use :func:`run_request`. Runs a request checked by :func:`prepare_run`
    (checking it again: the engine has one path) into its store."""
    warnings.warn(
        "checkweigh.service.run_prepared() is deprecated and will be removed in the next "
        "release; use checkweigh.service.run_request()",
        DeprecationWarning,
        stacklevel=2,
    )
    report = run(
        prepared.suite,
        prepared.request.options(),
        store=prepared.store,
        on_result=on_result,
        on_progress=on_progress,
        stop=stop,
        keep_results=False,
    )
    return report.outcome
