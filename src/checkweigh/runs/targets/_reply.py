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
    if not isinstance(data, dict):
        raise AgentFailure(
            f"{who} does not fit format checkweigh: expected an object with trace and "
            f"final_state, got {type(data).__name__}"
        )
    try:
        return AgentRun.model_validate(data)
    except ValidationError as exc:
        raise _invalid("checkweigh", exc, who) from None


def _converted(fmt: str, converter: RecordFormat, data: Any, who: str) -> AgentRun:
    data, usage = _api_response(fmt, data)
    try:
        fields = converter.convert(data)
    except RecordError as exc:
        raise AgentFailure(f"{who} does not fit format {fmt}: {visible(str(exc))}") from None
    if fields.get("error") is not None:  # the reply says the agent's run failed
        raise AgentFailure(f"{who} reports an error: {visible(str(fields['error']))}")
    run = {
        "trace": fields.get("trace", []),
        "final_state": fields.get("final_state", {}),
        "usage": usage,
    }
    try:
        return AgentRun.model_validate(run)
    except ValidationError as exc:
        raise _invalid(fmt, exc, who) from None


def _api_response(fmt: str, data: Any) -> tuple[Any, dict[str, Any] | None]:
    """An agent that answers like the provider's API (a Chat Completions response, an
    Anthropic Messages response) rather than with a message list: its message(s) as the
    conversation, and its token usage. Anything else is returned as it is."""
    if not isinstance(data, dict) or "messages" in data:
        return data, None
    raw = data.get("usage")
    usage = raw if isinstance(raw, dict) else {}
    counts = (usage.get("prompt_tokens"), usage.get("completion_tokens"))
    if fmt == "openai" and isinstance(data.get("choices"), list):
        messages = [c["message"] for c in data["choices"] if isinstance(c, dict) and "message" in c]
        return {"messages": messages[:1]}, _tokens(*counts)
    if fmt == "anthropic" and data.get("type") == "message" and data.get("role") == "assistant":
        message = {"role": "assistant", "content": data.get("content")}
        return {"messages": [message]}, _tokens(
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
