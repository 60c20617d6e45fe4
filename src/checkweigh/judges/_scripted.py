"""A judge that answers from a script: for tests and examples, with no network."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeAlias

from ._model import JudgeError, JudgeReply, JudgeRequest

ScriptItem: TypeAlias = str | Exception | Callable[[JudgeRequest], str]
"""A reply text, an exception to raise, or a function of the request that returns the text."""


class ScriptedJudge:
    """Answers each call with the next item of ``script`` and records every request.

    When the script runs out the call fails with :class:`JudgeError`, so a test that makes
    more calls than it planned fails loudly.
    """

    def __init__(self, script: Iterable[ScriptItem], *, model: str = "scripted") -> None:
        self._script = list(script)
        self._model = model
        self.requests: list[JudgeRequest] = []

    @property
    def name(self) -> str:
        """``scripted:<model>``."""
        return f"scripted:{self._model}"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """The next scripted answer."""
        self.requests.append(request)
        if not self._script:
            raise JudgeError(
                f"{self.name}: script exhausted after {len(self.requests) - 1} call(s)"
            )
        item = self._script.pop(0)
        if isinstance(item, Exception):
            raise item
        text = item(request) if callable(item) else item
        return JudgeReply(text=text, model=self._model)
