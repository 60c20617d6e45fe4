"""``compare --rejudge``: the base run's stored outputs judged again with the candidate's judge
and check definitions (no agent runs), stored as a run of its own, and the change between the
two runs split into the judge's part and the agent's (:func:`checkweigh.core.split_change`)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
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
from ..judges import JUDGE_KEYS, JudgeOptions, close_judge
from ..runs import JudgeSetup, RunOptions, RunStart, arun, make_cached_judge
from ..store import RunInfo, Store
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

    Args:
        judge: PROVIDER:MODEL instead of the candidate's judge (``--judge``); API keys come
            from the environment, as for ``checkweigh run``.

    Raises:
        InputError: in one line: the base has repeats or stored no cases, the candidate's
            suite file no longer defines the checks it was judged with, no judge, a bad spec.
    """
    differences = judging_differences(base.config, candidate.config)
    if not differences:
        return None
    return asyncio.run(_arejudge(store, base, candidate, judge, differences))


async def _arejudge(
    store: Store, base: RunInfo, cand: RunInfo, spec: str | None, differences: list[str]
) -> Rejudged:
    config = read_config(cand.config)
    spec = spec or config.judge
    if spec is None:
        raise InputError(
            f"run {cand.id} was judged by no judge; give the one to rejudge with, "
            "--judge PROVIDER:MODEL",
            field="--judge",
        )
    suite = _candidate_suite(cand)
    cases, failed = _base_cases(store, base)
    judge = make_cached_judge(
        spec, no_cache=False, replay=False, options=_judge_options(config.judge_options)
    )
    options = RunOptions(
        judge=JudgeSetup(batch=config.judge_mode == "batch"),
        graded_weights=tuple(f"{k}={v}" for k, v in config.graded_weights.items()),
    )
    tag = {"base": base.id, "judged_as": cand.id, "judge": spec}
    try:
        report = await arun(
            suite,
            options,
            cases=cases,
            store=store,
            judge=judge,
            on_start=lambda start: _tag(start, tag),
        )
    finally:
        await close_judge(judge)
    rejudged = store.get_run(report.run_id)
    results = sorted([*report.results, *failed], key=lambda r: (r.position, r.repeat))
    base_policy = PassPolicy.from_snapshot(base.config.get("thresholds"))
    cand_policy = PassPolicy.from_snapshot(cand.config.get("thresholds"))
    judged_checks = sorted(n for n, c in cand.config.get("checks", {}).items() if c.get("judged"))
    figures = split_change(
        (decided(r, base_policy) for r in store.iter_results(base.id)),
        (decided(r, cand_policy) for r in results),
        (decided(r, cand_policy) for r in store.iter_results(cand.id)),
        judged_checks,
    )
    split = JudgeSplit(
        base_run=base.id,
        rejudged_run=rejudged.id,
        judge=spec,
        differences=differences,
        kept=len(failed),
        figures=figures,
    )
    return Rejudged(rejudged, results, split)


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


def _base_cases(store: Store, base: RunInfo) -> tuple[list[Case], list[CaseResult]]:
    """The cases ``base`` evaluated, with the traces its agent produced, and its executions
    the agent failed (no output to judge)."""
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
            failed.append(result)
            continue
        case = result.case
        if case is None:
            raise InputError(
                f"run {base.id} stored no case for {result.case_id!r} (results uploaded or "
                "stored before cases were kept); rejudging needs each case with its trace",
                field="BASE",
            )
        cases.append(case)
    return cases, failed


def _judge_options(stored: Mapping[str, Any] | None) -> JudgeOptions:
    """The candidate's judge settings as its run stored them (keys this version knows)."""
    known = {k: v for k, v in (stored or {}).items() if k in JUDGE_KEYS}
    try:
        return JudgeOptions(**known)
    except (TypeError, ValueError) as exc:
        raise InputError(f"the candidate's judge settings: {exc}", field="judge_options") from None
