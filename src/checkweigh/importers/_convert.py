"""What the message formats share: one record is one conversation, tool calls are paired with
their results, content parts become text, and one rule tells an errored tool result.

Converters build plain step dicts (cheap to pair and edit) and the whole case is validated
once at the end, by :class:`RecordFormat`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Literal, NamedTuple

from pydantic import ValidationError
from pydantic_core import from_json, to_json

from ..core import Case
from ..errors import CheckweighError
from ._base import ImportContext, iter_records, short
from ._reply import Reply, record_reply
from ._wire import case_line

StepDict = dict[str, Any]
"""A step before validation: :class:`~checkweigh.core.Step`'s fields by name."""


class RecordError(CheckweighError, ValueError):
    """A record that cannot be converted: the message names the field, e.g.
    ``messages[3].role: unknown role 'bot'; expected ...``."""


def kind_of(value: object) -> str:
    """A JSON value's kind, for messages (``an object``, ``text``, ``a list``...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the text {short(value, 40)}"
    return "a list" if isinstance(value, list) else "an object"


def text_of(content: Any, where: str) -> str | None:
    """Message content as text: text as is; a list of content parts gives its text parts
    (``text``, ``input_text``, ``output_text``, ``refusal``) joined by newlines (other parts,
    such as images, hold no text); null gives None.

    Raises:
        RecordError: content that is neither text nor a list of parts.
    """
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise RecordError(
            f"{where}: expected text or a list of content parts, got {kind_of(content)}"
        )
    texts: list[str] = []
    for i, part in enumerate(content):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            text = part.get("text", part.get("refusal"))
            if isinstance(text, str):
                texts.append(text)
        else:
            raise RecordError(
                f"{where}[{i}]: expected a content part (an object), got {kind_of(part)}"
            )
    return "\n".join(texts)


def tool_outcome(value: Any, *, flagged: bool = False) -> tuple[Any, str | None]:
    """A tool result's value and its error, by the one rule every format shares.

    The value is the JSON a text result holds when that is an object or a list, else the
    result as given. The result is an error when the source flags it (``is_error: true``,
    ``error: true``), when it is a JSON object whose ``error`` key holds something (text, an
    object, true), or when its text starts with ``Error:`` (any case). The error's text is the
    ``error`` value's text (its ``message`` if it is an object), else the result's text.
    """
    text = value if isinstance(value, str) else None
    if text is not None and text[:1] in ("{", "["):
        try:
            value = from_json(text)
        except ValueError:
            value = text
    error: str | None = None
    if isinstance(value, dict) and value.get("error") not in (None, False, "", {}, []):
        found = value["error"]
        if isinstance(found, dict) and isinstance(found.get("message"), str):
            error = found["message"]
        elif isinstance(found, str):
            error = found
        else:
            error = text if text is not None else to_json(value).decode()
    elif text is not None and text.lstrip()[:6].lower() == "error:":
        error = text.strip()
    if flagged and error is None:
        error = (text if text is not None else to_json(value).decode()).strip() or "error"
    return value, error


_USAGE_NAMES = {"prompt_tokens": "input_tokens", "completion_tokens": "output_tokens"}


def usage_attributes(source: dict[str, Any]) -> dict[str, Any]:
    """A message's or record's ``model``, ``usage`` and ``cost`` as step attributes: ``model``,
    ``input_tokens``, ``output_tokens`` (OpenAI's ``prompt_tokens`` / ``completion_tokens``
    renamed), ``cost_usd``, and the usage's other keys as given."""
    attrs: dict[str, Any] = {}
    model = source.get("model")
    if isinstance(model, str):
        attrs["model"] = model
    usage = source.get("usage")
    if isinstance(usage, dict):
        for key, value in usage.items():
            attrs[_USAGE_NAMES.get(str(key), str(key))] = value
    cost = source.get("cost")
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        attrs["cost_usd"] = cost
    return attrs


def add_attributes(step: StepDict, attrs: dict[str, Any]) -> None:
    """Merge ``attrs`` into a step's attributes (keys it has already win)."""
    if attrs:
        step["attributes"] = {**attrs, **step.get("attributes", {})}


def message_step(steps: list[StepDict], first: int) -> StepDict:
    """The step a message's own model and usage go to, of those it gave (``steps[first:]``):
    its first assistant step, else its first step (a reply that is tool calls only, or
    that starts with thinking, counts its usage once, on its own steps)."""
    for step in steps[first:]:
        if step["kind"] == "assistant":
            return step
    return steps[first]


def last_reply(steps: list[StepDict]) -> StepDict | None:
    """The step a record's own model and usage describe: its last assistant message, else its
    last step."""
    for step in reversed(steps):
        if step["kind"] == "assistant":
            return step
    return steps[-1] if steps else None


