"""OpenAI Chat Completions message lists.

A record is a list of messages, or an object with ``messages`` (or ``traj`` /
``trajectory``, as tau-bench's result files have it) and optionally ``id``, ``input``,
``final_state``, ``ground_truth``, ``metadata``, ``model``, ``usage`` and ``cost`` (any other
key is kept in the case's metadata). Messages become steps:

- ``system`` / ``developer``: a system step;
- ``user``: a user step (the first one's text is the case's input);
- ``assistant``: its text (if any) as an assistant step, then one tool-call step per
  ``tool_calls`` entry (``function.name``, ``function.arguments`` as JSON text, ``id``; the flat
  ``{id, name, arguments}`` shape and the older ``function_call`` are read too), a
  ``reasoning_content`` first as a ``reasoning`` event;
- ``tool`` (and the older ``function``): the result of the call it answers, by
  ``tool_call_id`` (see :class:`~._convert.Pairer`); one that answers no call is kept as a
  ``tool_result`` event.

Content may be text or a list of parts (the text parts are joined). A message's own
``model`` / ``usage`` / ``cost`` go to the attributes of its first assistant step (else its
first step); the record's go to its last assistant step. A ``{request, response}`` record is
the request's messages and the response's first choice; a response that is an API error
makes an errored case (its ``error``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ._base import short
from ._convert import (
    Pairer,
    RecordError,
    RecordFormat,
    StepDict,
    add_attributes,
    answer,
    case_fields,
    is_message,
    kind_of,
    last_reply,
    message_step,
    not_a_conversation,
    text_of,
    tool_call,
    usage_attributes,
)
from ._logged import request_and_response
from ._reply import tokens

_ROLES = "system, developer, user, assistant or tool"
_PLAIN = frozenset(("role", "content", "tool_calls", "name", "refusal", "function_call"))
"""Keys of a message that carry no timestamp, model or usage (most messages: skip the look)."""


def openai_steps(messages: Any, where: str = "messages") -> tuple[list[StepDict], str | None]:
    """The steps of a Chat Completions message list, and the first user message's text.

    Raises:
        RecordError: not a list of messages, an unknown role, a tool call without a name...
    """
    if not isinstance(messages, list):
        raise RecordError(f"{where}: expected a list of messages, got {kind_of(messages)}")
    steps: list[StepDict] = []
    pairer = Pairer(steps)
    first_user: str | None = None
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise RecordError(
                f"{where}[{i}]: expected a message (an object), got {kind_of(message)}"
            )
        role = message.get("role")
        content = message.get("content")
        if content is not None and type(content) is not str:  # parts; where only for errors
            content = text_of(content, f"{where}[{i}].content")
        if role in ("tool", "function"):
            flagged = message.get("error") is True or message.get("is_error") is True
            answer(
                steps,
                pairer,
                content,
                # tau2-bench logs name the call a tool message answers by its "id"
                call_id=message.get("tool_call_id", message.get("id")),
                name=message.get("name"),
                flagged=flagged,
            )
            continue
        pairer.close()  # the calls of the last assistant message are answered by now
        first = len(steps)
        if role in ("system", "developer"):
            step: StepDict = {"kind": "system", "content": content or ""}
            if role == "developer":
                step["attributes"] = {"role": "developer"}
            steps.append(step)
        elif role == "user":
            steps.append({"kind": "user", "content": content or ""})
            if first_user is None:
                first_user = content or ""
        elif role == "assistant":
            _assistant(message, content, where, i, steps, pairer)
        else:
            got = "missing" if role is None else short(role)
            raise RecordError(f"{where}[{i}].role: unknown role {got}; expected {_ROLES}")
        if len(steps) > first and not _PLAIN.issuperset(message):
            stamp = message.get("timestamp")
            if isinstance(stamp, str | int | float) and not isinstance(stamp, bool):
                steps[first]["timestamp"] = stamp
            add_attributes(message_step(steps, first), usage_attributes(message))
    return steps, first_user


def _assistant(
    message: dict[str, Any],
    text: str | None,
    where: str,
    i: int,
    steps: list[StepDict],
    pairer: Pairer,
) -> None:
    # the message's place (messages[3].tool_calls[0]) is spelled out only for an error:
    # formatting it for every message and call costs a tenth of the import
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning.strip():
        steps.append({"kind": "event", "name": "reasoning", "content": reasoning})
    refusal = message.get("refusal")
    if not text and isinstance(refusal, str) and refusal:
        text = refusal
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise RecordError(f"{where}[{i}].tool_calls: expected a list, got {kind_of(calls)}")
    legacy = message.get("function_call")
    if isinstance(legacy, dict):
        calls = [*calls, {"function": legacy}]
    # text that came with tool calls stays the assistant's content, before the calls
    if (text and text.strip()) or not calls:
        step: StepDict = {"kind": "assistant", "content": text or ""}
        if calls:  # a preamble to the calls, not a reply: marked so checks can tell
            step["attributes"] = {"tool_calls": len(calls)}
        steps.append(step)
    for j, call in enumerate(calls):
        if not isinstance(call, dict):
            raise RecordError(
                f"{where}[{i}].tool_calls[{j}]: expected a tool call (an object), "
                f"got {kind_of(call)}"
            )
        fn = call.get("function", call.get("custom", call))
        if not isinstance(fn, dict):
            raise RecordError(
                f"{where}[{i}].tool_calls[{j}].function: expected an object, got {kind_of(fn)}"
            )
        name = fn.get("name")
        at = "" if type(name) is str and name.strip() else f"{where}[{i}].tool_calls[{j}]"
        arguments = fn.get("arguments", fn.get("input"))
        pairer.add(tool_call(name, arguments, call.get("id"), f"{at}.function.name"))


class OpenAIFormat(RecordFormat):
    """``openai``: Chat Completions message lists (see the module's docstring)."""

    name: ClassVar[str] = "openai"
    # every step field is built from checked parts: kinds and event names are ours; content is
    # text (text_of); names and ids are checked text; arguments an object or text
    # (tool_call); a result any JSON value and its error text (tool_outcome); attributes an
    # object with text keys (usage_attributes). Only a timestamp is taken as given (Step
    # parses it, so a case with one is built). test_lines fuzzes records to hold this.
    steps_checked: ClassVar[bool] = True

    def one_conversation(self, items: list[Any]) -> bool:
        """A JSON list whose first item is a message is one conversation."""
        return bool(items) and is_message(items[0])

    def convert(self, record: Any) -> dict[str, Any]:
        """One conversation as a case's fields."""
        error = None
        if isinstance(record, dict):
            record, error = request_and_response(record)
        found = _messages_key(record) if isinstance(record, dict) else None
        if isinstance(record, list):
            messages, fields, key = record, {}, "messages"
        elif isinstance(record, dict) and found is not None:
            messages, fields, key = record[found], record, found
        else:
            raise not_a_conversation(record, "a list of messages or an object with 'messages'")
        steps, first_user = openai_steps(messages, key)
        reply = last_reply(steps)
        if reply is not None:
            add_attributes(reply, usage_attributes(fields))
        case = case_fields(fields, steps, first_user, (key, "model", "usage", "cost"))
        if error is not None:
            case["error"] = error
        return case

    def api_response(self, data: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        """A Chat Completions response: its first choice's message, and its token usage."""
        if not isinstance(data.get("choices"), list):
            return data, None
        raw = data.get("usage")
        usage = raw if isinstance(raw, dict) else {}
        messages = [c["message"] for c in data["choices"] if isinstance(c, dict) and "message" in c]
        return {"messages": messages[:1]}, tokens(
            usage.get("prompt_tokens"), usage.get("completion_tokens")
        )


def _messages_key(record: dict[str, Any]) -> str | None:
    """Where an object keeps its messages: ``messages``, or ``traj`` / ``trajectory`` as
    tau-bench's result files do."""
    for key in ("messages", "traj", "trajectory"):
        if key in record:
            return key
    return None
