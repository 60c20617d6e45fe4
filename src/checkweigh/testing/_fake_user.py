"""A scripted simulated user, for the fake LLM server: deterministic conversations in tests.

:func:`scripted_users` gives a ``respond`` function for :func:`fake_llm_server` that answers
the simulated-user calls of a run from a script: for each user goal, the messages of its
turns in order, then ``done``. The goal and the turn are read from the prompt the simulator
sends, so each conversation gets its own script, whatever order the cases run in.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._fake_llm import Reply

_GOAL = re.compile(r"<user_goal>\n(.*?)\n</user_goal>", re.S)
_TURN = re.compile(r"This is turn (\d+)\b")


def scripted_users(
    script: Mapping[str, Sequence[str]],
) -> Callable[[dict[str, Any]], Reply | None]:
    """A ``respond`` function for an OpenAI-wire :func:`fake_llm_server`: the simulated user
    whose goal is a key of ``script`` says its messages in turn, then that it is done.

    A request that is not a simulator call, or whose goal is not in ``script``, is left to
    the server's script (None).
    """

    def respond(body: dict[str, Any]) -> Reply | None:
        messages = body.get("messages") or []
        prompt = messages[-1].get("content") if messages else None
        if not isinstance(prompt, str):
            return None
        goal, turn = _GOAL.search(prompt), _TURN.search(prompt)
        if goal is None or turn is None or goal.group(1) not in script:
            return None
        lines, n = script[goal.group(1)], int(turn.group(1)) - 1
        answer = {"done": False, "message": lines[n]} if n < len(lines) else {"done": True}
        return Reply(json.dumps(answer))

    return respond
