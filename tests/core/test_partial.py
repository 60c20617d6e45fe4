"""A run's aggregates merged from chunks' parts (worker processes) equal those of adding every
result in turn: counts, float sums to the last bit, the lowest scores and slowest executions
with their ties, examples, failing cases, usage."""

from __future__ import annotations

import pickle
import random
from pathlib import Path

import pytest

from checkweigh.core import CaseResult, PassPolicy, RunAggregator
from checkweigh.core._usage import CaseUsage
from checkweigh.runs._engine import Evaluator
from checkweigh.suites import case_of_line, load_suite
from support.worker_suite import write_worker_suite

N = 900


def _results(tmp_path: Path) -> tuple[Evaluator, list[CaseResult]]:
    """Scored cases of the worker suite, with agent errors, usage, costs and latencies that
    tie, as a recorded run meets them."""
    suite = load_suite(write_worker_suite(tmp_path, N))
    evaluator = Evaluator.from_suite(suite)
    rng = random.Random(13)
    results = []
    for i, line in enumerate(suite.cases.path.read_bytes().splitlines()):
        result = evaluator.evaluate(case_of_line(suite.cases.path, i + 1, line), index=i)
        if i % 97 == 5:
            result = result._replace(agent_error=f"timed out after {i} ms", verdicts={}, results={})
        if i % 3:
            cost = rng.choice([None, 0.1, 0.2, 1e-7 * i])
            result = result._replace(usage=CaseUsage(10 + i, 3 * i, cost))
        result = result._replace(latency_ms=rng.choice([None, 250.0, 250.0, 1999.5, rng.random()]))
        results.append(result)
    return evaluator, results


@pytest.mark.parametrize("new_ids", [False, True], ids=["ids-noted", "ids-checked-new"])
@pytest.mark.parametrize("seed", range(6))
def test_parts_merged_give_the_summary_of_every_result_added(
    tmp_path: Path, seed: int, new_ids: bool
) -> None:
    # new_ids: the driver checked the ids are new to the run (a JSONL file's), and they are
    # counted without being noted
    evaluator, results = _results(tmp_path)
    policy = PassPolicy(pass_threshold=75.0)
    whole = RunAggregator(evaluator.rubrics, policy=policy).add_all(results)
    merged = RunAggregator(evaluator.rubrics, policy=policy)
    rng = random.Random(seed)
    start = 0
    while start < len(results):
        chunk = results[start : start + rng.choice([1, 7, 64, 300])]
        part = RunAggregator(evaluator.rubrics, policy=policy, journal=True).add_all(chunk)
        shipped = pickle.loads(pickle.dumps(part.part()))  # as a worker sends it
        ids = [r.case_id for r in chunk]
        merged.merge(shipped, ids, [r.latency_ms for r in chunk], new_ids=new_ids)
        start += len(chunk)
    assert merged.summary() == whole.summary()
    summary = whole.summary()
    assert summary.cases == N
    assert summary.agent_errors > 0
    assert summary.usage is not None
    assert summary.usage.cost_usd is not None
    assert len(summary.slowest) == 5
    assert len(summary.rubrics[0].worst) == 5


def test_a_journalling_aggregator_refuses_repeats() -> None:
    with pytest.raises(ValueError, match="without repeats"):
        RunAggregator([], keep_case_scores=True, journal=True)
    with pytest.raises(ValueError, match="journalling"):
        RunAggregator([]).part()
