"""A scripted tool-calling model, for the fake LLM server: an agent's conversations in tests.

:func:`scripted_agents` gives a ``respond`` function for an OpenAI-wire
:func:`~._fake_llm.fake_llm_server` that plays the model of a tool-calling agent: for each user
request, the model's answers in turn (tool calls, then a reply). The request and the turn are
read from the messages the agent sends, so each conversation follows its own script whatever
order, or however many at once, the agent's requests run in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._fake_llm import Reply


def _text(content: Any) -> str | None:
    """A message's text: a string, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "".join(p for p in parts if isinstance(p, str))
    return None


def agent_turn(body: dict[str, Any]) -> tuple[str, int] | None:
    """The user request a chat-completions request answers (its last user message) and the
    turn (how many assistant messages follow that message); None without a user message."""
    messages = [m for m in body.get("messages") or () if isinstance(m, dict)]
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            text = _text(messages[i].get("content"))
            if text is None:
                return None
            turn = sum(1 for m in messages[i + 1 :] if m.get("role") == "assistant")
            return text, turn
    return None


def scripted_agents(
    script: Mapping[str, Sequence[Reply]],
) -> Callable[[dict[str, Any]], Reply | None]:
    """A ``respond`` function: the model of an agent whose user request is a key of
    ``script`` gives that key's answers in turn (the first to the request itself, the next
    once the agent sends back the first's tool results, and so on).

    A request whose user message is not in ``script``, or that is past its script's end, is
    left to the server's script (None).
    """

    def respond(body: dict[str, Any]) -> Reply | None:
        found = agent_turn(body)
        if found is None:
            return None
        text, turn = found
        answers = script.get(text)
        return answers[turn] if answers is not None and turn < len(answers) else None

    return respond
