"""The scheduling suite's own checks: the criteria that need a little judgment.

Each is a plain function decorated with ``@check``, used from ``suite.yaml`` by dotted path
(``scheduling_agent.checks:clear_explanation``). They are deliberately small heuristics; an
LLM judge can replace any of them later without touching the weights.
"""

from __future__ import annotations

import re
from typing import Any

from checkweigh.checks import check
from checkweigh.core import Case, Verdict, failed, not_applicable, passed

from .calendar import BUSY, TEAM, WEEK, WORKDAY_END, WORKDAY_START

_WEEKDAY_NAMES = frozenset(
    ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
)
_MONTH_NAMES = frozenset(
    [
        *("January", "February", "March", "April", "May", "June"),
        *("July", "August", "September", "October", "November", "December"),
    ]
)
_CAPITALIZED = re.compile(r"\b[A-Z][a-z]+\b")
_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_CLOCK_AMPM = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*(am|pm)\b", re.I)
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_DURATION = re.compile(r"\b(\d+)[\s-]*min(?:ute)?s?\b", re.I)
_WITH_LIST = re.compile(r"\bwith\s+(.*?)(?=\s+(?:on|at|for|next)\b|[.?!;]|$)")
_SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+")
_NEXT_STEP = re.compile(
    r"\?|\b(please|let me know|reply with|you can|could you|pick|choose|try)\b", re.I
)
_BOOKED_WORDS = ("booked", "scheduled", "confirmed")
_CONFLICT_WORDS = ("busy", "conflict", "not available", "unavailable", "taken")
_PROBLEM_WORDS = ("couldn't", "can't", "cannot", "not ", "outside", "too ", "exceed", "only ")


def _has_any(text: str, words: tuple[str, ...]) -> bool:
    """Whether any of ``words`` occurs in ``text`` (a plain loop: cheaper than any() + genexpr)."""
    for word in words:  # noqa: SIM110
        if word in text:
            return True
    return False


def _context(case: Case) -> dict[str, Any]:
    ctx = case.final_state.get("scheduling_context")
    return ctx if isinstance(ctx, dict) else {}


def _truth(case: Case) -> dict[str, Any]:
    return case.ground_truth if isinstance(case.ground_truth, dict) else {}


def _message(case: Case) -> str:
    if isinstance(case.input, dict):
        return str(case.input.get("message", ""))
    return "" if case.input is None else str(case.input)


def _mentions(text: str, word: str) -> bool:
    return re.search(rf"\b{re.escape(word)}\b", text, re.I) is not None


@check
def clear_explanation(case: Case, min_chars: int = 20) -> Verdict:
    """The user can tell what happened: a real reply that states the actual outcome."""
    reply = case.output.strip()
    if len(reply) <= min_chars:
        if case.final_state.get("stage") == "failed":
            return failed(f"silent crash: stage is failed and the reply has {len(reply)} chars")
        return failed(f"reply has only {len(reply)} chars: {reply!r}")
    ctx = _context(case)
    low = reply.lower()
    claims_booking = _has_any(low, _BOOKED_WORDS)
    if ctx.get("booking_confirmed"):
        event = ctx.get("booked_event") or {}
        if not claims_booking:
            return failed("a booking was made but the reply does not say so")
        if str(event.get("time")) not in reply:
            return failed(f"the reply does not give the booked time {event.get('time')}")
        return passed("reply confirms the booking and its time")
    if claims_booking and "not booked" not in low:
        return failed("reply claims a booking, but none was confirmed")
    if ctx.get("conflicts"):
        if _has_any(low, _CONFLICT_WORDS):
            return passed("reply explains the conflict")
        return failed("there was a conflict but the reply does not mention it")
    if "?" in reply or _has_any(low, _PROBLEM_WORDS):
        return passed("reply says what stopped the booking")
    return failed("reply does not say why nothing was booked")


