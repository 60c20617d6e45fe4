"""Where ``checkweigh compare`` finds its two runs: in the store (an id, an id prefix, latest,
previous) or in run exports (``--baseline`` / ``--candidate``, the files ``run --json``
writes), so that a CI job compares its run with the one kept from the main branch without the
database that run was stored in."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from ..core import CaseResult, CheckCalibration, JudgeSplit, PassPolicy
from ..errors import InputError
from ..reports import plain, read_run_file
from ..store import RunInfo, Store, calibrate_run


@dataclass(frozen=True, slots=True)
class Side:
    """One of the two runs, wherever it was read from."""

    id: str
    suite: str
    policy: PassPolicy
    """Its snapshotted thresholds, which decide its cases."""
    results: Iterable[CaseResult]
    info: RunInfo | None = None
    """The stored run (None when it was read from a file)."""
    file: Path | None = None
    """The export it was read from (None when it is stored)."""
    config: Mapping[str, Any] = field(default_factory=dict)
    """Its configuration snapshot: how it was judged."""
    store: Store | None = None
    """The store it was read from (None for a file)."""

    def calibration(self) -> list[CheckCalibration]:
        """Its judge checks against the store's labels as they stand now (none for a file:
        an export carries no labels)."""
        if self.store is None or self.info is None:
            return []
        return calibrate_run(self.store, self.info)


def _stored(store: Store, ref: str, argument: str) -> Side:
    """The run ``ref`` names; an error names the argument (BASE or CANDIDATE), not RUN."""
    try:
        info = store.get_run(ref)
    except InputError as exc:
        if exc.field == "RUN":
            exc.field = argument
        raise
    return Side(
        id=info.id,
        suite=info.suite,
        policy=PassPolicy.from_snapshot(info.config.get("thresholds")),
        results=store.iter_results(info.id),
        info=info,
        config=info.config,
        store=store,
    )


def _exported(path: Path) -> Side:
    run = read_run_file(path)
    return Side(run.id, run.suite, run.policy, run.results, file=path, config=run.config)


def _latest_of(store: Store, suite: str) -> Side:
    # an agent's run: a rejudge (compare --rejudge) is found by its id only, as for latest
    runs = [r for r in store.list_runs(limit=50, suite=suite) if not r.config.get("rejudge")]
    if not runs:
        raise InputError(
            f"no run of suite {suite!r} (the baseline's) in {store.safe_url}; give the CANDIDATE "
            "run id or --candidate FILE",
            field="CANDIDATE",
        )
    return _stored(store, runs[0].id, "CANDIDATE")


def resolve(
    refs: list[str], baseline: Path | None, candidate: Path | None, db: str | None
) -> tuple[Side, Side]:
    """The base and candidate runs from the positional ``refs`` and the two file options.

    Without ``--baseline`` the first ref is BASE; the candidate is ``--candidate``, else the
    next ref, else (with ``--baseline``) the latest run of the baseline's suite in ``db``.
    The store is opened only when a run is read from it.

    Raises:
        InputError: a missing or extra run argument, an unknown run, a bad export, or an
            export of another suite than the run it is compared with.
    """
    refs = list(refs)
    wanted = (baseline is None) + (candidate is None)
    if len(refs) > wanted:  # the command line takes two at most: a file option was given
        given = " and ".join(
            f"--{n}" for n, f in (("baseline", baseline), ("candidate", candidate)) if f
        )
        raise InputError(
            f"expected {wanted} run id(s) with {given}, got {len(refs)}: {' '.join(refs)}",
            field="CANDIDATE",
        )
    if baseline is None and not refs:
        raise InputError("missing: give a run id, or --baseline FILE", field="BASE")
    if baseline is None and candidate is None and len(refs) < 2:
        raise InputError("missing argument; give a run id, or --candidate FILE", field="CANDIDATE")
    store: Store | None = None

    def opened() -> Store:
        nonlocal store
        if store is None:
            store = Store(db)
        return store

    base = _exported(baseline) if baseline is not None else _stored(opened(), refs.pop(0), "BASE")
    if candidate is not None:
        cand = _exported(candidate)
    elif refs:
        cand = _stored(opened(), refs.pop(0), "CANDIDATE")
    else:
        cand = _latest_of(opened(), base.suite)
    # the baseline is the reference: when both are files, the candidate is the odd one
    for side, other in ((cand, base), (base, cand)):
        if side.file is not None and side.suite != other.suite:
            raise InputError(
                f"a run of suite {side.suite!r}; expected a run of {other.suite!r}, the suite "
                f"of run {other.id} it is compared with",
                file=side.file,
                field="run.suite",
            )
    if base.id == cand.id:
        raise InputError(f"both refer to run {base.id}", field="CANDIDATE")
    return base, cand


def rejudged_base(
    base: Side, cand: Side, judge: str | None, err: Console
) -> tuple[Side, JudgeSplit] | None:
    """``compare --rejudge``: the base run judged again as the candidate was (stored), to be
    compared with the candidate in its place, and the judge/agent split; None when the runs
    were judged alike.

    Raises:
        InputError: either run is an export, or the rejudge is refused (see
            :func:`checkweigh.service.rejudge`).
    """
    from ..service import rejudge

    if base.info is None or base.store is None or cand.info is None:
        raise InputError(
            "--rejudge judges the base run's stored cases again: give BASE and CANDIDATE as "
            "runs in --db, not export files",
            field="--rejudge",
        )
    done = rejudge(base.store, base.info, cand.info, judge=judge)
    if done is None:
        return None
    run = done.run
    err.print(
        plain(
            f"rejudged the {len(done.results)} execution(s) of run {base.id} with "
            f"{done.split.judge}, as run {cand.id} was judged: stored as run {run.id}"
        )
    )
    side = Side(
        id=run.id,
        suite=run.suite,
        policy=cand.policy,
        results=done.results,
        info=run,
        config=run.config,
        store=base.store,
    )
    return side, done.split
