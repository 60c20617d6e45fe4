"""Reading an out-of-process agent's reply (an HTTP body, a program's stdout): checkweigh's
own ``{trace, final_state}``, plain text, or any log format that reads replies (the format's
``read_reply``: :data:`checkweigh.importers.FORMATS`). Anything that does not fit is an
:class:`AgentFailure` naming the format and the first field that is wrong."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson
from pydantic import ValidationError

from ..._text import NOT_JSON, json_with_surrogates
from ...core import FieldPath, Step
from ...importers import Reply, ReplyError, ReplyFormat, get_format, missing_text
from ...suites import ReplySpec, first_error, loc_text
from ._base import AgentFailure, AgentRun

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


def visible(text: str, limit: int = 200) -> str:
    """Untrusted text for a one-line message: control characters as spaces, runs of space
    as one, cut to ``limit`` characters."""
    text = " ".join(_CONTROL.sub(" ", text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def size_text(n: int) -> str:
    """A byte count for messages: ``16 MiB`` when it is whole mebibytes, else ``1000 bytes``."""
    return f"{n // 2**20} MiB" if n >= 2**20 and n % 2**20 == 0 else f"{n} bytes"


def parse_json(content: bytes, who: str = "http reply") -> Any:
    """The reply's JSON.

    Raises:
        AgentFailure: an empty body, or one that is not JSON.
    """
    if not content.strip():
        raise AgentFailure(f"{who} is empty; expected JSON")
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        data = json_with_surrogates(content)  # valid JSON orjson refuses: a lone "\ud800"
        if data is not NOT_JSON:
            return data
        start = visible(content[:80].decode("utf-8", "replace"), 80)
        raise AgentFailure(f"{who} is not JSON ({exc.msg}): {start}") from None


def raw_reader(spec: ReplySpec, who: str = "http reply") -> Callable[[bytes], AgentRun] | None:
    """For a reply read as it is, not as JSON (``format: text`` without a path, or a log
    format that reads text): the function that turns its bytes into an :class:`AgentRun`;
    None for the other formats."""
    if spec.format == "text" and spec.text is None:

        def read(content: bytes) -> AgentRun:
            text = content.decode("utf-8", "replace").strip()
            if not text:
                raise AgentFailure(f"{who} is empty; expected the agent's answer as text")
            return _said(text)

        return read
    if spec.format in ("checkweigh", "text"):
        return None
    fmt = _log_format(spec)
    if getattr(fmt, "reply_input", "json") != "text":
        return None
    decode = _decoder(spec.format, fmt, who)
    return lambda content: decode(content.decode("utf-8", "replace"))


def _said(text: str) -> AgentRun:
    return AgentRun(trace=[Step(kind="assistant", content=text)])


def reply_reader(spec: ReplySpec, who: str = "http reply") -> Callable[[Any], AgentRun]:
    """The function that turns a reply's JSON into an :class:`AgentRun`; its failures say
    ``{who} does not fit format ...``."""
    if spec.format == "text":
        if spec.text is None:  # the body as it is: see raw_reader
            return lambda data: _said(
                data if isinstance(data, str) else orjson.dumps(data).decode()
            )
        path = FieldPath.parse(spec.text)

        def answer(data: Any) -> AgentRun:
            found = path.get(data, None)
            if not isinstance(found, str):
                what = "nothing" if found is None else f"a JSON {type(found).__name__}"
                raise AgentFailure(
                    f"{who} does not fit format text: {spec.text} holds {what}, not text"
                )
            return _said(found)

        return answer
    if spec.format == "checkweigh":
        return lambda data: _own(data, who)
    return _decoder(spec.format, _log_format(spec), who)


def _log_format(spec: ReplySpec) -> ReplyFormat:
    """The log format a reply is read in, built with the spec's mapping (if any)."""
    options = {} if spec.mapping is None else {"mapping": spec.mapping}
    fmt: ReplyFormat = get_format(spec.format, **options)  # type: ignore[assignment]
    return fmt  # the suite's ReplySpec accepted only a format with read_reply


def _decoder(name: str, fmt: ReplyFormat, who: str) -> Callable[[Any], AgentRun]:
    read = fmt.read_reply

    def decode(data: Any) -> AgentRun:
        try:
            reply: Reply = read(data)
        except ReplyError as exc:
            raise AgentFailure(_said_wrong(exc, name, who)) from None
        run = {"trace": reply.trace, "final_state": reply.final_state, "usage": reply.usage}
        try:
            return AgentRun.model_validate(run)
        except ValidationError as exc:
            raise _invalid(name, exc, who) from None

    return decode


def _said_wrong(exc: ReplyError, name: str, who: str) -> str:
    if exc.problem == "silent":
        return f"{who} holds no message (format {name}): {visible(exc.message)}"
    if exc.problem == "failed":
        return f"{who} reports an error: {visible(exc.message)}"
    return f"{who} does not fit format {name}: {visible(exc.message)}"


def _invalid(fmt: str, exc: ValidationError, who: str) -> AgentFailure:
    loc, message = first_error(exc)
    where = f"{loc_text(loc)}: " if loc else ""
    return AgentFailure(f"{who} does not fit format {fmt}: {where}{visible(message)}")


def _own(data: Any, who: str) -> AgentRun:
    if data is None:
        raise AgentFailure(f"{who} holds no message (format checkweigh): it is null")
    if not isinstance(data, dict):
        raise AgentFailure(
            f"{who} does not fit format checkweigh: expected an object with trace and "
            f"final_state, got {type(data).__name__}"
        )
    try:
        run = AgentRun.model_validate(data)
    except ValidationError as exc:
        raise _invalid("checkweigh", exc, who) from None
    # an agent's own format may answer with its state alone; an answer of nothing is none
    if not run.trace and not run.final_state:
        raise AgentFailure(f"{who} holds no message (format checkweigh): {missing_text(data)}")
    return run
