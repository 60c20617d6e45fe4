"""Turning a case into the text a judge reads. The formatter is part of the metric: its name
and version are recorded with every judge verdict, so runs stay comparable.

Everything the agent produced is untrusted: it is placed between tags, and any tag-like text
inside it is neutralized so it cannot close the block and speak to the judge directly.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..core import MISSING, Case, FieldPath, Step
from ._view import TraceView

_TAG = re.compile(r"</?\s*(agent_[a-z_]+|task_input|reference)\s*>", re.IGNORECASE)


def _neutralize(text: str) -> str:
    """Break any tag of ours inside untrusted text: ``</agent_trace>`` -> ``&lt;/agent_trace>``."""
    return _TAG.sub(lambda m: "&lt;" + m.group(0)[1:], text)


def _dump(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def block(tag: str, body: str) -> str:
    """``<tag>`` … ``</tag>`` around neutralized ``body``."""
    return f"<{tag}>\n{_neutralize(body)}\n</{tag}>"


@dataclass(frozen=True, slots=True)
class TraceFormatter:
    """The default formatter: input, numbered steps, final state and the final answer.

    ``name`` and ``version`` identify the rendering; bump the version when it changes.
    """

    name: str = "plain"
    version: str = "2"
    max_chars_per_step: int = 2000
    view: TraceView | None = None
    """What of the trace is shown (a check's ``trace:`` key); None: every step."""

    @property
    def ident(self) -> str:
        """``name@version``, as recorded with verdicts; with a view, ``+view(...)`` after it
        (what the judge reads changed only where a check set one)."""
        base = f"{self.name}@{self.version}"
        return base if self.view is None else f"{base}+{self.view.tag}"

    def steps(self, steps: list[tuple[int, Step]]) -> str:
        """The trace block's body for ``steps`` (numbered), through the view when there is
        one."""
        if self.view is None:
            return "\n".join(self.step(i, s) for i, s in steps)
        return "\n".join(self.view.lines(steps, self.step))

    def step(self, index: int, step: Step) -> str:
        """One line (or a few) for one step."""
        if step.kind == "tool_call":
            text = f"[{index}] tool_call {step.name}({_dump(step.arguments or {})})"
            if step.result is not None:
                text += f" -> {_dump(step.result)}"
            if step.error:
                text += f" !! error: {step.error}"
        elif step.kind == "event":
            text = f"[{index}] event {step.name}" + (f": {step.content}" if step.content else "")
        else:
            text = f"[{index}] {step.kind}: {step.content or ''}"
        limit = self.max_chars_per_step
        return text if len(text) <= limit else text[: limit - 1] + "…"

    def state(self, case: Case) -> list[str]:
        """The final state's block (none when it is empty), or, when the view lists
        ``fields``, a block of those paths' values."""
        fields = self.view.fields if self.view is not None else None
        if fields is None:
            return [block("agent_final_state", _dump(case.final_state))] if case.final_state else []
        limit = self.max_chars_per_step
        lines = []
        for text in fields:
            value = FieldPath.parse(text).getter(case)
            shown = "(missing)" if value is MISSING else _dump(value)
            line = f"{text}: {shown}"
            lines.append(line if len(line) <= limit else line[: limit - 1] + "…")
        return [block("agent_fields", "\n".join(lines))]

    def format(self, case: Case) -> str:
        """The whole case as judge-readable text, untrusted parts delimited."""
        parts = [block("task_input", _dump(case.input))]
        steps = self.steps(list(enumerate(case.trace, start=1)))
        parts.append(block("agent_trace", steps or "(no steps)"))
        parts.extend(self.state(case))
        parts.append(block("agent_final_answer", case.output or "(no answer)"))
        return "\n\n".join(parts)

    def format_context(self, case: Case) -> str:
        """What the agent had to go on: the input, the trace without the final answer, and the
        final state. Claims of the final answer are checked against this."""
        answer = case.output
        steps = [
            (i, s)
            for i, s in enumerate(case.trace, start=1)
            if not (s.kind == "assistant" and s.content == answer)
        ]
        parts = [block("task_input", _dump(case.input))]
        parts.append(block("agent_trace", self.steps(steps) or "(no steps)"))
        parts.extend(self.state(case))
        return "\n\n".join(parts)


DEFAULT_FORMATTER = TraceFormatter()
"""The formatter judge checks use unless told otherwise."""
