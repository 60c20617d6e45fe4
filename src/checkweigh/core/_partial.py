"""A chunk's aggregates, built where the chunk was scored (a worker process) and merged by the
run's aggregator exactly as if it had added the chunk's results one by one.

Counters merge by addition. Floating-point sums do not (addition is not associative), so a
part carries the values of each sum in order and the merge adds them in turn, as the
aggregator would have. The lowest scores are an order statistic on (score, position): a
chunk's own five are the only candidates from it. The slowest executions are merged from the
chunk's latencies by the aggregator itself (their ties depend on arrival order).

Parts are for runs without repeats: with repeats the aggregator keeps every case's scores.
"""

from __future__ import annotations

from typing import NamedTuple

from ._summary import FailingCase, WorstCase


class RubricPart(NamedTuple):
    """One rubric's figures over a chunk."""

    executions: int
    na: int
    errored: int
    n: int
    """Executions scored."""
    outcomes: list[int]
    """Per :class:`OutcomeClass`, in its order."""
    basis: list[int]
    """Per :class:`OutcomeBasis`, in its order."""
    counts: list[list[int]]
    """Per check of the rubric (its order): passed, failed, not applicable, errored."""
    scores: list[float]
    """Every score, in order (the sums are added again from them)."""
    errored_examples: list[str]
    worst: list[tuple[float, int, WorstCase]]
    """The chunk's lowest scores: (-score, -position among the chunk's scored, case)."""


class TallyPart(NamedTuple):
    """The case verdicts over a chunk (see :class:`CaseTally`)."""

    executions: int
    passed: int
    failed: int
    errored: int
    scores: list[float]
    """Every case score counted, in order."""
    failing: list[FailingCase]


class AggregatePart(NamedTuple):
    """A chunk's aggregates (see :meth:`RunAggregator.part` and :meth:`RunAggregator.merge`)."""

    executions: int
    errored: int
    agent_errors: int
    used: int
    tokens_in: int
    tokens_out: int
    costed: int
    costs: list[float]
    """Every execution's cost, in order."""
    rubrics: list[RubricPart]
    cases: TallyPart | None
