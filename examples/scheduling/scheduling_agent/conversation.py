"""The scheduling agent in a conversation: ``converse`` is called once per user turn.

It gets the conversation so far as chat messages (``{"role", "content"}``, the user's newest
message last) and returns this turn's new steps and its state. It keeps no memory between
calls: each call replays the user's messages to know where the conversation stands, as an
agent behind a stateless endpoint would.

What it understands after the first request: a correction of the day or the time ("Sorry, I
meant Wednesday", "make it 14:00"), which rebooks the meeting at the corrected slot, and the
acceptance of an offered alternative ("12:00 works", "yes, the first one"), which books it.
A "thanks" or "bye" ends the conversation (``final_state["conversation"] = "ended"``).
"""

from __future__ import annotations

import re
from typing import Any

from .agent import run
from .parser import parse

_CLOCK = re.compile(r"\b(\d{1,2}:\d{2})\b")
_ACCEPT = re.compile(r"\b(yes|ok|okay|sure|works|first one|fine)\b", re.I)
_GOODBYE = re.compile(r"\b(thanks|thank you|bye|that's all)\b", re.I)


def converse(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """This turn's steps and state, for the conversation ``messages``."""
    said = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    request, outcome = said[0], run({"message": said[0]})
    for message in said[1:]:
        if _GOODBYE.search(message) and not _CLOCK.search(message):
            reply = "You're welcome. Goodbye!"
            state = {**outcome["final_state"], "conversation": "ended"}
            return {"trace": [{"kind": "assistant", "content": reply}], "final_state": state}
        request = _next_request(request, message, outcome["final_state"])
        outcome = run({"message": request})
    trace = outcome["trace"][1:]  # run() starts with the request as a user step: not news
    return {"trace": trace, "final_state": outcome["final_state"]}


def _next_request(request: str, message: str, state: dict[str, Any]) -> str:
    """The request as the user's latest message amends it."""
    first = parse(request)
    offered = state.get("scheduling_context", {}).get("proposed_alternatives") or []
    chosen = _accepted(message, offered)
    date, time = (chosen["date"], chosen["time"]) if chosen else (first.date, first.time)
    if chosen is None:
        fix = parse(message)
        date, time = fix.date or first.date, fix.time or first.time
    people = " and ".join(first.names)
    return f"Book {first.duration} minutes with {people} on {date} at {time}"


def _accepted(message: str, offered: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The offered slot the user takes: the one whose time they name, or the first on a yes."""
    if not offered:
        return None
    named = _CLOCK.search(message)
    if named is not None:
        return next((o for o in offered if o["time"] == named.group(1).zfill(5)), None)
    return offered[0] if _ACCEPT.search(message) else None
