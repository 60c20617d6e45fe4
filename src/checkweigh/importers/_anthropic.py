"""Anthropic Messages.

A record is a list of messages, or an object with ``messages`` and optionally ``system``
(text or text blocks: a system step first), ``id``, ``input``, ``final_state``,
``ground_truth``, ``metadata``, ``model``, ``usage`` and ``cost`` (any other key is kept in the
case's metadata). A message's content is text or a list of blocks, read in order:

- ``text``: the message's text (a user or assistant step; consecutive text blocks are joined,
  and text beside ``tool_use`` blocks stays assistant content);
- ``tool_use`` (and ``server_tool_use`` / ``mcp_tool_use``): a tool call (``name``, ``input``
  as its arguments, ``id``);
- ``tool_result`` (any ``*_tool_result``): the result of the call its ``tool_use_id`` names
  (see :class:`~._convert.Pairer`); ``is_error: true`` makes the result's text the call's
  error; a result that answers no call is kept as a ``tool_result`` event. A user message that
  holds only tool results gives no user step;
- ``thinking`` / ``redacted_thinking``: an event of that name (the thinking as its content);
- ``image`` and ``document``: no text; any other block: an event named by its type.

A message's own ``model`` / ``usage`` go to the attributes of its first assistant step (else
its first step); the record's go to its last assistant step. A ``{request, response}`` record
is the request's messages and the response message; a response that is an API error makes an
errored case (its ``error``).
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

_CALLS = ("tool_use", "server_tool_use", "mcp_tool_use")
_NO_TEXT = ("image", "document")


def anthropic_steps(
    messages: Any, where: str = "messages", system: Any = None
) -> tuple[list[StepDict], str | None]:
    """The steps of an Anthropic message list (after its system prompt, if given), and the
    first user message's text.

    Raises:
        RecordError: not a list of messages, an unknown role, a tool use without a name...
    """
    if not isinstance(messages, list):
        raise RecordError(f"{where}: expected a list of messages, got {kind_of(messages)}")
    steps: list[StepDict] = []
    prompt = text_of(system, "system")
    if prompt:
        steps.append({"kind": "system", "content": prompt})
    pairer = Pairer(steps)
    first_user: str | None = None
    for i, message in enumerate(messages):
        at = f"{where}[{i}]"
        if not isinstance(message, dict):
            raise RecordError(f"{at}: expected a message (an object), got {kind_of(message)}")
        role = message.get("role")
        if role not in ("user", "assistant", "system"):
            got = "missing" if role is None else short(role)
            raise RecordError(f"{at}.role: unknown role {got}; expected user or assistant")
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            raise RecordError(
                f"{at}.content: expected text or a list of blocks, got {kind_of(content)}"
            )
        if role == "assistant":
            pairer.close()  # a new turn: calls still open stay without a result
        first = len(steps)
        text = _blocks(blocks, role, f"{at}.content", steps, pairer)
        if role == "user" and text is not None and first_user is None:
            first_user = text
        if len(steps) > first and len(message) > 2:  # more than role and content
            add_attributes(message_step(steps, first), usage_attributes(message))
    return steps, first_user


def _blocks(
    blocks: list[Any], role: str, at: str, steps: list[StepDict], pairer: Pairer
) -> str | None:
    """Add the steps of one message's blocks; the user's text, None if it gave none."""
    texts: list[str] = []
    spoke = False  # whether the message gave a text step (even an empty one)
    produced = False  # whether it gave any step or paired any result
    # text of an assistant message that also calls the client's tools (which end the turn)
    # is a preamble, not a reply; text after a server tool's result answers the user
    calls = sum(isinstance(b, dict) and b.get("type") == "tool_use" for b in blocks)
    marked = role == "assistant" and calls > 0

    def flush() -> None:
        nonlocal spoke
        if texts:
            step: StepDict = {"kind": role, "content": "\n".join(texts)}
            if marked:
                step["attributes"] = {"tool_calls": calls}
            steps.append(step)
            texts.clear()
            spoke = True

    user_text: list[str] = []
    for j, block in enumerate(blocks):
        where = f"{at}[{j}]"
        if isinstance(block, str):
            block = {"type": "text", "text": block}
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise RecordError(
                f"{where}: expected a content block (an object with a type), got {kind_of(block)}"
            )
        kind = block["type"]
        if kind == "text":
            text = text_of(block.get("text"), f"{where}.text") or ""
            texts.append(text)
            user_text.append(text)
            continue
        if kind in _NO_TEXT:
            continue
        flush()
        produced = True
        if kind in _CALLS:
            pairer.add(
                tool_call(block.get("name"), block.get("input"), block.get("id"), f"{where}.name")
            )
        elif kind.endswith("tool_result"):
            result = block.get("content")
            if isinstance(result, list) and all(
                isinstance(b, dict) and b.get("type") in ("text", *_NO_TEXT) for b in result
            ):
                result = text_of(result, f"{where}.content")
            errored = block.get("is_error") is True or (
                isinstance(result, dict) and str(result.get("type", "")).endswith("_error")
            )
            answer(steps, pairer, result, call_id=block.get("tool_use_id"), flagged=errored)
        elif kind in ("thinking", "redacted_thinking"):
            thought = block.get("thinking")
            event: StepDict = {"kind": "event", "name": kind}
            if isinstance(thought, str):
                event["content"] = thought
            steps.append(event)
        else:
            steps.append(
                {
                    "kind": "event",
                    "name": kind,
                    "result": {k: v for k, v in block.items() if k != "type"},
                }
            )
    flush()
    if not spoke and not produced:
        steps.append({"kind": role, "content": ""})  # an empty turn is still a turn
        spoke = True
    return "\n".join(user_text) if spoke and role == "user" else None


class AnthropicFormat(RecordFormat):
    """``anthropic``: Anthropic Messages (see the module's docstring)."""

    name: ClassVar[str] = "anthropic"

    def one_conversation(self, items: list[Any]) -> bool:
        """A JSON list whose first item is a message is one conversation."""
        return bool(items) and is_message(items[0])

    def convert(self, record: Any) -> dict[str, Any]:
        """One conversation as a case's fields."""
        error = None
        if isinstance(record, dict):
            record, error = request_and_response(record)
        if isinstance(record, list):
            messages, fields = record, {}
        elif isinstance(record, dict) and "messages" in record:
            messages, fields = record["messages"], record
        else:
            raise not_a_conversation(record, "a list of messages or an object with 'messages'")
        steps, first_user = anthropic_steps(messages, system=fields.get("system"))
        reply = last_reply(steps)
        if reply is not None:
            add_attributes(reply, usage_attributes(fields))
        used = ("messages", "system", "model", "usage", "cost")
        case = case_fields(fields, steps, first_user, used)
        if error is not None:
            case["error"] = error
        return case

    def api_response(self, data: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        """An Anthropic Messages response: its content as the assistant's message, and its
        token usage."""
        if data.get("type") != "message" or data.get("role") != "assistant":
            return data, None
        raw = data.get("usage")
        usage = raw if isinstance(raw, dict) else {}
        content = data.get("content")
        messages = [{"role": "assistant", "content": content}] if content else []
        return {"messages": messages}, tokens(usage.get("input_tokens"), usage.get("output_tokens"))
