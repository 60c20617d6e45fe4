"""Comparing two stored runs: thresholds checked, runs found, the comparison and its JSON."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, NamedTuple

from .._gc import gc_paused
from ..core import (
    CaseResult,
    CaseVerdict,
    CompareThresholds,
    Comparison,
    Decided,
    PassPolicy,
    calibrated_changes,
    compare_decided,
    compare_runs,
    compare_unpaired,
    decided,
    judging_differences,
)
from ..errors import InputError
from ..store import RunInfo, RunStatus, Store, calibrate_run, results_at
from ._rejudge import stored_split

COMPARE_DEFAULTS = CompareThresholds()
"""The default thresholds of ``checkweigh compare`` and ``GET /api/runs/compare``."""

_NAMES = (
    "max_pass_rate_drop",
    "max_avg_score_drop",
    "max_latency_increase_pct",
    "min_latency_increase_ms",
    "case_score_delta",
    "alpha",
)


class ComparisonMemo:
    """The last few comparisons of finished runs, by (base, candidate, thresholds, strict): a
    finished run's results never change, so neither does its comparison (the server keeps one,
    so the comparison page after its API call, or shown again, costs no second comparison)."""

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._kept: OrderedDict[Hashable, Comparison] = OrderedDict()

    def get(self, key: Hashable) -> Comparison | None:
        """The comparison kept under ``key``, if any."""
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
            return found

    def put(self, key: Hashable, comparison: Comparison) -> None:
        """Keep ``comparison`` under ``key`` (the oldest kept one goes when full)."""
        with self._lock:
            self._kept[key] = comparison
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)


class StoredComparison(NamedTuple):
    """Two stored runs and how the candidate compares with the base."""

    base: RunInfo
    candidate: RunInfo
    result: Comparison


def compare_thresholds(
    values: Mapping[str, float], fields: Mapping[str, str] | None = None
) -> CompareThresholds:
    """The thresholds from ``values`` (keyed by :class:`CompareThresholds` field; a missing one
    keeps its default), checked.

    Args:
        values: threshold name -> value.
        fields: threshold name -> how the user spelled it (a flag or a query parameter), for
            the error message.

    Raises:
        InputError: a negative or non-number threshold, or ``alpha`` outside (0, 1).
    """
    names = fields or {}
    chosen = {n: values.get(n, getattr(COMPARE_DEFAULTS, n)) for n in _NAMES}
    for name in _NAMES[:-1]:
        value = chosen[name]
        # NaN fails >= too; an infinite drop allowed would be no threshold at all
        if not value >= 0 or (math.isinf(value) and name != "case_score_delta"):
            raise InputError(f"expected a number >= 0, got {value:g}", field=names.get(name, name))
    alpha = chosen["alpha"]
    if not 0 < alpha < 1:
        raise InputError(
            f"expected a level between 0 and 1, got {alpha:g}", field=names.get("alpha", "alpha")
        )
    return CompareThresholds(**chosen)


def _get_run(store: Store, ref: str, field: str) -> RunInfo:
    try:
        return store.get_run(ref)
    except InputError as exc:
        if exc.field == "RUN":
            exc.field = field
        raise


def compare_stored(
    store: Store,
    base: str,
    candidate: str,
    thresholds: CompareThresholds,
    *,
    strict: bool = False,
    fields: tuple[str, str] = ("BASE", "CANDIDATE"),
    rows_of: Callable[[RunInfo], Iterable[Decided]] | None = None,
    memo: ComparisonMemo | None = None,
) -> StoredComparison:
    """Compare the stored run ``candidate`` with ``base`` (ids, prefixes, latest, previous).

    Args:
        fields: how the two runs are named in an error (arguments or query parameters).
        rows_of: a run's executions as decided by its policy, when the caller keeps them (the
            server's case index): then only the changed executions' results are read, for
            their reasons. Without it both runs are read whole.
        memo: comparisons of finished runs kept by the caller, looked up and filled here.

    Raises:
        InputError: a run is unknown (field ``fields[i]``), both are one run, or they share no
            case (nothing can be tested) and are not two monitor windows (those are compared
            unpaired: see :func:`compare_rows`).
    """
    base_run = _get_run(store, base, fields[0])
    cand_run = _get_run(store, candidate, fields[1])
    if base_run.id == cand_run.id:
        raise InputError(f"both refer to run {base_run.id}", field=fields[1])
    # what a finished run is: a run deleted and stored again under its id is another one
    key = (*map(_identity, (base_run, cand_run)), thresholds, strict)
    done = RunStatus.RUNNING not in (base_run.status, cand_run.status)
    kept = memo.get(key) if memo is not None and done else None
    if kept is not None:
        return StoredComparison(base_run, cand_run, _current(store, kept, base_run, cand_run))
    cand_policy = PassPolicy.from_snapshot(cand_run.config.get("thresholds"))
    ids = (base_run.id, cand_run.id)
    if rows_of is not None:

        def verdicts(rows: list[Decided]) -> list[CaseVerdict]:
            found = results_at(store, cand_run, [(d.position, d.case_id, d.repeat) for d in rows])
            return [cand_policy.decide(found[d.case_id, d.repeat]) for d in rows]

        with gc_paused():  # thousands of rows made beside the server's cached indexes
            result = compare_rows(
                list(rows_of(base_run)),
                list(rows_of(cand_run)),
                verdicts,
                windows=is_window(base_run.config) and is_window(cand_run.config),
                ids=ids,
                thresholds=thresholds,
                strict=strict,
            )
    else:
        with gc_paused():  # both runs' results are read whole (see checkweigh._gc)
            result = compare_results(
                store.iter_results(base_run.id),
                store.iter_results(cand_run.id),
                policies=(PassPolicy.from_snapshot(base_run.config.get("thresholds")), cand_policy),
                configs=(base_run.config, cand_run.config),
                ids=ids,
                thresholds=thresholds,
                strict=strict,
            )
    result = judged(result, base_run.config, cand_run.config)
    result = undecided(result, base_run, cand_run)
    if memo is not None and done:
        memo.put(key, result)
    return StoredComparison(base_run, cand_run, _current(store, result, base_run, cand_run))


def _current(store: Store, result: Comparison, base: RunInfo, cand: RunInfo) -> Comparison:
    """``result`` with what may have been stored since the runs ended: labels, and a rejudge
    of the base (``compare --rejudge``), whose judge/agent split is shown beside it."""
    result = _calibrated(store, result, base, cand)
    if not result.judged_differently:
        return result
    split = stored_split(store, base, cand)
    return result if split is None else result.model_copy(update={"rejudge": split})


def _calibrated(store: Store, result: Comparison, base: RunInfo, cand: RunInfo) -> Comparison:
    """``result`` with both runs' judge checks calibrated against the labels as they stand
    now (labels made since either run ended count): never memoized."""
    changes = calibrated_changes(calibrate_run(store, base), calibrate_run(store, cand))
    if changes == result.calibrated:
        return result  # the kept comparison itself, when no label changed it
    return result.model_copy(update={"calibrated": changes})


def _identity(run: RunInfo) -> Hashable:
    return (run.id, run.status, run.executions, run.created_at, run.finished_at)


def judged(result: Comparison, base: Mapping[str, Any], candidate: Mapping[str, Any]) -> Comparison:
    """``result`` with how the two runs were judged differently, from their configurations
    (``compare`` warns about it; with ``--strict`` it fails)."""
    return result.model_copy(update={"judged_differently": judging_differences(base, candidate)})


def undecided(result: Comparison, base: RunInfo | None, candidate: RunInfo | None) -> Comparison:
    """``result`` noting which of the two stored runs (None: read from an export, which is of
    a complete run) has gates that are not decided."""
    found = [
        f"{side} run {run.id}: {run.summary.gates_not_decided}"
        for side, run in (("base", base), ("candidate", candidate))
        if run is not None and run.summary is not None and run.summary.gates_not_decided
    ]
    return result.model_copy(update={"gates_not_decided": found})


def require_pairs(result: Comparison, base: str, candidate: str) -> Comparison:
    """``result``, when the runs ``base`` and ``candidate`` share a case.

    Raises:
        InputError: they share none: no pair means no test, and "no regression" would be a
            pass nobody measured.
    """
    if result.paired == 0:
        raise InputError(
            f"the runs share no case (0 paired of {result.only_base} base, "
            f"{result.only_candidate} candidate executions): {base} and {candidate} "
            "cannot be compared (only two monitor windows are compared unpaired)"
        )
    return result


def is_window(config: Mapping[str, Any]) -> bool:
    """Whether a run's configuration is a monitor window's (its traces are its cases)."""
    return isinstance(config.get("monitor"), Mapping)


def compare_results(
    base: Iterable[CaseResult],
    candidate: Iterable[CaseResult],
    *,
    policies: tuple[PassPolicy, PassPolicy],
    configs: tuple[Mapping[str, Any], Mapping[str, Any]],
    ids: tuple[str, str],
    thresholds: CompareThresholds,
    strict: bool = False,
) -> Comparison:
    """Two runs' results compared as :func:`compare_rows` compares them, each decided by its
    policy (``policies``, ``configs`` and ``ids``: the base's, then the candidate's).

    Raises:
        InputError: see :func:`compare_rows`.
    """
    if not (is_window(configs[0]) and is_window(configs[1])):
        result = compare_runs(
            base,
            candidate,
            base_policy=policies[0],
            candidate_policy=policies[1],
            thresholds=thresholds,
            strict=strict,
        )
        return require_pairs(result, *ids)
    kept: dict[tuple[str, int], CaseResult] = {}
    cand_rows: list[Decided] = []
    for r in candidate:
        kept[r.case_id, r.repeat] = r
        cand_rows.append(decided(r, policies[1]))

    def verdicts(rows: list[Decided]) -> list[CaseVerdict]:
        return [policies[1].decide(kept[d.case_id, d.repeat]) for d in rows]

    base_rows = [decided(r, policies[0]) for r in base]
    return compare_rows(
        base_rows,
        cand_rows,
        verdicts,
        windows=True,
        ids=ids,
        thresholds=thresholds,
        strict=strict,
    )


def compare_rows(
    base: list[Decided],
    candidate: list[Decided],
    verdicts: Callable[[list[Decided]], list[CaseVerdict]],
    *,
    windows: bool,
    ids: tuple[str, str],
    thresholds: CompareThresholds,
    strict: bool = False,
) -> Comparison:
    """The paired comparison of two runs' executions; two monitor windows (``windows``) that
    share no case, being different traces, are compared unpaired instead.

    Raises:
        InputError: ordinary runs that share no case (:func:`require_pairs`), or windows of
            which one holds no trace yet.
    """
    if windows and not {r.case_id for r in base} & {r.case_id for r in candidate}:
        for run_id, rows in zip(ids, (base, candidate), strict=True):
            if not rows:
                # "no regression" against an empty window would be a pass nobody measured
                raise InputError(f"the monitor window {run_id} holds no trace: nothing to compare")
        return compare_unpaired(base, candidate, thresholds=thresholds, strict=strict)
    result = compare_decided(base, candidate, verdicts, thresholds=thresholds, strict=strict)
    return require_pairs(result, *ids)


def comparison_json(base: str, candidate: str, result: Comparison) -> dict[str, Any]:
    """The comparison as ``checkweigh compare --json`` writes it and the API answers it."""
    return {"base": base, "candidate": candidate, **result.model_dump(mode="json")}
