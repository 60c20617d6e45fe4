"""The scheduling agent: parse the request, call the calendar tools, reply.

``run`` is the target a checkweigh suite calls: it takes a case's input and returns the trace
and the final state. Everything is deterministic, including the latencies recorded on the
steps, which are derived from the work each step did.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from difflib import get_close_matches
from functools import partial
from typing import Any, TypeVar

from .calendar import (
    BUSY,
    FORMER_MEMBERS,
    MAX_DURATION,
    MIN_DURATION,
    TEAM,
    WEEK,
    WORKDAY_END,
    WORKDAY_START,
    Busy,
    next_day,
    to_hhmm,
    to_minutes,
    weekday_of,
)
from .parser import ParsedRequest, parse

T = TypeVar("T")

SLOT_STEP = 30
"""Minutes between candidate start times when searching for alternatives."""
MAX_ALTERNATIVES = 3
"""How many alternatives the agent proposes."""


class NeedsInput(Exception):
    """The agent stops to ask the user something."""

    def __init__(self, reply: str, error_type: str | None, *, question: bool = True) -> None:
        super().__init__(reply)
        self.reply = reply
        self.error_type = error_type
        self.question = question


@dataclass
class _Run:
    """The trace being recorded and the state being built."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    stage: str = "completed"
    reply: str = ""
    booked_event: dict[str, Any] | None = None
    conflicts: list[dict[str, str]] = field(default_factory=list)
    alternatives: list[dict[str, Any]] = field(default_factory=list)
    error: dict[str, str] | None = None
    asked: bool = False

    def say(self, kind: str, content: str, latency_ms: float | None = None) -> None:
        step: dict[str, Any] = {"kind": kind, "content": content}
        if latency_ms is not None:
            step["latency_ms"] = latency_ms
        self.steps.append(step)

    def event(self, name: str, content: str) -> None:
        self.steps.append({"kind": "event", "name": name, "content": content, "latency_ms": 1.0})

    def call(self, name: str, arguments: dict[str, Any], tool: Callable[[], tuple[T, float]]) -> T:
        """Run a tool, recording the call, its result (or error) and its latency."""
        step: dict[str, Any] = {"kind": "tool_call", "name": name, "arguments": arguments}
        self.steps.append(step)
        try:
            result, latency = tool()
        except Exception as exc:
            step.update(error=f"{type(exc).__name__}: {exc}", latency_ms=_latency_of(arguments))
            raise
        step.update(result=result, latency_ms=latency)
        return result

    def final_state(self) -> dict[str, Any]:
        booked = self.booked_event is not None
        return {
            "success": booked,
            "stage": self.stage,
            "scheduling_context": {
                "booking_confirmed": booked,
                "booked_event": self.booked_event,
                "conflicts": self.conflicts,
                "proposed_alternatives": self.alternatives,
            },
            "error": self.error,
            "requested_clarification": self.asked,
        }


def run(request: dict[str, Any] | str) -> dict[str, Any]:
    """Handle one request (``{"message": ...}`` or the message itself).

    Returns:
        ``{"trace": [...steps...], "final_state": {...}}``.
    """
    message = request if isinstance(request, str) else str(request.get("message", ""))
    state = _Run()
    state.say("user", message)
    try:
        _schedule(message, state)
    except NeedsInput as ask:
        state.stage = "needs_input"
        state.reply = ask.reply
        state.asked = ask.question
        if ask.error_type is not None:
            state.error = {"type": ask.error_type, "message": ask.reply}
    except Exception as exc:  # noqa: BLE001 -- the agent's runtime swallows crashes silently
        state.stage = "failed"
        state.reply = ""
        state.error = {"type": type(exc).__name__, "message": str(exc)}
    state.say("assistant", state.reply, latency_ms=_reply_latency(state.reply))
    return {"trace": state.steps, "final_state": state.final_state()}


