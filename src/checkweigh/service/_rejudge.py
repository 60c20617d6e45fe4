"""``compare --rejudge``: the base run's stored outputs judged again with the candidate's judge
and check definitions (no agent runs), stored as a run of its own, and the change between the
two runs split into the judge's part and the agent's (:func:`checkweigh.core.split_change`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from ..core import (
    Case,
    CaseResult,
    JudgeSplit,
    PassPolicy,
    decided,
    judging_differences,
    read_config,
    split_change,
)
from ..errors import InputError
from ..runs import JudgeSetup, RunOptions, RunStart, run
from ..store import RunInfo, RunStatus, Store
from ..suites import Suite, load_suite

REJUDGE_TAG = "rejudge"
"""The key of a rejudged run's configuration that says what it is a rejudge of."""


class Rejudged(NamedTuple):
    """The base run judged again, and how the change between the two runs splits."""

    run: RunInfo
    """The stored rejudged run."""
    results: list[CaseResult]
    """Its results, and the base's executions the agent failed (no output to judge: they
    stay as they were, and are not stored again), in input order."""
    split: JudgeSplit


def rejudge(
    store: Store, base: RunInfo, candidate: RunInfo, *, judge: str | None = None
) -> Rejudged | None:
    """Judge ``base``'s stored cases again as ``candidate`` was judged, store that run and
    split the change; None when the two runs were judged alike (nothing to split).

    The judge is built from the candidate's stored judge, judge mode and output format, and
    its suite's ``judge:`` block; it goes through the judge cache, so an output judged before
    by the same judge (in the candidate's run, or an earlier rejudge) costs no call. Ctrl-C
    ends the rejudge between cases, as it ends a run.

    Args:
        judge: PROVIDER:MODEL instead of the candidate's judge (``--judge``); API keys come
            from the environment, as for ``checkweigh run``.

    Raises:
        InputError: in one line: the base has repeats or stored no cases, the candidate's
            suite file no longer defines the checks it was judged with, no judge, a bad spec.
        RunStopped: the rejudge was interrupted (its run is stored, incomplete).
    """
    differences = judging_differences(base.config, candidate.config)
    if not differences:
        return None
    config = read_config(candidate.config)
    spec = judge or config.judge
    if spec is None:
        raise InputError(
            f"run {candidate.id} was judged by no judge; give the one to rejudge with, "
            "--judge PROVIDER:MODEL",
            field="--judge",
        )
    suite = _candidate_suite(candidate)
    base_results, cases, failed = _base_cases(store, base)
    stored_format = (config.judge_options or {}).get("format")
    options = RunOptions(
        judge=JudgeSetup(
            spec=spec,
            format=stored_format if isinstance(stored_format, str) else None,
            batch=config.judge_mode == "batch",
        ),
        graded_weights=tuple(f"{k}={v}" for k, v in config.graded_weights.items()),
    )
    tag = {"base": base.id, "judged_as": candidate.id, "judge": spec}
    report = run(suite, options, cases=cases, store=store, on_start=lambda s: _tag(s, tag))
    rejudged = store.get_run(report.run_id)
    results = _with_base_latency(report.results, base_results) + failed
    results.sort(key=lambda r: (r.position, r.repeat))
    split = _split(store, base, base_results, rejudged, results, candidate, differences)
    return Rejudged(rejudged, results, split)


def stored_split(store: Store, base: RunInfo, candidate: RunInfo) -> JudgeSplit | None:
    """The judge/agent split of two runs judged differently, from the newest complete rejudge
    of ``base`` as ``candidate`` was judged that the store holds (None: there is none, or
    the runs were judged alike). Nothing is judged: the server shows what ``compare
    --rejudge`` stored."""
    differences = judging_differences(base.config, candidate.config)
    if not differences:
        return None
    wanted = {"base": base.id, "judged_as": candidate.id}
    found = [
        run
        for run in store.list_runs(limit=_LOOKED_AT, suite=candidate.suite)
        if run.status is RunStatus.COMPLETE
        and {k: (run.config.get(REJUDGE_TAG) or {}).get(k) for k in wanted} == wanted
    ]
    if not found:
        return None
    base_results = list(store.iter_results(base.id))
    failed = [r for r in base_results if r.agent_error is not None]
    results = _with_base_latency(store.iter_results(found[0].id), base_results) + failed
    return _split(store, base, base_results, found[0], results, candidate, differences)


