"""The booking agent's tools: a small team calendar, checked and booked in memory.

Each process starts from the same busy slots, so a run is repeatable. A tool's arguments
come from the model: anything wrong with them is a :class:`ToolError`, which the agent
records on the tool's span and sends back to the model as the tool's result.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

BUSY: dict[str, list[tuple[str, int]]] = {
    # person -> (start "YYYY-MM-DD HH:MM", minutes)
    "alice": [("2025-03-04 14:00", 60), ("2025-03-05 09:00", 120)],
    "bob": [("2025-03-04 11:00", 30), ("2025-03-06 15:00", 60)],
    "carol": [("2025-03-03 10:00", 480)],
    "dan": [("2025-03-07 13:00", 90)],
}
"""The team's busy slots in the week of 2025-03-03."""

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "check_availability",
            "description": "Whether every participant is free for the whole slot.",
            "parameters": {
                "type": "object",
                "properties": {
                    "participants": {"type": "array", "items": {"type": "string"}},
                    "start": {"type": "string", "description": "YYYY-MM-DD HH:MM"},
                    "duration_minutes": {"type": "integer"},
                },
                "required": ["participants", "start", "duration_minutes"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "book_meeting",
            "description": "Book the slot for every participant; fails if someone is busy.",
            "parameters": {
                "type": "object",
                "properties": {
                    "participants": {"type": "array", "items": {"type": "string"}},
                    "start": {"type": "string", "description": "YYYY-MM-DD HH:MM"},
                    "duration_minutes": {"type": "integer"},
                    "title": {"type": "string"},
                },
                "required": ["participants", "start", "duration_minutes", "title"],
            },
        },
    },
]
"""The tools as the chat-completions API takes them."""


class ToolError(Exception):
    """A tool call that cannot be carried out (bad arguments, a busy slot)."""


@dataclass
class Calendar:
    """The team's calendar; safe to share between the agent's threads."""

    busy: dict[str, list[tuple[datetime, datetime]]] = field(default_factory=dict)
    booked: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def team(cls) -> Calendar:
        """The calendar with :data:`BUSY` filled in."""
        calendar = cls()
        for person, slots in BUSY.items():
            for start, minutes in slots:
                begin = datetime.strptime(start, "%Y-%m-%d %H:%M")
                calendar.busy.setdefault(person, []).append(
                    (begin, begin + timedelta(minutes=minutes))
                )
        return calendar

    def run(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run the tool ``name``.

        Raises:
            ToolError: an unknown tool, bad arguments, or (booking) a busy participant.
        """
        if name == "check_availability":
            return self.check_availability(**_slot(arguments))
        if name == "book_meeting":
            title = arguments.get("title")
            if not isinstance(title, str) or not title.strip():
                raise ToolError("title: expected a non-empty text")
            return self.book_meeting(title=title, **_slot(arguments))
        raise ToolError(f"no tool named {name!r}")

    def check_availability(
        self, participants: list[str], start: datetime, end: datetime
    ) -> dict[str, Any]:
        """Who is busy in the slot (nobody: available)."""
        with self.lock:
            busy = sorted(p for p in participants if self._clashes(p, start, end))
        return {"available": not busy, "busy": busy}

    def book_meeting(
        self, participants: list[str], start: datetime, end: datetime, title: str
    ) -> dict[str, Any]:
        """Book the slot for everyone.

        Raises:
            ToolError: someone is busy then.
        """
        with self.lock:
            busy = sorted(p for p in participants if self._clashes(p, start, end))
            if busy:
                raise ToolError(f"cannot book: {', '.join(busy)} busy at {start:%Y-%m-%d %H:%M}")
            for person in participants:
                self.busy.setdefault(person, []).append((start, end))
            self.booked += 1
            number = self.booked
        return {"booked": True, "event_id": f"evt-{number:04d}", "title": title}

    def _clashes(self, person: str, start: datetime, end: datetime) -> bool:
        return any(s < end and start < e for s, e in self.busy.get(person, ()))


def _slot(arguments: dict[str, Any]) -> dict[str, Any]:
    people = arguments.get("participants")
    if not isinstance(people, list) or not people or not all(isinstance(p, str) for p in people):
        raise ToolError("participants: expected a non-empty list of names")
    unknown = [p for p in people if p.strip().lower() not in BUSY]
    if unknown:
        raise ToolError(f"participants: nobody called {', '.join(unknown)} on the team")
    try:
        start = datetime.strptime(str(arguments.get("start")), "%Y-%m-%d %H:%M")
    except ValueError:
        got = arguments.get("start")
        raise ToolError(f"start: expected YYYY-MM-DD HH:MM, got {got!r}") from None
    minutes = arguments.get("duration_minutes")
    if type(minutes) is not int or not 5 <= minutes <= 480:
        raise ToolError(f"duration_minutes: expected 5 to 480, got {minutes!r}")
    return {
        "participants": sorted({p.strip().lower() for p in people}),
        "start": start,
        "end": start + timedelta(minutes=minutes),
    }