def _schedule(message: str, state: _Run) -> None:
    request = parse(message)
    state.say("system", "parsed " + request.describe(), latency_ms=4.0 + len(message) / 20)
    if not request.is_scheduling:
        raise NeedsInput(
            "I'm not sure what you'd like me to do. Do you want me to book a meeting? Tell me "
            "who should attend, which day (2025-03-03 to 2025-03-07) and what time.",
            "unparseable_request",
        )
    if not request.names:
        raise NeedsInput(
            f"Who should attend the meeting{_when(request)}? I couldn't find any team members "
            f"in your request. The team is {_join(list(TEAM))}.",
            "missing_participants",
        )
    people = _lookup_all(request.names, state)
    date, time, duration = _validated_slot(request, people)
    busy: list[Busy] = []
    if not request.direct_insert:  # "put it on the calendar" is taken as already decided
        busy = state.call(
            "check_availability",
            {"participants": people, "date": date, "time": time, "duration": duration},
            lambda: _check_availability(people, date, time, duration),
        )
    if not busy:
        _book(state, people, date, time, duration)
        state.reply = (
            f"Booked: {_minutes(duration)} meeting with {_join(people)} on "
            f"{weekday_of(date)} {date} at {time}."
        )
        return
    state.conflicts = [_conflict(b) for b in busy]
    state.event("conflict_detected", _busy_sentence(busy))
    alternatives = state.call(
        "find_alternatives",
        {"participants": people, "date": date, "after": time, "duration": duration},
        lambda: _find_alternatives(people, date, time, duration),
    )
    state.alternatives = [{"date": d, "time": t, "duration": duration} for d, t in alternatives]
    if request.auto_rebook and alternatives:
        new_date, new_time = alternatives[0]
        _book(state, people, new_date, new_time, duration)
        state.reply = (
            f"{_busy_sentence(busy)}, so I booked the next free slot instead: "
            f"{_minutes(duration)} meeting with {_join(people)} on {weekday_of(new_date)} "
            f"{new_date} at {new_time}."
        )
        return
    options = [f"{weekday_of(d)} at {t}" for d, t in alternatives]
    raise NeedsInput(
        f"{_busy_sentence(busy)}. Everyone is free {_join(options, 'or')}. Which one should I "
        "book?",
        None,
    )


def _lookup_all(names: tuple[str, ...], state: _Run) -> list[str]:
    people: list[str] = []
    unknown: list[tuple[str, list[str]]] = []
    for name in names:
        found = state.call("lookup_person", {"name": name}, partial(_lookup, name))
        if found["found"]:
            people.append(found["name"])
        else:
            unknown.append((name, found["suggestions"]))
    if unknown:
        raise NeedsInput(_unknown_sentence(unknown), "unknown_person")
    return people


def _validated_slot(request: ParsedRequest, people: list[str]) -> tuple[str, str, int]:
    date, time, duration = request.date, request.time, request.duration
    if date is None:
        raise NeedsInput(
            f"Which day should I book the meeting with {_join(people)}? I can schedule meetings "
            "from Monday 2025-03-03 to Friday 2025-03-07.",
            "missing_date",
        )
    if date not in WEEK:
        if weekday_of(date) in ("Saturday", "Sunday"):
            raise NeedsInput("Date not available.", None, question=False)
        raise NeedsInput(
            f"I can only book meetings in the week of 2025-03-03 to 2025-03-07, and {date} is "
            "outside it. Which day that week works for you?",
            "date_out_of_range",
        )
    if time is None:
        raise NeedsInput(
            f"What time on {weekday_of(date)} {date} should the meeting start? Working hours are "
            f"{WORKDAY_START} to {WORKDAY_END}.",
            "missing_time",
        )
    if duration > MAX_DURATION:
        raise NeedsInput(
            f"ERROR: duration {duration} min exceeds maximum ({MAX_DURATION} min).",
            "invalid_duration",
            question=False,
        )
    if duration < MIN_DURATION:
        raise NeedsInput(
            f"A {duration}-minute meeting is too short to book. How long should it be? Meetings "
            f"can run from {MIN_DURATION} minutes to {MAX_DURATION // 60} hours.",
            "invalid_duration",
        )
    start = to_minutes(time)
    if start < to_minutes(WORKDAY_START) or start + duration > to_minutes(WORKDAY_END):
        raise NeedsInput(
            f"A {_minutes(duration)} meeting at {time} falls outside working hours "
            f"({WORKDAY_START} to {WORKDAY_END}). Could you pick a time that ends by "
            f"{WORKDAY_END}?",
            "outside_working_hours",
        )
    return date, time, duration