def tool_call(name: Any, arguments: Any, call_id: Any, where: str) -> StepDict:
    """A tool-call step. Arguments may be an object or JSON text (parsed by the step); other
    values are kept as JSON text (marked unparsed); empty text means no arguments.

    Raises:
        RecordError: the call has no name.
    """
    if not isinstance(name, str) or not name.strip():
        raise RecordError(f"{where}: a tool call without a name (got {kind_of(name)})")
    step: StepDict = {"kind": "tool_call", "name": name}
    if isinstance(arguments, str) and not arguments.strip():
        arguments = {}
    if isinstance(arguments, str):
        arguments = parsed_arguments(arguments)
    elif arguments is not None and not isinstance(arguments, dict):
        arguments = to_json(arguments).decode()
    if arguments is not None:
        step["arguments"] = arguments
    if isinstance(call_id, str) and call_id:
        step["id"] = call_id
    return step


def parsed_arguments(text: str) -> dict[str, Any] | str:
    """Arguments given as JSON text, parsed as :class:`~checkweigh.core.Step` parses them: a
    JSON object, else the text as given."""
    try:
        parsed = from_json(text)
    except ValueError:
        return text
    return parsed if isinstance(parsed, dict) else text


class Pairer:
    """Pairs tool results with the calls they answer.

    A result names its call's id: it goes to the first open call with that id (so ids that
    repeat are paired in order), else to the first open call that has no id; a result without
    an id goes to the first open call (by name first, where the format names it). A result
    that answers no open call is not paired (the caller keeps it as an event).
    """

    __slots__ = ("_open", "_steps")

    def __init__(self, steps: list[StepDict]) -> None:
        self._steps = steps
        self._open: list[int] = []

    def add(self, step: StepDict) -> None:
        """Append a call that awaits its result."""
        self._open.append(len(self._steps))
        self._steps.append(step)

    def close(self) -> None:
        """Calls still open stay without a result (a new turn began)."""
        self._open.clear()

    def pair(self, call_id: str | None, name: str | None = None) -> StepDict | None:
        """The call a result answers, no longer open; None when it answers none."""
        steps, open_ = self._steps, self._open
        if call_id:
            for k, i in enumerate(open_):
                if steps[i].get("id") == call_id:
                    return steps[open_.pop(k)]
            for k, i in enumerate(open_):
                if "id" not in steps[i]:
                    return steps[open_.pop(k)]
            return None
        if name:
            for k, i in enumerate(open_):
                if steps[i]["name"] == name:
                    return steps[open_.pop(k)]
        return steps[open_.pop(0)] if open_ else None


def answer(
    steps: list[StepDict],
    pairer: Pairer,
    result: Any,
    *,
    call_id: Any,
    name: Any = None,
    flagged: bool = False,
) -> None:
    """Give a tool result to its call, or keep it as a ``tool_result`` event when it answers
    no call (so nothing is lost)."""
    value, error = tool_outcome(result, flagged=flagged)
    call_id = call_id if isinstance(call_id, str) and call_id else None
    call = pairer.pair(call_id, name if isinstance(name, str) else None)
    if call is None:
        call = {"kind": "event", "name": "tool_result"}
        if isinstance(result, str):
            call["content"] = result
        if call_id:
            call["id"] = call_id
        if isinstance(name, str):
            call["attributes"] = {"tool_name": name}
        steps.append(call)
    call["result"] = value
    if error is not None:
        call["error"] = error


def is_message(value: Any) -> bool:
    """Whether a value is one message (an object with a ``role``), not a conversation."""
    return isinstance(value, dict) and isinstance(value.get("role"), str)


def not_a_conversation(record: Any, holds: str) -> RecordError:
    """The error for a record that is not one conversation; a lone message says so (a file
    of messages one a line is not read as one conversation)."""
    if is_message(record) and "content" in record:
        return RecordError(
            f"expected {holds}, got a single message (an object with 'role'); a file that is "
            "one conversation holds its messages in one JSON list"
        )
    return RecordError(f"expected {holds}, got {kind_of(record)}")


_CASE_FIELDS = ("id", "input", "final_state", "ground_truth", "metadata")


def case_fields(
    record: dict[str, Any], steps: list[StepDict], first_user: str | None, used: tuple[str, ...]
) -> dict[str, Any]:
    """A case from a conversation object: its ``id``, ``input``, ``final_state``,
    ``ground_truth`` and ``metadata`` keys, and every other key (not in ``used``) kept in the
    metadata. The input defaults to the first user message's text."""
    case: dict[str, Any] = {"trace": steps, "input": record.get("input", first_user)}
    for key in ("id", "final_state", "ground_truth"):
        if key in record:
            case[key] = record[key]
    metadata = record.get("metadata", {})
    if not isinstance(metadata, dict):
        raise RecordError(f"metadata: expected an object, got {kind_of(metadata)}")
    rest = {k: v for k, v in record.items() if k not in _CASE_FIELDS and k not in used}
    if rest:
        case["metadata"] = {**rest, **metadata}
    elif metadata:
        case["metadata"] = metadata
    return case


