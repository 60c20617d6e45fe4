"""The graded judge: metrics scored 0-5, weighted into an overall score out of 100.

overall_score = sum over metrics of (score / 5) x normalized weight x 100. The default
metrics and weights are the eight below. Metrics can be added or removed and weights
overridden (they are renormalized). A binary metric (such as task completion) is answered
yes/no and scores 5 or 0. ``mode="binary"`` asks each metric's yes/no sub-questions instead
of a 0-5 score (score = 5 x the share of yes), so the two can be compared for steadiness.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..checks import OVERALL
from ..core import Case, Verdict, failed, measured, passed
from ._answers import AnswerError, Checklist, schema_of
from ._ask import ask
from ._binary import EVALUATOR
from ._formatter import DEFAULT_FORMATTER, TraceFormatter
from ._judged import JudgedCheck, judge_failure
from ._model import JudgeError, JudgeModel, JudgeRequest, Message, joined

LABELS = ("critical_fail", "fail", "poor", "acceptable", "good", "excellent")
"""The label of each score from 0 to 5 (descriptive only)."""


@dataclass(frozen=True, slots=True)
class GradedMetric:
    """One graded criterion."""

    name: str
    weight: float
    tier: str
    description: str
    sub_questions: tuple[str, ...] = ()
    binary: bool = False


DEFAULT_METRICS: tuple[GradedMetric, ...] = (
    GradedMetric(
        "tool_routing",
        15,
        "Execution",
        "Picked the right tools for the task.",
        ("Did the agent call the tools the task needed?", "Did it avoid unneeded tool calls?"),
    ),
    GradedMetric(
        "parameter_extraction",
        15,
        "Execution",
        "Passed correct arguments to the tools.",
        (
            "Were the tool arguments taken correctly from the request?",
            "Were required arguments present?",
        ),
    ),
    GradedMetric(
        "result_interpretation",
        15,
        "Execution",
        "Read the tool results correctly.",
        ("Did the agent read the tool results correctly?", "Did it act on what the results said?"),
    ),
    GradedMetric(
        "grounding_fidelity",
        12.5,
        "Knowledge",
        "Stated only what the trace supports.",
        ("Is every claim in the final answer supported by the trace?",),
    ),
    GradedMetric(
        "instruction_compliance",
        12.5,
        "Knowledge",
        "Followed the user's instructions.",
        (
            "Did the agent follow the user's explicit instructions?",
            "Did it respect stated constraints?",
        ),
    ),
    GradedMetric(
        "information_gathering",
        10,
        "Process",
        "Asked for what was missing, and only that.",
        (
            "Did the agent ask for information it needed and lacked?",
            "Did it avoid asking for what it already had?",
        ),
    ),
    GradedMetric(
        "conversation_management",
        10,
        "Process",
        "Kept the conversation on track.",
        ("Did the agent keep the conversation focused on the task?",),
    ),
    GradedMetric(
        "response_delivery",
        10,
        "Delivery",
        "Gave a clear, complete final reply.",
        ("Is the final reply clear?", "Does it tell the user the outcome and any next step?"),
    ),
)


def label(score: float) -> str:
    """The label of a 0-5 score (rounded to the nearest whole point)."""
    return LABELS[max(0, min(5, round(score)))]


def overall_score(scores: Mapping[str, float], metrics: Iterable[GradedMetric]) -> float:
    """Sum of (score / 5) x normalized weight x 100 over ``metrics``."""
    chosen = list(metrics)
    total = math.fsum(m.weight for m in chosen)
    if total <= 0:
        raise ValueError("metric weights sum to 0")
    return math.fsum(scores[m.name] / 5 * m.weight / total * 100 for m in chosen)


def configure(
    metrics: Iterable[GradedMetric] = DEFAULT_METRICS,
    *,
    weights: Mapping[str, float] | None = None,
    exclude: Iterable[str] = (),
    add: Iterable[GradedMetric] = (),
) -> tuple[GradedMetric, ...]:
    """The metric set after overrides (weights are renormalized when scoring).

    Raises:
        ValueError: an override names an unknown metric, a weight is negative, or nothing is left.
    """
    chosen = {m.name: m for m in metrics}
    for extra in add:
        chosen[extra.name] = extra
    for name in exclude:
        if name not in chosen:
            raise ValueError(f"cannot exclude unknown metric {name!r}")
        del chosen[name]
    for name, weight in (weights or {}).items():
        if name not in chosen:
            raise ValueError(f"cannot weight unknown metric {name!r}")
        if weight < 0 or not math.isfinite(weight):
            raise ValueError(f"weight of {name!r} must be a finite number >= 0")
        chosen[name] = replace(chosen[name], weight=weight)
    if not chosen or math.fsum(m.weight for m in chosen.values()) <= 0:
        raise ValueError("no metric with a weight > 0 is left")
    return tuple(chosen.values())


class MetricScore(BaseModel):
    """One metric's score."""

    model_config = ConfigDict(extra="forbid", strict=True)

    metric: str
    """The metric's name."""
    score: int = Field(ge=0, le=5)
    """0 to 5 (0 or 5 for a binary metric)."""
    reason: str = Field(min_length=1)
    """Why."""