@check
def addresses_request(case: Case) -> Verdict:
    """The reply is about this request: it refers to the people, day or time that were asked."""
    reply = case.output
    if not reply.strip():
        return failed("there is no reply")
    message = _message(case)
    refs = [n for n in TEAM if _mentions(message, n)]
    attendees = " ".join(_WITH_LIST.findall(message))
    refs += [w for w in _CAPITALIZED.findall(attendees) if w not in refs]
    refs += [d for d in sorted(_WEEKDAY_NAMES) if _mentions(message, d)]
    refs += _ISO_DATE.findall(message) + [_hhmm(m) for m in _CLOCK.finditer(message)]
    refs += [f"{m.group(1)}-minute" for m in _DURATION.finditer(message)]
    if not refs:
        if "?" in reply:
            return passed("the request named nothing concrete and the reply asks what is wanted")
        return failed("the request named nothing concrete and the reply does not ask")
    hits = [r for r in refs if _mentions(reply, r)]
    if hits:
        return passed(f"reply refers to {', '.join(hits[:3])}")
    return failed(f"reply mentions none of {', '.join(refs[:4])} from the request")


@check
def provides_next_step(case: Case) -> Verdict:
    """When nothing was booked, the user knows what to do next."""
    if _context(case).get("booking_confirmed"):
        return not_applicable("booking confirmed; nothing is left for the user to do")
    reply = case.output
    found = _NEXT_STEP.search(reply)
    if found:
        return passed(f"reply asks or suggests ({found.group(0)!r})")
    return failed("nothing was booked and the reply leaves the user without a next step")


@check
def no_hallucination(case: Case) -> Verdict:
    """Every person, date and time in the reply comes from the request, calendar or state."""
    reply = case.output
    if not reply.strip():
        return not_applicable("empty reply: nothing to verify")
    message = _message(case)
    known_words = set(TEAM) | _WEEKDAY_NAMES | _MONTH_NAMES | set(_CAPITALIZED.findall(message))
    for name in _mid_sentence_names(reply):
        if name not in known_words:
            return failed(f"reply names {name!r}, who is not on the team or in the request")
    known_times = _known_times(case, message)
    for match in _CLOCK.finditer(reply):
        hour, minute = int(match.group(1)), int(match.group(2))
        if hour > 23 or minute > 59:
            return failed(f"reply mentions {match.group(0)}, which is not a time of day")
        if _hhmm(match) not in known_times:
            return failed(f"reply mentions {match.group(0)}, which appears nowhere in the context")
    known_dates = set(WEEK) | set(_ISO_DATE.findall(message)) | _state_dates(case)
    for day in _ISO_DATE.findall(reply):
        if day not in known_dates:
            return failed(f"reply mentions {day}, which appears nowhere in the context")
    return passed("every name, date and time in the reply is grounded")


@check
def detected_error(case: Case) -> Verdict:
    """The agent recognized the problem in the request and recorded it (of the expected type)."""
    truth = _truth(case)
    if not truth.get("expect_error"):
        return not_applicable("no error expected in this scenario")
    if _context(case).get("booking_confirmed"):
        return failed("booked a meeting despite the problem")
    error = case.final_state.get("error")
    if not isinstance(error, dict) or not error.get("type"):
        return failed("no error recorded in the final state")
    expected = truth.get("error_type")
    if expected and error["type"] != expected:
        return failed(f"recorded {error['type']!r}, expected {expected!r}")
    return passed(f"recorded {error['type']!r}")


@check
def requested_clarification(case: Case) -> Verdict:
    """The agent asked the user a question to resolve the problem."""
    if not _truth(case).get("expect_error"):
        return not_applicable("no error expected in this scenario")
    asked = case.final_state.get("requested_clarification") is True
    question = "?" in case.output
    if asked and question:
        return passed("asked the user a question")
    if not asked:
        return failed("the agent did not ask the user for anything")
    return failed("requested_clarification is set but the reply asks no question")


