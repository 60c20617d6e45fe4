"""An agent's reply read by a log format: the one conversation it holds and the agent's final
state, so an HTTP or command target can answer in any format ``checkweigh import`` reads.

A format that reads replies has a ``read_reply`` method (:class:`ReplyFormat`); a reply it
cannot read raises :class:`ReplyError`, which the target words as its case's error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..errors import CheckweighError

if TYPE_CHECKING:
    from ._convert import RecordFormat

ReplyProblem = Literal["unfit", "silent", "failed"]


class ReplyError(CheckweighError):
    """A reply a format cannot read. ``problem`` says how: ``unfit`` (not this format's
    shape), ``silent`` (no message in it: ``message`` says what it lacks) or ``failed`` (the
    reply says the agent's run failed: ``message`` is its error)."""

    def __init__(self, message: str, problem: ReplyProblem = "unfit") -> None:
        super().__init__(message)
        self.message = message
        self.problem: ReplyProblem = problem


@dataclass(frozen=True, slots=True)
class Reply:
    """What one reply holds."""

    trace: list[Any] = field(default_factory=list)
    """The conversation's steps (:class:`~checkweigh.core.Step` or its fields as a dict)."""
    final_state: Any = None
    """The agent's final state, if it gave one."""
    usage: dict[str, Any] | None = None
    """Token counts (``input_tokens``, ``output_tokens``) when the reply says them."""


class ReplyFormat(Protocol):
    """A log format that also reads an agent's reply (an HTTP body, a program's stdout)."""

    reply_input: Literal["json", "text"]
    """What :meth:`read_reply` is given: the reply's JSON, or its text (UTF-8)."""

    def read_reply(self, data: Any) -> Reply:
        """The conversation and final state ``data`` holds.

        Raises:
            ReplyError: it is not one conversation of this format, or holds no message.
        """
        ...


# where a reply keeps its messages, to say which is empty
_CARRIERS = ("choices", "messages", "traj", "trajectory", "output", "content", "trace")


def missing_text(data: Any) -> str:
    """What an empty reply lacks, for its message: ``choices is empty``, ``an empty list``."""
    if isinstance(data, list):
        return "it is an empty list" if not data else "none of its items is a message"
    if isinstance(data, dict):
        for key in _CARRIERS:
            if key in data and not data[key]:
                return f"{key} is {'null' if data[key] is None else 'empty'}"
        if not data:
            return "it is an empty object"
    return "nothing in it is a message or a step"


def tokens(given: Any, made: Any) -> dict[str, Any] | None:
    """Token counts as a reply's usage: only the whole, non-negative ones (None if neither)."""
    counts = {"input_tokens": given, "output_tokens": made}
    known = {k: v for k, v in counts.items() if type(v) is int and v >= 0}
    return known or None


def record_reply(fmt: RecordFormat, data: Any, *, speaks: bool = True) -> Reply:
    """A reply read by a record format: one record converted, with a ``final_state`` beside
    the messages (or the provider's response's own). ``speaks``: a reply without a step is
    silent whatever its state (false for formats whose record may hold only a state).

    Raises:
        ReplyError: as :meth:`ReplyFormat.read_reply`.
    """
    from ._convert import RecordError

    if data is None:
        raise ReplyError("it is null", "silent")
    given = data
    usage = None
    if isinstance(data, dict) and "messages" not in data:
        data, usage = fmt.api_response(data)
    try:
        fields = fmt.convert(data)
    except RecordError as exc:
        raise ReplyError(str(exc)) from None
    if fields.get("error") is not None:  # the reply says the agent's run failed
        raise ReplyError(str(fields["error"]), "failed")
    state = fields.get("final_state") or _top_state(given)
    trace = fields.get("trace", [])
    if not trace and (speaks or not state):
        raise ReplyError(missing_text(given), "silent")
    return Reply(trace, state, usage)


def _top_state(data: Any) -> Any:
    """A ``final_state`` beside whatever the format reads (a provider's response, say)."""
    state = data.get("final_state") if isinstance(data, dict) else None
    return {} if state is None else state