class MetricScores(BaseModel):
    """Every metric's score."""

    model_config = ConfigDict(extra="forbid", strict=True)

    scores: list[MetricScore]
    """Each metric exactly once."""


class AddedMetric(BaseModel):
    """A metric a suite adds to the graded judge."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    """Its name."""
    weight: float = Field(ge=0)
    """Its weight (renormalized with the others)."""
    tier: str = "Custom"
    """A grouping for reports."""
    description: str = Field(min_length=1)
    """What the judge scores."""
    binary: bool = False
    """Scored 5 (yes) or 0 (no), like task completion."""
    sub_questions: tuple[str, ...] = ()
    """Its yes/no questions in binary mode (default: the description)."""

    def build(self) -> GradedMetric:
        """The metric it adds."""
        return GradedMetric(
            self.name, self.weight, self.tier, self.description, self.sub_questions, self.binary
        )


class GradedJudgeCheck(JudgedCheck):
    """``type: graded``: grade a case on weighted metrics (default: the eight) scored 0-5;
    passes when the overall score reaches ``pass_threshold``.

    Its own verdict carries ``overall_score`` and each metric's score as measures; it also
    answers one named verdict per metric (``CHECK.tool_routing``...), passed when that
    metric's score out of 100 reaches ``pass_threshold``, which a rubric may weigh.
    """

    type: Literal["graded"] = "graded"
    mode: Literal["scale", "binary"] = "scale"
    """0-5 scores, or each metric's yes/no sub-questions."""
    pass_threshold: float = Field(default=75.0, ge=0.0, le=100.0)
    """The overall score (out of 100) at which the check passes."""
    weights: dict[str, float] = Field(default_factory=dict)
    """Weight overrides by metric name (renormalized)."""
    exclude: tuple[str, ...] = ()
    """Metrics to drop."""
    add: tuple[AddedMetric, ...] = ()
    """Metrics to add."""
    formatter: TraceFormatter = Field(default=DEFAULT_FORMATTER, exclude=True)
    """How the case is rendered for the judge (set from Python, not from a suite file)."""

    @model_validator(mode="after")
    def _valid_overrides(self) -> GradedJudgeCheck:
        self.metrics()  # raises ValueError naming the bad override
        return self

    def metrics(self) -> tuple[GradedMetric, ...]:
        """The metric set after this check's overrides."""
        added = [a.build() for a in self.add]
        return configure(weights=self.weights, exclude=self.exclude, add=added)

    def with_weights(self, weights: Mapping[str, float]) -> GradedJudgeCheck:
        """A copy with ``weights`` overriding its own (a run's overrides).

        Raises:
            ValueError: a weight names an unknown metric or is negative.
        """
        copy = self.model_copy(update={"weights": {**self.weights, **weights}})
        copy.metrics()
        return copy

    def verdict_names(self) -> tuple[str, ...]:
        """One named verdict per metric."""
        return tuple(m.name for m in self.metrics())

    @property
    def version(self) -> str:
        """The metric set's mode and the formatter."""
        return f"graded-{self.mode}/1+{self.formatter.ident}"

    def _request(
        self, lines: list[str], shape: builtins.type[BaseModel], name: str, n: int
    ) -> JudgeRequest:
        # the last two lines are the case and the reply format; the instructions before
        # them are the same for every case
        user, prefix = joined(lines, len(lines) - 2)
        return JudgeRequest(
            messages=(
                Message(role="system", content=EVALUATOR),
                Message(role="user", content=user),
            ),
            shared_prefix=prefix,
            schema_name=name,
            json_schema=schema_of(shape),
            max_tokens=200 + 120 * n,
            tags={"check": self.version, "formatter": self.formatter.ident},
        )

    async def _scale(
        self, case: Case, judge: JudgeModel, metrics: tuple[GradedMetric, ...]
    ) -> dict[str, int]:
        lines = ["Score the run below on each metric from 0 (critical fail) to 5 (excellent)."]
        for m in metrics:
            kind = " Answer 5 (yes) or 0 (no) only." if m.binary else ""
            lines.append(f"- {m.name}: {m.description}{kind}")
        lines.append(self.formatter.format(case))
        lines.append(
            'Reply as {"scores": [{"metric": "<name>", "score": 0-5, "reason": "..."}]} with '
            "every metric exactly once."
        )
        request = self._request(lines, MetricScores, "scores", len(metrics))
        answer = await ask(judge, request, MetricScores, lambda a: _scores(a, metrics))
        return _scores(answer, metrics)

    async def _binary(
        self, case: Case, judge: JudgeModel, metrics: tuple[GradedMetric, ...]
    ) -> dict[str, float]:
        questions = [(m, q) for m in metrics for q in (m.sub_questions or (m.description,))]
        lines = ["Answer each numbered question about the run below, independently."]
        lines += [f"{i}. {q}" for i, (_, q) in enumerate(questions, start=1)]
        lines.append(self.formatter.format(case))
        lines.append(
            'Reply as {"answers": [{"index": 1, "verdict": "yes" or "no", "reason": "..."}]} '
            "with every question exactly once."
        )
        n = len(questions)
        request = self._request(lines, Checklist, "checklist", len(metrics))
        answer = await ask(judge, request, Checklist, lambda c: c.in_order(n))
        yes: dict[str, list[bool]] = {}
        for (m, _), a in zip(questions, answer.in_order(len(questions)), strict=True):
            yes.setdefault(m.name, []).append(a.verdict == "yes")
        return {name: 5.0 * sum(v) / len(v) for name, v in yes.items()}

    async def evaluate(self, case: Case, judge: JudgeModel) -> dict[str, Verdict]:
        """Its own verdict (passed when the overall score reaches the threshold) and one per
        metric; all errored alike when the judge gives no valid answer."""
        metrics = self.metrics()
        try:
            scores: Mapping[str, float] = (
                await self._scale(case, judge, metrics)
                if self.mode == "scale"
                else await self._binary(case, judge, metrics)
            )
        except (JudgeError, AnswerError) as exc:
            failure = judge_failure(exc)
            return {OVERALL: failure, **{m.name: failure for m in metrics}}
        overall = overall_score(scores, metrics)
        parts = ", ".join(f"{m.name} {scores[m.name]:g} {label(scores[m.name])}" for m in metrics)
        numbers = {"overall_score": overall, **{f"score.{k}": float(v) for k, v in scores.items()}}
        ok = overall >= self.pass_threshold
        text = f"overall {overall:.1f} {'>=' if ok else '<'} {self.pass_threshold:g}: {parts}"
        verdicts = {OVERALL: measured(passed(text) if ok else failed(text), numbers)}
        for m in metrics:
            score = scores[m.name]
            line = f"{m.name} {score:g} {label(score)}"
            met = score / 5 * 100 >= self.pass_threshold
            verdicts[m.name] = measured(passed(line) if met else failed(line), {"score": score})
        return verdicts


def _scores(answer: MetricScores, metrics: tuple[GradedMetric, ...]) -> dict[str, int]:
    """Each metric's score; :class:`AnswerError` unless every metric is scored once."""
    got = {s.metric: s.score for s in answer.scores}
    names = [m.name for m in metrics]
    if sorted(got) != sorted(names) or len(answer.scores) != len(names):
        raise AnswerError(f"expected one score for each of {names}, got {sorted(got)}")
    bad = [m.name for m in metrics if m.binary and got[m.name] not in (0, 5)]
    if bad:
        raise AnswerError(f"binary metrics must score 0 or 5: {bad}")
    return got


def reweighted(check: object, weights: Mapping[str, float]) -> object:
    """``check`` with a run's metric ``weights`` when it is a graded check, else itself.

    Raises:
        ValueError: a weight names an unknown metric or is negative.
    """
    if weights and isinstance(check, GradedJudgeCheck):
        return check.with_weights(weights)
    return check
