"""The messages of a GenAI span, from every convention instrumentations have used.

Newest first: ``gen_ai.system_instructions`` / ``gen_ai.input.messages`` /
``gen_ai.output.messages`` (JSON with ``parts``); the older indexed attributes
``gen_ai.prompt.{i}.role`` / ``.content`` / ``.tool_calls.{j}.*`` and ``gen_ai.completion.{i}.*``;
``gen_ai.prompt`` / ``gen_ai.completion`` as JSON text (OpenAI message lists), also inside
``gen_ai.content.prompt`` / ``gen_ai.content.completion`` events; and the message events
``gen_ai.{system,user,assistant,tool}.message`` and ``gen_ai.choice`` (their body given as event
attributes, or as JSON in ``gen_ai.event.content``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import to_json

from ._otlp import Event, Span, json_value

_ROLES = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "model": "assistant",
    "ai": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
    "thinking": "thinking",
    "reasoning": "thinking",
}
_INDEXED = re.compile(r"gen_ai\.(prompt|completion)\.(\d+)\.(.+)")
_TOOL_CALL_KEY = re.compile(r"tool_calls\.(\d+)\.(\w+)")
_CALLS = "\0indexed tool calls"
_MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
MESSAGE_KEYS = frozenset(
    {
        "gen_ai.system_instructions",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.prompt",
        "gen_ai.completion",
    }
)
"""Attributes that hold message content (not copied onto steps: the steps hold it)."""


@dataclass(frozen=True, slots=True)
class ToolRequest:
    """A tool call the model asked for in a message."""

    id: str | None
    name: str | None
    arguments: Any


@dataclass(slots=True)
class Message:
    """One chat message, whatever convention it came in."""

    role: str
    content: str | None = None
    tool_calls: list[ToolRequest] = field(default_factory=list)
    tool_call_id: str | None = None
    """For a tool result: the call it answers."""

    def key(self) -> tuple[str, str, tuple[str | None, ...]]:
        """What makes two copies of a message (in successive chat spans) the same message.

        An answer that asked for tools is known by its calls, not its text: the OpenAI
        instrumentation's ``gen_ai.assistant.message`` event, which sends the answer back in
        the next call's input, keeps only the tool calls and drops the text beside them
        (its ``gen_ai.choice`` event had both)."""
        names = tuple(t.name for t in self.tool_calls)
        text = "" if names and self.role == "assistant" else (self.content or "").strip()
        return (self.role, text, names)


def is_message_key(key: str) -> bool:
    """Whether an attribute holds message content."""
    return key in MESSAGE_KEYS or _INDEXED.fullmatch(key) is not None


def input_messages(span: Span) -> list[Message]:
    """The messages sent to the model (system instructions first)."""
    attrs = span.attributes
    out: list[Message] = []
    system = attrs.get("gen_ai.system_instructions")
    if system is not None:
        out.append(Message("system", _text(json_value(system))))
    if "gen_ai.input.messages" in attrs:
        return out + _from_list(json_value(attrs["gen_ai.input.messages"]))
    indexed = _indexed(attrs, "prompt")
    if indexed:
        return out + indexed
    if "gen_ai.prompt" in attrs:
        return out + _from_list(json_value(attrs["gen_ai.prompt"]))
    for event in span.events:
        if event.name == "gen_ai.content.prompt" and "gen_ai.prompt" in event.attributes:
            return out + _from_list(json_value(event.attributes["gen_ai.prompt"]))
    return out + [
        m
        for e in span.events
        if e.name in _MESSAGE_EVENTS
        for m in _messages(_body(e), _MESSAGE_EVENTS[e.name])
    ]


def output_messages(span: Span) -> list[Message]:
    """The messages the model answered with (one per choice)."""
    attrs = span.attributes
    if "gen_ai.output.messages" in attrs:
        return _from_list(json_value(attrs["gen_ai.output.messages"]), "assistant")
    indexed = _indexed(attrs, "completion")
    if indexed:
        return indexed
    if "gen_ai.completion" in attrs:
        return _from_list(json_value(attrs["gen_ai.completion"]), "assistant")
    out: list[Message] = []
    for event in span.events:
        if event.name == "gen_ai.content.completion" and "gen_ai.completion" in event.attributes:
            return _from_list(json_value(event.attributes["gen_ai.completion"]), "assistant")
        if event.name == "gen_ai.choice":
            body = _body(event)
            message = json_value(body.get("message"))
            out += _messages(message if isinstance(message, dict) else body, "assistant")
    return out


def _body(event: Event) -> dict[str, Any]:
    content = event.attributes.get("gen_ai.event.content")
    parsed = json_value(content)
    return parsed if isinstance(parsed, dict) else event.attributes


def _from_list(value: Any, default_role: str = "user") -> list[Message]:
    if isinstance(value, dict):
        value = [value]
    if isinstance(value, str):  # a bare prompt or completion text
        return [Message(default_role, value)]
    if not isinstance(value, list):
        return []
    return [m for d in value if isinstance(d, dict) for m in _messages(d, default_role)]


def _messages(data: Mapping[str, Any], default_role: str) -> list[Message]:
    """One message as given, split when its parts hold tool results: one ``tool`` message
    per result (an Anthropic user message may answer several calls at once), then the
    message's own text and calls, if it has any."""
    role = _ROLES.get(str(data.get("role", default_role)).lower(), default_role)
    message = Message(role, tool_call_id=_str(data.get("tool_call_id") or data.get("id")))
    texts: list[str] = []
    results: list[Message] = []
    if "parts" in data:  # gen_ai.input.messages / output.messages
        _parts(data["parts"], message, texts, results)
    content = data.get("content")  # text stays text, even when it looks like JSON
    if isinstance(content, list):  # content blocks (OpenAI parts, Anthropic blocks)
        _parts(content, message, texts, results)
    elif content is not None:
        texts.append(_text(content) or "")
    known = {t.id for t in message.tool_calls if t.id is not None}
    for call in _as_list(json_value(data.get("tool_calls"))):
        if isinstance(call, dict):
            fn = call["function"] if isinstance(call.get("function"), dict) else call
            call_id = _str(call.get("id"))
            if call_id is not None and call_id in known:
                continue  # also in the content's blocks (as OpenLLMetry writes both)
            message.tool_calls.append(
                ToolRequest(call_id, _str(fn.get("name")), fn.get("arguments"))
            )
    if texts:
        message.content = "\n".join(texts)
    if results and not texts and not message.tool_calls:
        return results
    return [*results, message]


