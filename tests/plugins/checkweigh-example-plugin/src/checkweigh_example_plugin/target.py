"""The ``echo`` target kind: an agent that answers each case with its input, after a prefix.

A whole target kind in one file: its spec (the suite's ``target:`` block), the checks made
when the suite loads, and the driver that runs each case. A suite uses it as::

    target: {kind: echo, prefix: "you said: ", state_key: echoed}
    target: {kind: echo, prefix_file: prefix.txt}   # the prefix kept in a file beside it
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from checkweigh.core import Step
from checkweigh.errors import InputError
from checkweigh.runs.targets import AgentRun, TargetRequest
from checkweigh.suites import TargetSpecBase


class EchoSpec(TargetSpecBase):
    """``target: {kind: echo, ...}``: the limits every kind has, and the echo's own fields."""

    prefix: str = ""
    """Put before the case's input in the answer."""
    prefix_file: str | None = None
    """A file (relative to the suite's folder) whose text is the prefix, instead."""
    state_key: str = Field(default="echoed", min_length=1)
    """The key of the final state that holds the answer."""
    upper: bool = False
    """Answer in capitals."""

    @field_validator("state_key")
    @classmethod
    def _plain_key(cls, value: str) -> str:
        if "." in value:
            raise ValueError(f"expected a key without dots, got {value!r}")
        return value


class EchoTarget:
    """Answers each case (or each conversation turn) with its input, after ``prefix``."""

    kind = "echo"
    spec = EchoSpec

    def __init__(self, spec: EchoSpec, prefix: str) -> None:
        self.config = spec
        self.prefix = prefix

    @classmethod
    def check(cls, spec: EchoSpec, base: Path, *, load_agent: bool) -> None:
        """When the suite loads: the prefix file must be there (and not beside a prefix).

        Raises:
            InputError: naming the field within target.
        """
        if spec.prefix_file is None:
            return
        if spec.prefix:
            raise InputError("give prefix or prefix_file, not both", field="prefix_file")
        if not (base / spec.prefix_file).is_file():
            raise InputError(f"file not found: {base / spec.prefix_file}", field="prefix_file")

    @classmethod
    def build(cls, spec: EchoSpec, base: Path) -> EchoTarget:
        """The driver for one run (the prefix file is read now)."""
        if spec.prefix_file is None:
            return cls(spec, spec.prefix)
        return cls(spec, (base / spec.prefix_file).read_text(encoding="utf-8").rstrip("\n"))

    async def run(self, request: TargetRequest) -> AgentRun:
        """The answer: the input (in a conversation, the user's newest message)."""
        said = request.history[-1].content if request.conversational else request.case.input
        text = said if isinstance(said, str) else json.dumps(said, sort_keys=True)
        answer = self.prefix + (text.upper() if self.config.upper else text)
        state: dict[str, Any] = {self.config.state_key: answer}
        return AgentRun(trace=[Step(kind="assistant", content=answer)], final_state=state)

    async def aclose(self) -> None:
        """Nothing to release."""
