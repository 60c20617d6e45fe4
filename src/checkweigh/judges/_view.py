"""What of a case's trace a judge check shows its judge (its ``trace:`` key), and the cut
that keeps a long trace's head and tail and says what it left out.

The steps keep their numbers in the trace, so the judge (and a person reading the prompt) can
tell where the shown ones sit; every omission is a visible line in the trace block. A check
without ``trace:`` renders exactly as before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..core import FieldPath, PathSyntaxError, Step, StepKind

Numbered = tuple[int, Step]
"""A step and its number in the whole trace (1-based)."""


class TraceView(BaseModel):
    """A judge check's ``trace:`` key: which steps it shows, and at most how many.

    Filters apply in order: ``last_turns``, then ``steps`` (or ``tool_calls_only``), then the
    cut to ``max_steps`` and to ``max_chars``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    last_turns: int | None = Field(default=None, ge=1)
    """Only the last N turns: the steps from the N-th last user step on."""
    steps: tuple[StepKind, ...] | None = Field(default=None, min_length=1)
    """Only steps of these kinds (``user``, ``assistant``, ``tool_call``, ``system``,
    ``event``)."""
    tool_calls_only: bool = False
    """Only tool calls: short for ``steps: [tool_call]``."""
    max_steps: int | None = Field(default=None, ge=2)
    """At most this many steps: the first half and the last half are kept, the middle cut
    and replaced by a line that says which steps of which kinds were cut."""
    max_chars: int | None = Field(default=None, ge=200)
    """At most about this many characters of trace: steps from the head and from the tail, up
    to half each (at least the first and the last), the middle cut and said so."""
    fields: tuple[str, ...] | None = Field(default=None, min_length=1)
    """Case paths shown in place of the whole final state (``final_state.booking``,
    ``metadata.channel``), each as ``path: value``; a path the case does not hold shows as
    ``(missing)``."""

    @field_validator("fields")
    @classmethod
    def _paths(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        for text in value or ():
            try:
                FieldPath.parse(text)
            except PathSyntaxError as exc:
                raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="after")
    def _one_kind_filter(self) -> TraceView:
        if self.tool_calls_only and self.steps is not None:
            raise ValueError("give steps or tool_calls_only, not both")
        return self

    @property
    def kinds(self) -> tuple[StepKind, ...] | None:
        """The kinds of step shown, None for all."""
        return ("tool_call",) if self.tool_calls_only else self.steps

    @property
    def tag(self) -> str:
        """The view in a check's version: ``view(last_turns=2,max_steps=40)``."""
        given = self.model_dump(exclude_defaults=True)
        if "tool_calls_only" in given:
            given["steps"] = ("tool_call",)
            del given["tool_calls_only"]
        parts = [
            f"{k}={'|'.join(v) if isinstance(v, tuple | list) else v}"
            for k, v in sorted(given.items())
        ]
        return f"view({','.join(parts)})"

    def lines(self, steps: Sequence[Numbered], render: Callable[[int, Step], str]) -> list[str]:
        """The trace block's lines for ``steps`` (numbered), as this view shows them."""
        notes, shown = self._select(steps)
        rendered = [render(n, s) for n, s in shown]
        count = len(shown)
        head, tail = count, 0
        if self.max_steps is not None and count > self.max_steps:
            head = (self.max_steps + 1) // 2
            tail = self.max_steps - head
        if self.max_chars is not None:
            kept = rendered[:head] + rendered[count - tail :]
            if sum(len(line) + 1 for line in kept) > self.max_chars:
                budget = self.max_chars // 2
                head = _fit(rendered[:head], budget)
                pool = rendered[head:][::-1]
                tail = _fit(pool[:tail] if tail else pool, budget)
        cut = shown[head : count - tail]
        if not cut:
            return notes + rendered
        marker = _omitted(cut, "cut")
        return [*notes, *rendered[:head], marker, *rendered[count - tail :]]

    def _select(self, steps: Sequence[Numbered]) -> tuple[list[str], list[Numbered]]:
        """The notes on what was left out, and the steps the filters keep."""
        shown = list(steps)
        notes: list[str] = []
        if self.last_turns is not None:
            users = [i for i, (_, s) in enumerate(shown) if s.kind == "user"]
            if len(users) > self.last_turns:
                start = users[-self.last_turns]
                before = f"not shown, before the last {self.last_turns} turn(s)"
                notes.append(_omitted(shown[:start], before))
                shown = shown[start:]
        kinds = self.kinds
        if kinds is not None:
            kept = [(n, s) for n, s in shown if s.kind in kinds]
            notes.append(f"[showing {', '.join(kinds)} steps only: {len(kept)} of {len(steps)}]")
            shown = kept
        return notes, shown


def _fit(lines: Sequence[str], budget: int) -> int:
    """How many of ``lines``, from the first, fit in ``budget`` characters (at least one)."""
    used = taken = 0
    for line in lines:
        used += len(line) + 1
        if used > budget and taken:
            break
        taken += 1
    return taken


def _omitted(steps: Sequence[Numbered], what: str) -> str:
    """``[... 412 step(s) cut: steps 21-432 (tool_call 300, assistant 112) ...]``."""
    counts = Counter(s.kind for _, s in steps)
    kinds = ", ".join(f"{k} {n}" for k, n in counts.most_common())
    first, last = steps[0][0], steps[-1][0]
    where = f"step {first}" if first == last else f"steps {first}-{last}"
    return f"[... {len(steps)} step(s) {what}: {where} ({kinds}) ...]"
