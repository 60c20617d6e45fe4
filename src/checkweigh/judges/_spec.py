"""Judges named by a model string, and judge checks declared in suite files.

``anthropic:MODEL`` uses Anthropic's Messages API (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``);
``openai:MODEL`` uses the OpenAI-compatible API (the SDK reads ``OPENAI_API_KEY`` and
``OPENAI_BASE_URL``: OpenAI, Azure, vLLM, llama.cpp, LM Studio); ``ollama:MODEL`` uses
Ollama's OpenAI-compatible endpoint (``OLLAMA_BASE_URL``, default localhost:11434).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..checks import CheckLike
from ..checks._model import parse_path
from ..core import Case, Verdict, not_applicable
from ..errors import InputError
from ._anthropic import AnthropicJudge
from ._binary import Example, JudgeCheck, binary_version
from ._formatter import DEFAULT_FORMATTER
from ._graded import GradedJudgeCheck, GradedMetric, configure
from ._metrics import FaithfulnessCheck, GoalAccuracyCheck, goal_accuracy_version
from ._model import JudgeError, JudgeModel
from ._openai import OLLAMA_BASE_URL, OpenAIJudge
from ._options import JudgeOptions
from ._outcomes import ExpectedOutcomesCheck

PROVIDERS = ("openai", "anthropic", "ollama")
NO_JUDGE_HINT = (
    "no judge configured: pass --judge PROVIDER:MODEL (e.g. --judge ollama:llama3.1, or "
    "--judge openai:gpt-4o-mini with OPENAI_API_KEY set)"
)


def parse_judge(spec: str) -> tuple[str, str]:
    """``provider:model`` split in two.

    Raises:
        InputError: not of that form, or an unknown provider.
    """
    provider, sep, model = spec.partition(":")
    if not sep or not model or provider not in PROVIDERS:
        raise InputError(
            f"expected PROVIDER:MODEL with PROVIDER one of {', '.join(PROVIDERS)}, got {spec!r}",
            field="--judge",
        )
    return provider, model


def make_judge(
    spec: str,
    *,
    options: JudgeOptions | None = None,
    offline: bool = False,
) -> JudgeModel:
    """The judge a model string names, configured from the environment and ``options``
    (timeouts, retries, deadline, output format; defaults when None).

    ``offline`` (replay from the cache) builds the client without requiring an API key, since
    no call will be made. Nothing here needs a network or a real key: a local server works
    with ``OPENAI_BASE_URL=http://127.0.0.1:PORT/v1`` and any ``OPENAI_API_KEY``.

    Raises:
        InputError: a malformed string, an unknown provider, or a client that cannot be
            built (no API key, SDK not installed).
    """
    provider, model = parse_judge(spec)
    options = options or JudgeOptions()
    timeout_s, retry, fmt = options.timeout_s, options.retry_policy(), options.format
    try:
        if provider == "ollama":
            base = os.environ.get("OLLAMA_BASE_URL") or OLLAMA_BASE_URL
            return OpenAIJudge(
                model,
                provider="ollama",
                base_url=base,
                api_key="ollama",  # Ollama ignores it; the SDK wants one
                timeout_s=timeout_s,
                retry=retry,
                format=fmt,
            )
        if provider == "anthropic":
            anthropic_key = None
            if offline and not os.environ.get("ANTHROPIC_API_KEY"):
                anthropic_key = "replay-without-key"  # never sent, as for openai below
            return AnthropicJudge(
                model, api_key=anthropic_key, timeout_s=timeout_s, retry=retry, format=fmt
            )
        key = None
        if offline and not os.environ.get("OPENAI_API_KEY"):
            key = "replay-without-key"  # never sent: replay answers from the cache only
        return OpenAIJudge(model, api_key=key, timeout_s=timeout_s, retry=retry, format=fmt)
    except JudgeError as exc:
        raise InputError(str(exc), field="--judge") from None


class ExampleSpec(BaseModel):
    """A few-shot example in a suite file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    situation: str
    """What the agent did."""
    verdict: Literal["yes", "no"]
    """The right answer."""
    reason: str
    """Why."""


class NeedsJudge(BaseModel):
    """A suite check that asks the run's judge.

    On its own it answers "skipped" (not applicable) with a hint on configuring a judge;
    :meth:`bind` makes the check that asks the given judge.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    def evaluate(self, case: Case) -> Verdict:
        """No judge: skipped."""
        return _SKIPPED

    def bind(self, judge: JudgeModel) -> CheckLike:
        """The check that asks ``judge``."""
        raise NotImplementedError


class JudgeSpec(NeedsJudge):
    """A yes/no question for the run's judge, declared in a suite (``type: judge``)."""

    type: Literal["judge"] = "judge"
    question: str = Field(min_length=1)
    """The yes/no question about the case."""
    rubric: str | None = None
    """Guidance for the judge."""
    examples: list[ExampleSpec] = Field(default_factory=list)
    """Few-shot examples."""
    max_tokens: int = Field(default=300, ge=16)
    """Upper bound on the answer's length."""
    samples: int = Field(default=1, ge=1, le=25)
    """Ask this many times; the verdict is the majority, the flip rate is stored."""
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    """Sampling temperature for the judge."""

    @property
    def version(self) -> str:
        """The version of the check it becomes."""
        return binary_version()

    def bind(self, judge: JudgeModel) -> JudgeCheck:
        """The check that asks ``judge``."""
        return JudgeCheck(
            question=self.question,
            judge=judge,
            rubric=self.rubric,
            examples=tuple(Example(e.situation, e.verdict, e.reason) for e in self.examples),
            max_tokens=self.max_tokens,
            samples=self.samples,
            temperature=self.temperature,
        )