def _book(state: _Run, people: list[str], date: str, time: str, duration: int) -> None:
    event = {"participants": people, "date": date, "time": time, "duration": duration}
    state.call("book_meeting", dict(event), lambda: _book_meeting(people, date, time))
    state.booked_event = event
    state.stage = "completed"


# --- tools -------------------------------------------------------------------------------


def _lookup(name: str) -> tuple[dict[str, Any], float]:
    latency = 15.0 + 2.0 * len(name)
    if name in TEAM:
        return {"found": True, "name": name, "email": f"{name.lower()}@example.com"}, latency
    # The suggestions come from the company directory, which still lists people who left.
    directory = list(TEAM) + list(FORMER_MEMBERS)
    suggestions = get_close_matches(name, directory, n=1, cutoff=0.6)
    return {"found": False, "suggestions": suggestions}, latency


def _check_availability(
    people: list[str], date: str, time: str, duration: int
) -> tuple[list[Busy], float]:
    blocks = [b for b in BUSY[date] if b.person in people]
    start = to_minutes(time)
    busy = [b for b in blocks if _touches(b, start, start + duration)]
    return busy, 35.0 + 12.0 * len(people) + 4.0 * len(blocks)


def _touches(block: Busy, start: int, end: int) -> bool:
    """Whether the meeting's start or end falls inside the busy block."""
    b_start, b_end = to_minutes(block.start), to_minutes(block.end)
    return b_start <= start < b_end or b_start < end <= b_end


def _find_alternatives(
    people: list[str], date: str, after: str, duration: int
) -> tuple[list[tuple[str, str]], float]:
    """Search forward from ``after``, day by day, for slots where everyone is free."""
    found: list[tuple[str, str]] = []
    examined = 0
    day, start = date, to_minutes(after) + SLOT_STEP
    while True:
        blocks = [b for b in BUSY[day] if b.person in people]
        while start + duration <= to_minutes(WORKDAY_END):
            examined += 1
            if not any(_touches(b, start, start + duration) for b in blocks):
                found.append((day, to_hhmm(start)))
                if len(found) == MAX_ALTERNATIVES:
                    return found, 50.0 + 6.0 * examined * len(people)
            start += SLOT_STEP
        day, start = next_day(day), to_minutes(WORKDAY_START)


def _book_meeting(people: list[str], date: str, time: str) -> tuple[dict[str, Any], float]:
    event_id = f"evt-{date}-{time.replace(':', '')}-" + "-".join(p.lower() for p in people)
    return {"confirmed": True, "event_id": event_id}, 120.0 + 10.0 * len(people)


# --- wording -----------------------------------------------------------------------------


def _conflict(block: Busy) -> dict[str, str]:
    return {
        "person": block.person,
        "date": block.date,
        "start": block.start,
        "end": block.end,
        "title": block.title,
    }


def _busy_sentence(busy: list[Busy]) -> str:
    parts = [f"{b.person} is busy from {b.start} to {b.end}" for b in busy]
    return f"On {weekday_of(busy[0].date)} {busy[0].date}, " + _join(parts)


def _unknown_sentence(unknown: list[tuple[str, list[str]]]) -> str:
    sentences = []
    for name, suggestions in unknown:
        if suggestions:
            sentences.append(f"I couldn't find {name} on the team. Did you mean {suggestions[0]}?")
        else:
            sentences.append(
                f"I couldn't find {name} on the team. Could you check the name? Team members "
                f"are {_join(list(TEAM))}."
            )
    return " ".join(sentences)


def _when(request: ParsedRequest) -> str:
    """What the request said about the slot, e.g. ' on Tuesday 2025-03-04 at 10:00'."""
    text = ""
    if request.date in WEEK:
        text += f" on {WEEK[request.date]} {request.date}"
    if request.time is not None:
        text += f" at {request.time}"
    return text


def _minutes(duration: int) -> str:
    return f"{duration}-minute"


def _join(items: list[str], last: str = "and") -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {last} " + items[-1]


def _latency_of(arguments: dict[str, Any]) -> float:
    return 20.0 + 5.0 * len(arguments)


def _reply_latency(reply: str) -> float:
    """Writing the reply stands in for the model call: it costs time per character."""
    return 180.0 + 1.5 * len(reply)
