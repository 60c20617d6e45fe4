"""Rule-based reading of a scheduling request.

The rules are what a first version of such a parser typically looks like, limitations included:

- names are the capitalized words that are not calendar or command words, so a lowercase name is
  missed and a capitalized meeting title ("Standup") is read as a person;
- only the first date in the message counts, so a later correction is ignored;
- "pm" adds twelve hours even to 12 o'clock, and "half past two" keeps only the hour;
- a bare hour ("at 2") is moved to the afternoon, a bare clock time ("at 2:30") is not;
- "an hour and a half" matches the "an hour" rule;
- any "if ... busy" clause is read as permission to book the next free slot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .calendar import WEEK

DEFAULT_DURATION = 30
"""Minutes, when the request names no duration."""

_WEEKDAYS: dict[str, str] = {name.lower(): day for day, name in WEEK.items()} | {
    "saturday": "2025-03-08",
    "sunday": "2025-03-09",
}

_NUMBER_WORDS: dict[str, int] = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}

_CALENDAR_WORDS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday March"
_COMMAND_WORDS = (
    "Book Schedule Set Please Can Could Would Find Put Add Arrange Organize Organise If Hi Hey "
    "Hello Thanks Thank Need Let Make The An Also Actually Sorry Meeting Sync Call Just We Our "
    "Get Okay Ok Sure Yes No Then And Or With For At On In Next This"
)
_NOT_NAMES = frozenset((_CALENDAR_WORDS + " " + _COMMAND_WORDS).split(" "))

_SCHEDULING_WORDS = re.compile(
    r"\b(book|schedule|set up|arrange|organi[sz]e|put|add|meeting|sync|call|catch[- ]up)\b", re.I
)
_CAPITALIZED = re.compile(r"\b[A-Z][a-z]+\b")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_DAY = re.compile(r"\bmarch\s+(\d{1,2})(?:st|nd|rd|th)?\b", re.I)
_WEEKDAY = re.compile(r"\b(" + "|".join(_WEEKDAYS) + r")\b", re.I)
_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})\s*(am|pm)?\b", re.I)
_HOUR_AMPM = re.compile(r"\b(\d{1,2})\s*(am|pm)\b", re.I)
_NOON = re.compile(r"\bnoon\b", re.I)
_WORD_HOUR = re.compile(r"\b(?:at|past|around)\s+(" + "|".join(_NUMBER_WORDS) + r")\b", re.I)
_BARE_HOUR = re.compile(r"\bat\s+(\d{1,2})\b(?!:)", re.I)
_MINUTES = re.compile(r"\b(\d+)\s*-?\s*(?:minutes?|mins?)\b", re.I)
_HOURS = re.compile(r"\b(\d+(?:\.\d+)?)\s*-?\s*(?:hours?|hrs?)\b", re.I)
_HALF_HOUR = re.compile(r"\bhalf(?:\s+an|-an)?[\s-]+hour\b", re.I)
_AN_HOUR = re.compile(r"\b(?:an|one)\s+hour\b", re.I)
_WORD_HOURS = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\s+hours?\b", re.I)
_IF_BUSY = re.compile(r"\bif\b[^.?!]*\b(?:busy|taken|booked|unavailable)\b", re.I)
_ON_CALENDAR = re.compile(r"\b(?:put|add)\b.*\b(?:on|to|in)\s+(?:the|our|my)\s+calendar\b", re.I)


@dataclass(frozen=True, slots=True)
class ParsedRequest:
    """What the parser understood."""

    is_scheduling: bool
    """Whether the message asks for a meeting at all."""
    names: tuple[str, ...]
    """The people named, in order of appearance."""
    date: str | None
    """The requested day, ``YYYY-MM-DD``."""
    time: str | None
    """The requested start, ``HH:MM`` (not validated: may be ``24:30``)."""
    duration: int
    """Minutes."""
    duration_given: bool
    """Whether the message named a duration."""
    auto_rebook: bool
    """Whether the user allowed booking another slot when the requested one is busy."""
    direct_insert: bool
    """Whether the user asked to put the meeting straight on the calendar."""

    def describe(self) -> str:
        """A one-line summary for the trace."""
        return (
            f"participants={list(self.names)} date={self.date} time={self.time} "
            f"duration={self.duration} auto_rebook={self.auto_rebook} "
            f"direct_insert={self.direct_insert}"
        )


def parse(message: str) -> ParsedRequest:
    """Read a scheduling request."""
    duration, given = _duration(message)
    return ParsedRequest(
        is_scheduling=bool(_SCHEDULING_WORDS.search(message)),
        names=_names(message),
        date=_date(message),
        time=_time(message),
        duration=duration,
        duration_given=given,
        auto_rebook=bool(_IF_BUSY.search(message)),
        direct_insert=bool(_ON_CALENDAR.search(message)),
    )


def _names(message: str) -> tuple[str, ...]:
    found: list[str] = []
    for word in _CAPITALIZED.findall(message):
        if word not in _NOT_NAMES and word not in found:
            found.append(word)
    return tuple(found)


def _date(message: str) -> str | None:
    iso = _ISO_DATE.search(message)
    if iso:
        return iso.group(0)
    month_day = _MONTH_DAY.search(message)
    if month_day:
        return f"2025-03-{int(month_day.group(1)):02d}"
    weekday = _WEEKDAY.search(message)
    if weekday:
        return _WEEKDAYS[weekday.group(1).lower()]
    return None


def _time(message: str) -> str | None:
    clock = _CLOCK.search(message)
    if clock:
        return _fmt(_with_meridiem(int(clock.group(1)), clock.group(3)), int(clock.group(2)))
    hour_ampm = _HOUR_AMPM.search(message)
    if hour_ampm:
        return _fmt(_with_meridiem(int(hour_ampm.group(1)), hour_ampm.group(2)), 0)
    if _NOON.search(message):
        return "12:00"
    word = _WORD_HOUR.search(message)
    if word:
        return _fmt(_afternoon(_NUMBER_WORDS[word.group(1).lower()]), 0)
    bare = _BARE_HOUR.search(message)
    if bare:
        return _fmt(_afternoon(int(bare.group(1))), 0)
    return None


def _with_meridiem(hour: int, meridiem: str | None) -> int:
    if meridiem is not None and meridiem.lower() == "pm":
        return hour + 12
    return hour


def _afternoon(hour: int) -> int:
    """Nobody meets at 2 in the morning: small bare hours are afternoon hours."""
    return hour + 12 if hour < 8 else hour


def _fmt(hour: int, minute: int) -> str:
    return f"{hour:02d}:{minute:02d}"


def _duration(message: str) -> tuple[int, bool]:
    minutes = _MINUTES.search(message)
    if minutes:
        return int(minutes.group(1)), True
    hours = _HOURS.search(message)
    if hours:
        return round(float(hours.group(1)) * 60), True
    if _HALF_HOUR.search(message):
        return 30, True
    if _AN_HOUR.search(message):
        return 60, True
    word_hours = _WORD_HOURS.search(message)
    if word_hours:
        return _NUMBER_WORDS[word_hours.group(1).lower()] * 60, True
    return DEFAULT_DURATION, False