class ExpectedOutcomesSpec(NeedsJudge):
    """``type: expected_outcomes``: the case's checklist of outcome statements, each judged on
    its own; the check passes only when all of them hold."""

    type: Literal["expected_outcomes"] = "expected_outcomes"
    path: str = "ground_truth.expected_outcomes"
    """Where each case keeps its list of statements."""

    @field_validator("path")
    @classmethod
    def _valid_path(cls, value: str) -> str:
        return parse_path(value)

    @property
    def version(self) -> str:
        """The version of the check it becomes."""
        return f"expected-outcomes/1+{DEFAULT_FORMATTER.ident}"

    def bind(self, judge: JudgeModel) -> ExpectedOutcomesCheck:
        """The checklist check that asks ``judge``."""
        return ExpectedOutcomesCheck(judge=judge, path=self.path)


class FaithfulnessSpec(NeedsJudge):
    """``type: faithfulness``: the final answer's statements must follow from the trace."""

    type: Literal["faithfulness"] = "faithfulness"
    threshold: float = Field(default=0.8, ge=0.0, le=1.0)
    """The score at which the check passes."""
    weighted: bool = False
    """Weight statements by importance (padding counts ``padding_weight``)."""
    padding_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    """The weight of a padding statement when ``weighted``."""

    @property
    def version(self) -> str:
        """The version of the check it becomes."""
        return f"faithfulness/1+{DEFAULT_FORMATTER.ident}"

    def bind(self, judge: JudgeModel) -> FaithfulnessCheck:
        """The metric, asking ``judge``."""
        return FaithfulnessCheck(
            judge=judge,
            threshold=self.threshold,
            weighted=self.weighted,
            padding_weight=self.padding_weight,
        )


class GoalAccuracySpec(NeedsJudge):
    """``type: goal_accuracy``: did the run achieve the user's goal (inferred, or a reference)?"""

    type: Literal["goal_accuracy"] = "goal_accuracy"
    reference_path: str | None = None
    """Where the case keeps a reference goal; without it the goal is inferred from the trace."""

    @field_validator("reference_path")
    @classmethod
    def _valid_reference(cls, value: str | None) -> str | None:
        return None if value is None else parse_path(value)

    @property
    def version(self) -> str:
        """The version of the check it becomes."""
        return goal_accuracy_version(self.reference_path is not None)

    def bind(self, judge: JudgeModel) -> GoalAccuracyCheck:
        """The metric, asking ``judge``."""
        return GoalAccuracyCheck(judge=judge, reference_path=self.reference_path)


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
    sub_questions: list[str] = Field(default_factory=list)
    """Its yes/no questions in binary mode (default: the description)."""


class GradedSpec(NeedsJudge):
    """``type: graded``: the 0-5 graded judge over weighted metrics (default: the eight)."""

    type: Literal["graded"] = "graded"
    mode: Literal["scale", "binary"] = "scale"
    """0-5 scores, or each metric's yes/no sub-questions."""
    pass_threshold: float = Field(default=75.0, ge=0.0, le=100.0)
    """The overall score (out of 100) at which the check passes."""
    weights: dict[str, float] = Field(default_factory=dict)
    """Weight overrides by metric name (renormalized)."""
    exclude: list[str] = Field(default_factory=list)
    """Metrics to drop."""
    add: list[AddedMetric] = Field(default_factory=list)
    """Metrics to add."""

    @model_validator(mode="after")
    def _valid_overrides(self) -> GradedSpec:
        self.metrics()  # raises ValueError naming the bad override
        return self

    def with_weights(self, weights: Mapping[str, float]) -> GradedSpec:
        """A copy with ``weights`` overriding the suite's (a run's overrides).

        Raises:
            ValueError: a weight names an unknown metric or is negative.
        """
        copy = self.model_copy(update={"weights": {**self.weights, **weights}})
        copy.metrics()
        return copy

    def metrics(self) -> tuple[GradedMetric, ...]:
        """The metric set after this suite's overrides."""
        added = [
            GradedMetric(a.name, a.weight, a.tier, a.description, tuple(a.sub_questions), a.binary)
            for a in self.add
        ]
        return configure(weights=self.weights, exclude=self.exclude, add=added)

    @property
    def version(self) -> str:
        """The version of the check it becomes."""
        return f"graded-{self.mode}/1+{DEFAULT_FORMATTER.ident}"

    def bind(self, judge: JudgeModel) -> GradedJudgeCheck:
        """The graded judge, asking ``judge``."""
        return GradedJudgeCheck(judge, self.metrics(), self.pass_threshold, self.mode)


_SKIPPED = not_applicable(f"skipped: {NO_JUDGE_HINT}")
