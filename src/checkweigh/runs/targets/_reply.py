"""Reading an out-of-process agent's reply (an HTTP body, a program's stdout): checkweigh's
own ``{trace, final_state}``, one conversation in a log format the importers read, or a
declarative mapping. Anything that does not fit is an :class:`AgentFailure` naming the format
and the first field that is wrong."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson
from pydantic import ValidationError

from ..._text import NOT_JSON, json_with_surrogates
from ...core import FieldPath, Step
from ...importers import format_factory
from ...importers._convert import RecordError, RecordFormat
from ...importers._mapping import MappingFormat
from ...suites import ReplySpec
from ...suites._errors import first_error, loc_text
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
    """For a reply read as it is, not as JSON (``format: text`` without a path): the function
    that turns its bytes into an :class:`AgentRun`; None for the other formats."""
    if spec.format != "text" or spec.text is not None:
        return None

    def read(content: bytes) -> AgentRun:
        text = content.decode("utf-8", "replace").strip()
        if not text:
            raise AgentFailure(f"{who} is empty; expected the agent's answer as text")
        return _said(text)

    return read


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
    if spec.format == "otel":
        return lambda data: _otel(data, who)
    converter: RecordFormat
    if spec.format == "mapping":
        assert spec.mapping is not None  # the spec requires it
        converter = MappingFormat(spec.mapping)
    else:
        made = format_factory(spec.format)()
        assert isinstance(made, RecordFormat)  # openai, openai-responses, anthropic
        converter = made
    return lambda data: _converted(spec.format, converter, data, who)


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
        raise AgentFailure(f"{who} holds no message (format checkweigh): {_missing(data)}")
    return run


# the message formats: a reply without one message or step said nothing, whatever its state
_SPEAKING = frozenset(("openai", "openai-responses", "anthropic", "otel"))


def _converted(fmt: str, converter: RecordFormat, data: Any, who: str) -> AgentRun:
    if data is None:
        raise AgentFailure(f"{who} holds no message (format {fmt}): it is null")
    given = data
    data, usage = _api_response(fmt, data)
    try:
        fields = converter.convert(data)
    except RecordError as exc:
        raise AgentFailure(f"{who} does not fit format {fmt}: {visible(str(exc))}") from None
    if fields.get("error") is not None:  # the reply says the agent's run failed
        raise AgentFailure(f"{who} reports an error: {visible(str(fields['error']))}")
    run = {
        "trace": fields.get("trace", []),
        "final_state": fields.get("final_state") or _top_state(given),
        "usage": usage,
    }
    if not run["trace"] and (fmt in _SPEAKING or not run["final_state"]):
        raise AgentFailure(f"{who} holds no message (format {fmt}): {_missing(given)}")
    try:
        return AgentRun.model_validate(run)
    except ValidationError as exc:
        raise _invalid(fmt, exc, who) from None


def _top_state(data: Any) -> Any:
    """A ``final_state`` beside whatever the format reads (a provider's response, say)."""
    state = data.get("final_state") if isinstance(data, dict) else None
    return {} if state is None else state


_CARRIERS = ("choices", "messages", "traj", "trajectory", "output", "content", "trace")


def _missing(data: Any) -> str:
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


def _api_response(fmt: str, data: Any) -> tuple[Any, dict[str, Any] | None]:
    """An agent that answers like the provider's API (a Chat Completions response, an
    Anthropic Messages response) rather than with a message list: its message(s) as the
    conversation, and its token usage. Anything else is returned as it is."""
    if not isinstance(data, dict) or "messages" in data:
        return data, None
    raw = data.get("usage")
    usage = raw if isinstance(raw, dict) else {}
    counts = (usage.get("prompt_tokens"), usage.get("completion_tokens"))
    # the response's own final_state, if any, is read beside it (see _top_state)
    if fmt == "openai" and isinstance(data.get("choices"), list):
        messages = [c["message"] for c in data["choices"] if isinstance(c, dict) and "message" in c]
        return {"messages": messages[:1]}, _tokens(*counts)
    if fmt == "anthropic" and data.get("type") == "message" and data.get("role") == "assistant":
        content = data.get("content")
        messages = [{"role": "assistant", "content": content}] if content else []
        return {"messages": messages}, _tokens(
            usage.get("input_tokens"), usage.get("output_tokens")
        )
    return data, None


def _tokens(given: Any, made: Any) -> dict[str, Any] | None:
    counts = {"input_tokens": given, "output_tokens": made}
    known = {k: v for k, v in counts.items() if type(v) is int and v >= 0}
    return known or None


def _otel(data: Any, who: str) -> AgentRun:
    from ...importers._otel_steps import build_case  # the OTLP reader loads on first use
    from ...importers._otlp import Span, SpanError, request_spans

    try:
        items = list(request_spans(data, None))
    except SpanError as exc:
        raise AgentFailure(f"{who} does not fit format otel: {visible(str(exc))}") from None
    spans: list[Span] = []
    for item in items:
        if isinstance(item, SpanError):
            raise AgentFailure(f"{who} does not fit format otel: {visible(str(item))}")
        spans.append(item)
    traces = {s.trace_id for s in spans}
    if len(traces) != 1:
        raise AgentFailure(
            f"{who} does not fit format otel: expected the spans of one trace, "
            f"got {len(traces)} traces"
        )
    try:
        case = build_case(traces.pop(), spans, "checkweigh.case.id")
    except SpanError as exc:
        raise AgentFailure(f"{who} does not fit format otel: {visible(str(exc))}") from None
    return AgentRun(trace=case.trace, final_state=case.final_state)