def _parts(parts: Any, message: Message, texts: list[str], results: list[Message]) -> None:
    for part in _as_list(parts):
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("tool_call", "tool_use", "function_call"):
            message.tool_calls.append(
                ToolRequest(
                    _str(part.get("id")),
                    _str(part.get("name")),
                    part.get("arguments", part.get("input")),
                )
            )
        elif kind in ("tool_call_response", "tool_result", "function_call_output"):
            call_id = _str(part.get("id") or part.get("tool_use_id") or part.get("call_id"))
            value = part.get("response", part.get("content", part.get("output")))
            results.append(Message("tool", _text(value) or "", tool_call_id=call_id))
        elif kind in (None, "text", "input_text", "output_text"):
            text = part.get("content", part.get("text"))
            if text is not None:
                texts.append(_text(text) or "")
        # reasoning, media and other parts are not message text


def _indexed(attrs: Mapping[str, Any], which: str) -> list[Message]:
    found: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        m = _INDEXED.fullmatch(key)
        if m is None or m[1] != which:
            continue
        entry = found.setdefault(int(m[2]), {})
        call = _TOOL_CALL_KEY.fullmatch(m[3])
        if call is not None:  # kept apart from a literal "tool_calls" (JSON text) attribute
            calls = entry.setdefault(_CALLS, {})
            calls.setdefault(int(call[1]), {})[call[2]] = value
        else:
            entry[m[3]] = value
    out = []
    for i in sorted(found):
        entry = found[i]
        calls = entry.pop(_CALLS, None)
        if calls:
            entry["tool_calls"] = [calls[j] for j in sorted(calls)]
        default = "user" if which == "prompt" else "assistant"
        entry["content"] = _blocks_in_text(entry.get("content"))
        out += _messages(entry, default)
    return out


def _blocks_in_text(value: Any) -> Any:
    """Indexed ``content`` given as the JSON text of a list of content blocks (as OpenLLMetry
    writes Anthropic blocks, or OpenAI content parts): the blocks. Any other text, JSON or
    not, stays text."""
    if not isinstance(value, str) or value[:1] != "[":
        return value
    parsed = json_value(value)
    if (
        isinstance(parsed, list)
        and parsed
        and all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in parsed)
    ):
        return parsed
    return value


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _text(value: Any) -> str | None:
    """Message text: strings as given, text parts joined, anything else as JSON."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [
            _text(v.get("content", v.get("text")) if isinstance(v, dict) else v) for v in value
        ]
        return "\n".join(t for t in texts if t)
    return to_json(value).decode()


def new_messages(history: list[Message], sent: Iterable[Message]) -> list[Message]:
    """The messages of ``sent`` that are not a repeat of the conversation so far.

    A chat span's input repeats the history; the new messages are those after the longest
    start of ``sent`` that equals the end of ``history`` (all of it, usually; its last few
    when the agent trims old turns), after a system prompt already seen.
    """
    sent = list(sent)
    # thinking is answered beside the reply, never sent back as a message of its own
    past = [m.key() for m in history if m.role != "thinking"]
    # a system prompt stays at the top when old turns are trimmed: a known one is no news
    known_system = {k for k in past if k[0] == "system"}
    while sent and sent[0].role == "system" and sent[0].key() in known_system:
        sent.pop(0)
    keys = [m.key() for m in sent]
    for j in range(min(len(keys), len(past)), 0, -1):
        if keys[:j] == past[len(past) - j :]:
            return sent[j:]
    return sent
