"""A trace's GenAI spans as a case's steps.

- A chat span (``gen_ai.operation.name`` ``chat`` / ``text_completion`` / ``generate_content``,
  or any span carrying messages, a model or token usage) gives the messages new since the
  previous chat span of the same agent (each span's input repeats the history), then one
  assistant step per answer (content None when the instrumentation did not capture it, or
  when the answer is tool calls only). The assistant step has the span's id, timing, model,
  token usage and other attributes, and ``tool_calls`` (how many) when it asked for some.
  GenAI log events (``_otlp_logs``) are read as events of the span they name.
- A tool span (``execute_tool``) is a ``tool_call`` step: ``gen_ai.tool.name``, arguments,
  result, and the span's ERROR status as the step's error. Tool calls the model asked for
  that no tool span records become ``tool_call`` steps too, their results taken from the
  ``tool`` messages that answer them.
- An agent span (``invoke_agent`` / ``create_agent``) is an ``event`` step named after the
  agent: it marks where a (sub-)agent ran, and the steps inside it name it as their parent.
  Its token usage is kept as given, not counted: agents often repeat their children's totals.
- Other spans (HTTP, database, framework internals) make no step; a step's ``parent_id`` is
  its nearest ancestor span that made a step (the raw parent when that is outside the trace).
- A trace whose chat spans carry no message at all is an errored case (:data:`NO_CONTENT`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError
from pydantic_core import to_json

from ..core import Case, Step
from ._genai import (
    Message,
    ToolRequest,
    input_messages,
    is_message_key,
    new_messages,
    output_messages,
)
from ._otlp import Event, Span, SpanError, json_value
from ._otlp_logs import LogEvent

_CHAT_OPS = frozenset({"chat", "text_completion", "generate_content", "completion"})
_AGENT_OPS = frozenset({"invoke_agent", "create_agent"})
_TOOL_CONSUMED = ("gen_ai.tool.name", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result")
_USAGE = {
    "input_tokens": ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"),
    "output_tokens": ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"),
    "cost_usd": ("gen_ai.usage.cost",),
    "model": ("gen_ai.response.model", "gen_ai.request.model"),
}


def span_kind(span: Span) -> str | None:
    """``tool``, ``agent``, ``chat``, ``event`` (another GenAI operation) or None (no step)."""
    attrs = span.attributes
    op = attrs.get("gen_ai.operation.name")
    if op == "execute_tool":
        return "tool"
    if op in _AGENT_OPS:
        return "agent"
    if op in _CHAT_OPS:
        return "chat"
    if any(is_message_key(k) or k.startswith("gen_ai.usage.") for k in attrs) or any(
        e.name.startswith("gen_ai.") for e in span.events
    ):
        return "chat"
    if op is not None:
        return "event"
    return None


def _when(ns: int) -> datetime:
    return datetime.fromtimestamp(ns / 1e9, tz=UTC)


class _Builder:
    """Steps accumulate as dicts (a tool's result may arrive later), validated at the end."""

    def __init__(self, spans: list[Span]) -> None:
        self.by_id = {s.span_id: s for s in spans}
        self.kinds = {s.span_id: span_kind(s) for s in spans}
        self.steps: list[dict[str, Any]] = []
        self.tool_steps: dict[str, dict[str, Any]] = {}
        """Tool-call id -> its step, to pair results and arguments."""
        self.history: dict[str | None, list[Message]] = {}
        """Per agent (span id, None at the top): the messages its last chat span saw."""
        self.chats = 0
        """Chat spans seen."""
        self.said = False
        """Whether any chat span carried a message (sent or answered)."""
        tool_spans = [s for s in spans if self.kinds[s.span_id] == "tool"]
        self.has_tool_spans = bool(tool_spans)
        self.span_call_ids = {
            str(s.attributes["gen_ai.tool.call.id"])
            for s in tool_spans
            if s.attributes.get("gen_ai.tool.call.id") is not None
        }

    def _ancestor(self, span: Span, kinds: frozenset[str | None]) -> str | None:
        parent = span.parent_id
        hops = 0  # a file whose parent ids form a cycle must not hang the import
        while parent is not None and parent in self.by_id and hops <= len(self.by_id):
            if self.kinds[parent] in kinds:
                return parent
            parent = self.by_id[parent].parent_id
            hops += 1
        return parent

    def parent(self, span: Span) -> str | None:
        return self._ancestor(span, frozenset({"tool", "agent", "chat", "event"}))

    def add_tool(self, span: Span) -> None:
        attrs = span.attributes
        call_id = attrs.get("gen_ai.tool.call.id")
        name = attrs.get("gen_ai.tool.name")
        if name is None:  # the convention names the span "execute_tool {tool name}"
            name = span.name.removeprefix("execute_tool ")
        step = self._step(span, "tool_call", name=str(name), own_id=True)
        step["arguments"] = _arguments(json_value(attrs.get("gen_ai.tool.call.arguments")))
        step["result"] = json_value(attrs.get("gen_ai.tool.call.result"))
        step["error"] = span.error
        step["attributes"] = {k: v for k, v in attrs.items() if k not in _TOOL_CONSUMED}
        if call_id is not None:
            requested = self.tool_steps.get(str(call_id))
            if requested is not None and step["arguments"] is None:
                step["arguments"] = _arguments(requested.get("arguments"))
            self.tool_steps[str(call_id)] = step

    def add_agent(self, span: Span) -> None:
        name = span.attributes.get("gen_ai.agent.name") or span.name
        step = self._step(span, "event", name=str(name), own_id=True)
        step["error"] = span.error
        step["attributes"] = dict(span.attributes)

    def add_event(self, span: Span) -> None:
        step = self._step(span, "event", name=span.name, own_id=True)
        step["error"] = span.error
        step["attributes"] = _attributes(span)

    def add_chat(self, span: Span) -> None:
        scope = self._ancestor(span, frozenset({"agent"}))
        sent = input_messages(span)
        for message in new_messages(self.history.get(scope, []), sent):
            self._message(span, message, own=False)
        answered = output_messages(span)
        self.chats += 1
        self.said = self.said or any(_says(m) for m in (*sent, *answered))
        answers = answered or [Message("assistant")]
        # the span's timing and usage go to its answer (not to thinking that came first)
        own = next((i for i, m in enumerate(answers) if m.role == "assistant"), 0)
        for i, message in enumerate(answers):
            self._message(span, message, own=i == own)
        self.history[scope] = sent + answers

    def _message(self, span: Span, message: Message, *, own: bool) -> None:
        if message.role == "tool":
            self._tool_result(span, message)
            return
        if message.role == "thinking":  # reasoning an instrumentation wrote as a message
            step = self._step(span, "event", name="thinking", own_id=False)
            step["content"] = message.content
            return
        if message.role != "assistant":
            step = self._step(span, message.role, own_id=False)
            step["content"] = message.content
            return
        step = self._step(span, "assistant", own_id=own)
        step["content"] = message.content
        if own:  # the answer the span produced: its timing, model and usage
            step["latency_ms"] = span.duration_ms
            step["error"] = span.error
            step["attributes"] = _attributes(span)
        if message.tool_calls:  # text with them is a preamble to the calls, not a reply
            step["attributes"] = {**step["attributes"], "tool_calls": len(message.tool_calls)}
        for call in message.tool_calls:
            self._requested(span, call)

    def _requested(self, span: Span, call: ToolRequest) -> None:
        if call.id is not None and call.id in self.span_call_ids:
            # a tool span records this call; remember the arguments in case it lacks them
            self.tool_steps.setdefault(call.id, {"arguments": call.arguments})
            return
        if call.id is None and self.has_tool_spans:
            return  # tool spans without call ids: they are the calls
        step = self._step(span, "tool_call", name=call.name, own_id=False)
        step["id"] = call.id
        step["parent_id"] = span.span_id
        step["arguments"] = _arguments(call.arguments)
        step["timestamp"] = _when(span.end_ns)
        if call.id is not None:
            self.tool_steps[call.id] = step

    def _tool_result(self, span: Span, message: Message) -> None:
        step = self.tool_steps.get(message.tool_call_id or "")
        if step is not None and "kind" not in step:
            return  # its tool span (later in the trace) carries the result
        if step is None:  # no id to pair by: the earliest call still waiting for its result
            step = next(
                (s for s in self.steps if s["kind"] == "tool_call" and s["result"] is None), None
            )
        if step is None:  # a result no step asked for: kept, not dropped
            step = self._step(span, "tool_call", own_id=False)
            step["id"] = message.tool_call_id
        if step["result"] is None:
            step["result"] = json_value(message.content)

    def _step(self, span: Span, kind: str, *, name: Any = None, own_id: bool) -> dict[str, Any]:
        step: dict[str, Any] = {
            "_span": span,
            "kind": kind,
            "name": name,
            "content": None,
            "arguments": None,
            "result": None,
            "error": None,
            "id": span.span_id if own_id else None,
            "parent_id": self.parent(span),
            "attributes": {},
            "timestamp": _when(span.start_ns),
            "latency_ms": span.duration_ms if own_id and kind != "assistant" else None,
        }
        self.steps.append(step)
        return step


def _says(message: Message) -> bool:
    """Whether a message carries what was said: text, or a tool call's arguments. Without
    content capture the OpenAI instrumentation still writes every message's event, with the
    role and the tool names but nothing said: such messages are not content."""
    return bool(message.content) or any(t.arguments not in (None, "") for t in message.tool_calls)


def _arguments(value: Any) -> Any:
    """Arguments as a step takes them: an object or text; anything else (a number, a list)
    as its JSON text, which the step keeps as unparsed."""
    if value is None or isinstance(value, dict | str):
        return value
    return to_json(value).decode()


def _attributes(span: Span) -> dict[str, Any]:
    """A chat span's attributes: usage and model by their normalised names, message content
    left out (the steps hold it), anything else as given."""
    attrs = {k: v for k, v in span.attributes.items() if not is_message_key(k)}
    out: dict[str, Any] = {}
    for name, keys in _USAGE.items():
        for key in keys:
            if key in attrs:
                out[name] = attrs.pop(key)
                break
    out.update(attrs)
    return out


def _depth(span: Span, by_id: dict[str, Span]) -> int:
    depth, parent = 0, span.parent_id
    while parent is not None and parent in by_id and depth < len(by_id):
        depth += 1
        parent = by_id[parent].parent_id
    return depth


def _find(spans: list[Span], key: str) -> Any:
    for span in spans:
        if key in span.resource:
            return span.resource[key]
    for span in spans:
        if key in span.attributes:
            return span.attributes[key]
    return None


NO_CONTENT = (
    "no message content: its chat spans carry no messages (capture is off, or the "
    "instrumentation wrote them as log events that are not in this file: export the logs "
    "with the spans, to one file)"
)
"""The error of a trace whose model calls were traced without what was said."""


def build_case(
    trace_id: str, spans: list[Span], case_id_attribute: str, logs: Sequence[LogEvent] = ()
) -> Case:
    """The case of one trace, its GenAI log events read as events of the spans they name.
    A trace whose chat spans carry no message at all is an errored case (:data:`NO_CONTENT`):
    scoring what no one recorded would be a silent wrong answer.

    Raises:
        SpanError: a step's values do not fit a step, naming the span it came from.
    """
    by_id = {s.span_id: s for s in spans}
    spans = sorted(spans, key=lambda s: (s.start_ns, _depth(s, by_id), s.line or 0))
    if logs:
        spans = with_logs(spans, logs)
    builder = _Builder(spans)
    for span in spans:
        kind = builder.kinds[span.span_id]
        if kind == "tool":
            builder.add_tool(span)
        elif kind == "agent":
            builder.add_agent(span)
        elif kind == "chat":
            builder.add_chat(span)
        elif kind == "event":
            builder.add_event(span)
    steps = []
    for i, data in enumerate(builder.steps):
        source: Span = data.pop("_span")
        try:
            steps.append(Step(**data))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"])
            raise SpanError(
                f"span {source.span_id} ({source.name}): step {i + 1} ({data['kind']}): "
                f"{field}: {err['msg']}"
            ) from None
    roots = [s for s in spans if s.parent_id is None]
    if len(roots) == 1:  # the root's duration, not the sum of the spans nested in it
        latency = roots[0].duration_ms
    else:
        latency = max(max(s.end_ns for s in spans) - spans[0].start_ns, 0) / 1e6
    case_id = _find(spans, case_id_attribute)
    metadata: dict[str, Any] = {"source": "otel", "trace_id": trace_id}
    for key in ("service.name", "gen_ai.conversation.id", "session.id"):
        value = _find(spans, key)
        if value is not None:
            metadata[key] = value
    first_user = next((s.content for s in steps if s.kind == "user"), None)
    silent = builder.chats > 0 and not builder.said
    return Case(
        id=str(case_id) if case_id not in (None, "") else trace_id,
        input=first_user,
        trace=steps,
        metadata=metadata,
        latency_ms=latency,
        error=NO_CONTENT if silent else None,
    )


def with_logs(spans: list[Span], logs: Sequence[LogEvent]) -> list[Span]:
    """The spans with the log events that name them added to their events, by time; a log
    that names no span of the trace goes to the innermost span running when it was written
    (else the first). An ``operation.details`` event's message attributes are the span's."""
    events: dict[str, list[tuple[int, int, Event]]] = {}
    ids = {s.span_id for s in spans}
    for n, log in enumerate(logs):
        owner = log.span_id if log.span_id is not None else ""
        if owner not in ids:
            owner = _running(spans, log.event.time_ns).span_id
        events.setdefault(owner, []).append((log.event.time_ns or 0, n, log.event))
    out = []
    for span in spans:
        found = events.get(span.span_id)
        if not found:
            out.append(span)
            continue
        attrs = dict(span.attributes)
        added = []
        for _, _, event in sorted(found, key=lambda e: (e[0], e[1])):
            if event.name == _DETAILS:
                for key, value in event.attributes.items():
                    if is_message_key(key):
                        attrs.setdefault(key, value)
            else:
                added.append(event)
        out.append(replace(span, attributes=attrs, events=[*span.events, *added]))
    return out


_DETAILS = "gen_ai.client.inference.operation.details"


def _running(spans: list[Span], time_ns: int | None) -> Span:
    if time_ns is not None:
        inside = [s for s in spans if s.start_ns <= time_ns <= s.end_ns]
        if inside:
            return max(inside, key=lambda s: s.start_ns)
    return spans[0]
