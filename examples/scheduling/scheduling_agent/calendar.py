"""The fixed world the agent schedules in: one team, one working week, busy slots."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

WORKDAY_START = "09:00"
"""The earliest time a meeting may start."""
WORKDAY_END = "17:00"
"""The latest time a meeting may end."""
MIN_DURATION = 15
"""The shortest meeting the agent books, in minutes."""
MAX_DURATION = 240
"""The longest meeting the agent books, in minutes."""

WEEK: dict[str, str] = {
    "2025-03-03": "Monday",
    "2025-03-04": "Tuesday",
    "2025-03-05": "Wednesday",
    "2025-03-06": "Thursday",
    "2025-03-07": "Friday",
}
"""The bookable days, date -> weekday."""

TEAM: tuple[str, ...] = ("Alice", "Bob", "Carol", "Dan", "Erin", "Frank", "Grace", "Heidi")
"""The people the agent may invite."""

FORMER_MEMBERS: tuple[str, ...] = ("Zoe", "Ivan", "Judy")
"""People who left the team but are still in the company directory."""


@dataclass(frozen=True, slots=True)
class Busy:
    """One busy block in someone's calendar."""

    person: str
    date: str
    start: str
    end: str
    title: str


BUSY: dict[str, tuple[Busy, ...]] = {
    "2025-03-03": (
        Busy("Alice", "2025-03-03", "09:00", "10:00", "Planning"),
        Busy("Alice", "2025-03-03", "13:00", "14:00", "Lunch & learn"),
        Busy("Bob", "2025-03-03", "10:00", "11:00", "Interview"),
        Busy("Bob", "2025-03-03", "15:00", "16:00", "Vendor call"),
        Busy("Carol", "2025-03-03", "11:00", "12:00", "Design review"),
        Busy("Dan", "2025-03-03", "14:00", "15:30", "Budget review"),
        Busy("Erin", "2025-03-03", "09:00", "09:30", "Standup"),
        Busy("Grace", "2025-03-03", "16:00", "17:00", "Customer demo"),
    ),
    "2025-03-04": (
        Busy("Alice", "2025-03-04", "14:00", "15:00", "Roadmap sync"),
        Busy("Bob", "2025-03-04", "09:00", "09:30", "Standup"),
        Busy("Bob", "2025-03-04", "13:00", "13:30", "Check-in"),
        Busy("Carol", "2025-03-04", "10:00", "11:30", "Hiring panel"),
        Busy("Dan", "2025-03-04", "11:00", "12:00", "Ops review"),
        Busy("Frank", "2025-03-04", "15:00", "16:00", "Training"),
        Busy("Heidi", "2025-03-04", "09:00", "12:00", "Workshop"),
    ),
    "2025-03-05": (
        Busy("Alice", "2025-03-05", "10:00", "10:30", "1:1"),
        Busy("Bob", "2025-03-05", "11:00", "12:00", "Architecture review"),
        Busy("Carol", "2025-03-05", "14:00", "14:15", "Quick check-in"),
        Busy("Erin", "2025-03-05", "13:00", "14:00", "Lunch meeting"),
        Busy("Grace", "2025-03-05", "09:00", "10:00", "Standup"),
        Busy("Heidi", "2025-03-05", "15:00", "16:30", "Board prep"),
    ),
    "2025-03-06": (
        Busy("Alice", "2025-03-06", "09:00", "12:00", "Offsite"),
        Busy("Bob", "2025-03-06", "14:00", "15:00", "Interview"),
        Busy("Dan", "2025-03-06", "10:00", "11:00", "Incident review"),
        Busy("Dan", "2025-03-06", "15:30", "16:30", "Vendor call"),
        Busy("Frank", "2025-03-06", "13:00", "14:00", "Lunch & learn"),
        Busy("Grace", "2025-03-06", "11:00", "12:00", "Design review"),
    ),
    "2025-03-07": (
        Busy("Bob", "2025-03-07", "15:00", "16:30", "Retro"),
        Busy("Carol", "2025-03-07", "09:00", "10:00", "Planning"),
        Busy("Erin", "2025-03-07", "12:00", "13:00", "Lunch meeting"),
        Busy("Frank", "2025-03-07", "16:00", "17:00", "Release"),
        Busy("Heidi", "2025-03-07", "14:00", "17:00", "Conference talk"),
    ),
}
"""Busy blocks per bookable day."""


def to_minutes(hhmm: str) -> int:
    """Minutes since midnight of an ``HH:MM`` time."""
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)


def to_hhmm(minutes: int) -> str:
    """The ``HH:MM`` form of minutes since midnight."""
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def next_day(day: str) -> str:
    """The calendar day after ``day`` (``YYYY-MM-DD``), weekends included."""
    return (date.fromisoformat(day) + timedelta(days=1)).isoformat()


def weekday_of(day: str) -> str:
    """The weekday name of ``day`` (``YYYY-MM-DD``)."""
    return date.fromisoformat(day).strftime("%A")
