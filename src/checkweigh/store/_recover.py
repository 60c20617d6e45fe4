"""A summary rebuilt from a run's stored results, for a run whose process died before it
could write one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core import (
    CaseResult,
    Gate,
    GateMetric,
    OutcomeClass,
    PassPolicy,
    RunAggregator,
    RunSummary,
    apply_gates,
    rubrics_from_snapshot,
)


def gate_specs(gates: Sequence[Gate]) -> list[dict[str, Any]]:
    """The gates in a form stored with a run, which :func:`gates_from_specs` reads back."""
    return [
        {
            "metric": g.metric.value,
            "minimum": g.minimum,
            "maximum": g.maximum,
            "rubric": g.rubric,
            "check": g.check,
            "outcome": g.outcome.value if g.outcome else None,
            "k": g.k,
        }
        for g in gates
    ]


def gates_from_specs(specs: Iterable[Mapping[str, Any]]) -> tuple[Gate, ...]:
    """The gates stored by :func:`gate_specs`."""
    return tuple(
        Gate(
            GateMetric(s["metric"]),
            s.get("minimum"),
            s.get("maximum"),
            s.get("rubric"),
            s.get("check"),
            OutcomeClass(s["outcome"]) if s.get("outcome") else None,
            s.get("k"),
        )
        for s in specs
    )


def rebuild_summary(
    config: Mapping[str, Any], repeat: int, results: Iterable[CaseResult], note: str
) -> RunSummary:
    """The run's summary from its snapshot and its stored results, with its gates applied
    (those stored with the run) and ``note`` first among its notes."""
    policy = PassPolicy.from_snapshot(config.get("thresholds"))
    rubrics = list(rubrics_from_snapshot(config).values())
    aggregator = RunAggregator(rubrics, keep_case_scores=repeat > 1, policy=policy)
    for result in results:
        aggregator.add(result)
    summary = apply_gates(aggregator.summary(), gates_from_specs(config.get("gate_specs", ())))
    return summary.model_copy(update={"notes": [note]})