@check
def actionable_message(case: Case) -> Verdict:
    """The reply asks for something specific and gives a concrete hint (a name, day or number)."""
    if _context(case).get("booking_confirmed"):
        return not_applicable("booking confirmed; there is nothing to act on")
    reply = case.output
    if not reply.strip():
        return failed("there is no reply")
    if not _NEXT_STEP.search(reply):
        return failed("the reply asks nothing and suggests nothing")
    if re.search(r"\d", reply) or any(_mentions(reply, n) for n in TEAM):
        return passed("the reply asks for something and gives a concrete option")
    return failed("the reply asks, but offers no concrete option")


@check
def no_crash(case: Case) -> Verdict:
    """The agent finished with a reply instead of failing."""
    if case.final_state.get("stage") == "failed":
        error = case.final_state.get("error") or {}
        kind = error.get("type", "unknown error") if isinstance(error, dict) else error
        return failed(f"the run failed ({kind})")
    if not case.output.strip():
        return failed("the run ended without a reply")
    return passed("finished with a reply")


@check
def correct_slot(case: Case) -> Verdict:
    """The booked date and time are the expected ones; an unexpected booking is never correct."""
    truth = _truth(case)
    ctx = _context(case)
    event = ctx.get("booked_event") if ctx.get("booking_confirmed") else None
    if not isinstance(event, dict):
        event = None
    if not truth.get("expect_booking"):
        if event is not None:
            booked = f"{event.get('date')} {event.get('time')}"
            return failed(f"booked {booked} although no booking was expected")
        return _NOTHING_TO_BOOK
    if event is None:
        return failed(f"nothing booked; expected {truth.get('date')} {truth.get('time')}")
    date, time = event.get("date"), event.get("time")
    if date != truth.get("date") or time != truth.get("time"):
        expected = f"{truth.get('date')} {truth.get('time')}"
        return failed(f"booked {date} {time}, expected {expected}")
    return passed(f"booked {date} {time}")


_NOTHING_TO_BOOK = not_applicable("no booking expected and none made")


def _mid_sentence_names(reply: str) -> list[str]:
    """Capitalized words that do not start a sentence: the ones that look like names."""
    names: list[str] = []
    for sentence in _SENTENCE_END.split(reply):
        words = _CAPITALIZED.findall(sentence)
        first = sentence.split(maxsplit=1)[0] if sentence.split() else ""
        names.extend(w for i, w in enumerate(words) if not (i == 0 and first.startswith(w)))
    return names


def _hhmm(match: re.Match[str]) -> str:
    return f"{int(match.group(1)):02d}:{match.group(2)}"


def _known_times(case: Case, message: str) -> set[str]:
    times = {WORKDAY_START, WORKDAY_END}
    times |= {_hhmm(m) for m in _CLOCK.finditer(message)}
    for m in _CLOCK_AMPM.finditer(message):
        hour = int(m.group(1)) % 12 + (12 if m.group(3).lower() == "pm" else 0)
        times.add(f"{hour:02d}:{m.group(2) or '00'}")
    if re.search(r"\bnoon\b", message, re.I):
        times.add("12:00")
    for blocks in BUSY.values():
        times |= {b.start for b in blocks} | {b.end for b in blocks}
    ctx = _context(case)
    event = ctx.get("booked_event")
    if isinstance(event, dict):
        times.add(str(event.get("time")))
    for item in list(ctx.get("conflicts") or []) + list(ctx.get("proposed_alternatives") or []):
        if isinstance(item, dict):
            times |= {str(item[k]) for k in ("time", "start", "end") if k in item}
    return times


def _state_dates(case: Case) -> set[str]:
    ctx = _context(case)
    items = [ctx.get("booked_event")]
    items += list(ctx.get("conflicts") or []) + list(ctx.get("proposed_alternatives") or [])
    return {str(i["date"]) for i in items if isinstance(i, dict) and "date" in i}
