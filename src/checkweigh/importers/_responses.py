"""OpenAI Responses API items.

A record is a list of items, or an object with ``input`` (a list of items, or text: the user's
message) and / or ``output`` (a list of items), e.g. a request and its response logged
together, or a response object. ``instructions`` is a system step first; ``id``,
``final_state``, ``ground_truth`` and ``metadata`` are the case's own; ``model``, ``usage``
and ``cost`` go to the attributes of the last assistant step; other keys are kept in the
case's metadata. Items become steps:

- ``message`` (or an item with a ``role`` and no ``type``): a user, assistant or system step;
- ``function_call`` / ``custom_tool_call``: a tool call (``name``, ``arguments`` as JSON
  text or ``input``, ``call_id`` as its id); ``function_call_output`` /
  ``custom_tool_call_output`` (any ``*_call_output``) gives the call it names by ``call_id``
  its result (see :class:`~._convert.Pairer`); one that answers no call is kept as a
  ``tool_result`` event;
- ``mcp_call``: a tool call with its ``output`` and ``error``;
- a built-in tool's ``*_call`` (``web_search_call``, ``file_search_call``,
  ``code_interpreter_call``, ``computer_call``...): a tool call named without ``_call``, whose
  arguments are the item's other fields;
- ``reasoning``: a ``reasoning`` event whose content is the summary's (and content's) text;
- any other item type: an event of that name, the item kept as its result.
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
    kind_of,
    last_reply,
    message_step,
    text_of,
    tool_call,
    usage_attributes,
)
from ._logged import responses_request_and_response

_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
_ITEM_KEYS = ("type", "id", "call_id", "status")


def responses_steps(items: Any, where: str = "input") -> tuple[list[StepDict], str | None]:
    """The steps of a list of Responses API items, and the first user message's text.

    Raises:
        RecordError: not a list of items, an item without a type, an unknown role...
    """
    steps: list[StepDict] = []
    first_user = _add_items(items, where, steps, Pairer(steps))
    return steps, first_user


def _add_items(items: Any, where: str, steps: list[StepDict], pairer: Pairer) -> str | None:
    if not isinstance(items, list):
        raise RecordError(f"{where}: expected a list of items, got {kind_of(items)}")
    first_user: str | None = None
    said: StepDict | None = None
    """The assistant's last message while no tool result or other message came after it:
    function calls that follow it make it a preamble to them, not a reply."""
    for i, item in enumerate(items):
        at = f"{where}[{i}]"
        if not isinstance(item, dict):
            raise RecordError(f"{at}: expected an item (an object), got {kind_of(item)}")
        kind = item.get("type", "message" if "role" in item else None)
        if not isinstance(kind, str):
            raise RecordError(f"{at}.type: expected an item type such as 'message', got none")
        if kind == "message":
            text = _message(item, at, steps, pairer)
            if first_user is None and text is not None:
                first_user = text
            said = steps[-1] if steps[-1]["kind"] == "assistant" else None
        elif kind in ("function_call", "custom_tool_call"):
            args = item.get("arguments", item.get("input"))
            pairer.add(tool_call(item.get("name"), args, _call_id(item), f"{at}.name"))
            if said is not None:
                attrs = said.setdefault("attributes", {})
                attrs["tool_calls"] = attrs.get("tool_calls", 0) + 1
        elif kind.endswith("_call_output"):
            said = None
            output = item.get("output")
            value = output if isinstance(output, dict) else text_of(output, f"{at}.output")
            answer(steps, pairer, value, call_id=item.get("call_id"))
        elif kind == "mcp_call":
            step = tool_call(item.get("name"), item.get("arguments"), _call_id(item), f"{at}.name")
            step["result"] = item.get("output")
            if isinstance(item.get("error"), str) and item["error"]:
                step["error"] = item["error"]
            steps.append(step)
        elif kind.endswith("_call"):
            args = {k: v for k, v in item.items() if k not in _ITEM_KEYS}
            step = tool_call(kind.removesuffix("_call"), args, _call_id(item), f"{at}.type")
            if item.get("status") == "failed":
                step["error"] = "failed"
            pairer.add(step)
        elif kind == "reasoning":
            parts = [*_list(item.get("summary")), *_list(item.get("content"))]
            event: StepDict = {"kind": "event", "name": "reasoning"}
            event["content"] = text_of(parts, f"{at}.summary") or ""
            if isinstance(item.get("id"), str):
                event["id"] = item["id"]
            steps.append(event)
        else:
            rest = {k: v for k, v in item.items() if k != "type"}
            steps.append({"kind": "event", "name": kind, "result": rest})
    return first_user


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _call_id(item: dict[str, Any]) -> Any:
    return item.get("call_id") or item.get("id")


def _message(item: dict[str, Any], at: str, steps: list[StepDict], pairer: Pairer) -> str | None:
    """Add a message item's step; the text of a user message."""
    role = item.get("role")
    kind = _ROLES.get(role) if isinstance(role, str) else None
    if kind is None:
        got = "missing" if role is None else short(role)
        raise RecordError(
            f"{at}.role: unknown role {got}; expected user, assistant, system or developer"
        )
    text = text_of(item.get("content"), f"{at}.content") or ""
    step: StepDict = {"kind": kind, "content": text}
    if role == "developer":
        step["attributes"] = {"role": "developer"}
    if kind == "user":
        pairer.close()  # a new turn: calls still open stay without a result
    steps.append(step)
    return text if kind == "user" else None


class ResponsesFormat(RecordFormat):
    """``openai-responses``: Responses API input and output items (see the module's docstring)."""

    name: ClassVar[str] = "openai-responses"

    def one_conversation(self, items: list[Any]) -> bool:
        """A JSON list whose first item is an item (a message, or an object with a type) is
        one conversation; a list of requests or responses (which have neither) is not."""
        first = items[0] if items else None
        return isinstance(first, dict) and (
            isinstance(first.get("role"), str) or isinstance(first.get("type"), str)
        )

    def convert(self, record: Any) -> dict[str, Any]:
        """One conversation as a case's fields."""
        if isinstance(record, list):
            items, user = responses_steps(record)
            return case_fields({}, items, user, ())
        error = None
        if isinstance(record, dict) and isinstance(record.get("request"), dict):
            record, error = responses_request_and_response(record)
        if not isinstance(record, dict) or not ("input" in record or "output" in record):
            raise RecordError(
                "expected a list of items, an object with 'input' / 'output', or one with "
                f"'request' and 'response', got {kind_of(record)}"
            )
        steps: list[StepDict] = []
        pairer = Pairer(steps)
        instructions = record.get("instructions")
        if isinstance(instructions, str) and instructions:
            steps.append({"kind": "system", "content": instructions})
        given = record.get("input")
        first_user: str | None = None
        if isinstance(given, str):
            steps.append({"kind": "user", "content": given})
            first_user = given
        elif given is not None:
            first_user = _add_items(given, "input", steps, pairer)
        reply = None
        if record.get("output") is not None:
            start = len(steps)
            found = _add_items(record["output"], "output", steps, pairer)
            first_user = first_user if first_user is not None else found
            # the response's usage is its output's: on the reply's own steps, once
            reply = message_step(steps, start) if len(steps) > start else None
        reply = reply if reply is not None else last_reply(steps)
        if reply is not None:
            add_attributes(reply, usage_attributes(record))
        used = ("input", "output", "instructions", "model", "usage", "cost")
        # a response's "input" is not the case's input: the first user message is
        case = case_fields(
            {k: v for k, v in record.items() if k != "input"}, steps, first_user, used
        )
        if error is not None:
            case["error"] = error
        return case