def case_id(value: Any) -> str:
    """A record's id as a case id: text, or a whole number.

    Raises:
        RecordError: anything else.
    """
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise RecordError(f"id: expected non-empty text or a whole number, got {kind_of(value)}")


class Record(NamedTuple):
    """One record of a file and where it is."""

    line: int | None
    """Its line (JSONL), or None."""
    key: str
    """What names it in a default id (``<file stem>-<key>``): its line or its position."""
    label: str
    """What starts a message about it when the line does not say (``record 3: ``)."""
    value: Any
    """The record."""


class RecordFormat:
    """A format whose records each hold one conversation (a JSON value, a JSON list of them,
    or JSONL). Subclasses convert one record; this reads the file, names the cases that have
    no id (``<file stem>-<line>``, or ``<file stem>-<n>`` for the n-th record of a JSON
    document), validates them and sends bad records to the context."""

    name: ClassVar[str]
    steps_checked: ClassVar[bool] = False
    """True when :meth:`convert` gives every step field the type ``Step`` declares for it,
    by construction (it checks what it takes from the record): writing a line then checks
    only the case's own fields (see :func:`~._wire.case_line`)."""

    def convert(self, record: Any) -> dict[str, Any]:
        """One record as a case's fields (``id`` may be left out).

        Raises:
            RecordError: the record is not one conversation of this format.
        """
        raise NotImplementedError

    def one_conversation(self, items: list[Any]) -> bool:
        """Whether a JSON document that is a list is one conversation (a list of messages)
        rather than a list of records; formats whose records can be lists say which."""
        return False

    reply_input: ClassVar[Literal["json", "text"]] = "json"
    speaks: ClassVar[bool] = True
    """Whether a reply must hold a message (a record of the format may hold only a state)."""

    def read_reply(self, data: Any) -> Reply:
        """An agent's reply (its JSON) as one record of this format (see
        :func:`~._reply.record_reply`).

        Raises:
            ReplyError: not one conversation of this format, or no message in it.
        """
        return record_reply(self, data, speaks=self.speaks)

    def api_response(self, data: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        """An agent that answers like the provider's API (a Chat Completions response, say)
        rather than with a message list: its message(s) as a record, and its token usage.
        Formats of a provider override it; anything else is read as it is."""
        return data, None

    def records(self, path: Path, ctx: ImportContext) -> Iterator[Record]:
        """The file's records: where each is (its line, or None) and its default id's suffix
        and message label. Formats whose records sit inside others override this."""
        whole = self.one_conversation
        for n, (line, record) in enumerate(iter_records(path, ctx, whole), start=1):
            if line is not None:
                yield Record(line, str(line), "", record)
            else:
                yield Record(None, str(n), f"record {n}: ", record)

    def cases(self, path: Path, ctx: ImportContext) -> Iterator[Case]:
        """The file's cases, in order; bad records go to ``ctx.bad``."""
        validate = Case.model_validate
        for line, label, data in self._converted(path, ctx):
            try:
                case = validate(data)
            except ValidationError as exc:
                ctx.bad(path, line, f"{label}{validation_text(exc)}")
                continue
            if ctx.accept(case, path, line, label=label):
                yield case

    def case_lines(self, path: Path, ctx: ImportContext) -> Iterator[bytes]:
        """The file's cases as lines of checkweigh JSONL, as :meth:`cases` reads them and
        ``model_dump_json(exclude_defaults=True)`` writes them (the same keys and values), but
        most without building the case (see :func:`~._wire.case_line`)."""
        for line, label, data in self._converted(path, ctx):
            text = case_line(data, steps_checked=self.steps_checked)
            if text is None:
                try:
                    case = Case.model_validate(data)
                except ValidationError as exc:
                    ctx.bad(path, line, f"{label}{validation_text(exc)}")
                    continue
                text = case.model_dump_json(exclude_defaults=True).encode() + b"\n"
            if ctx.accept_id(data["id"], path, line, label=label):
                yield text

    def _converted(
        self, path: Path, ctx: ImportContext
    ) -> Iterator[tuple[int | None, str, dict[str, Any]]]:
        """Each record's line, message label and case fields (with its id); a record that
        cannot be converted goes to ``ctx.bad``."""
        stem = path.stem
        convert = self.convert
        for line, key, label, record in self.records(path, ctx):
            try:
                data = convert(record)
                data["id"] = case_id(data["id"]) if "id" in data else f"{stem}-{key}"
            except RecordError as exc:
                ctx.bad(path, line, f"{label}{exc}")
                continue
            yield line, label, data


def validation_text(exc: ValidationError) -> str:
    """The first error of validating a case, as ``trace[2].error: Input should be ...``."""
    err = exc.errors(include_url=False)[0]
    loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".")
    return f"{loc}: {err['msg']}" if loc else err["msg"]