_LOOKED_AT = 200
"""The newest runs of the candidate's suite searched for a stored rejudge."""


def _with_base_latency(
    rejudged: Iterable[CaseResult], base_results: list[CaseResult]
) -> list[CaseResult]:
    """The outputs, and so the agent's latency, are the base's: a comparison's latency row
    then compares the two agents, as without a rejudge."""
    latency = {(r.case_id, r.repeat): r.latency_ms for r in base_results}
    return [r._replace(latency_ms=latency.get((r.case_id, r.repeat))) for r in rejudged]


def _split(
    store: Store,
    base: RunInfo,
    base_results: list[CaseResult],
    rejudged: RunInfo,
    rejudged_results: list[CaseResult],
    candidate: RunInfo,
    differences: list[str],
) -> JudgeSplit:
    base_policy = PassPolicy.from_snapshot(base.config.get("thresholds"))
    cand_policy = PassPolicy.from_snapshot(candidate.config.get("thresholds"))
    checks = candidate.config.get("checks", {})
    figures = split_change(
        (decided(r, base_policy) for r in base_results),
        (decided(r, cand_policy) for r in rejudged_results),
        (decided(r, cand_policy) for r in store.iter_results(candidate.id)),
        sorted(name for name, c in checks.items() if c.get("judged")),
    )
    return JudgeSplit(
        base_run=base.id,
        rejudged_run=rejudged.id,
        judge=str(rejudged.config.get("judge")),
        differences=differences,
        kept=sum(r.agent_error is not None for r in base_results),
        figures=figures,
    )


def _tag(start: RunStart, tag: Mapping[str, Any]) -> None:
    # before its first case: an interrupted rejudge is still told from an agent's run
    start.store.tag_run(start.run_id, REJUDGE_TAG, dict(tag))


def _candidate_suite(cand: RunInfo) -> Suite:
    """The candidate's suite file, checked to still define the checks the candidate was
    judged with, without its target: no agent is called."""
    path = Path(cand.suite_path)
    if not path.is_file():
        raise InputError(
            f"the suite file of run {cand.id} is gone; rejudging reads the candidate's checks "
            "from it",
            file=path,
        )
    suite = load_suite(path, load_agent=False, own_cases=False)
    # the snapshot as the store keeps it (JSON), to compare like with like
    now = orjson.loads(orjson.dumps(suite.snapshot(), default=str))
    changed = judging_differences(cand.config, {**cand.config, "checks": now["checks"]})
    missing = sorted(cand.config.get("checks", {}).keys() - now["checks"].keys())
    if changed or missing:
        why = changed[0] if changed else f"check {missing[0]!r} is gone"
        raise InputError(
            f"the suite no longer defines the checks run {cand.id} was judged with ({why}); "
            "rejudging needs the candidate's checks as they were",
            file=path,
        )
    return dataclasses.replace(suite, spec=suite.spec.model_copy(update={"target": None}))


def _base_cases(
    store: Store, base: RunInfo
) -> tuple[list[CaseResult], list[Case], list[CaseResult]]:
    """``base``'s results, the cases they evaluated (with the traces its agent produced), and
    its executions the agent failed (no output to judge)."""
    results: list[CaseResult] = []
    cases: list[Case] = []
    failed: list[CaseResult] = []
    for result in store.iter_results(base.id, with_cases=True):
        if result.repeat > 0:
            raise InputError(
                f"run {base.id} tried its cases more than once (--repeat); rejudging takes "
                "runs of one try per case",
                field="BASE",
            )
        if result.agent_error is not None:
            failed.append(result._replace(body=None))
        else:
            case = result.case
            if case is None:
                raise InputError(
                    f"run {base.id} stored no case for {result.case_id!r} (results uploaded "
                    "or stored before cases were kept); rejudging needs each case with its "
                    "trace",
                    field="BASE",
                )
            cases.append(case)
        results.append(result._replace(body=None))
    return results, cases, failed
