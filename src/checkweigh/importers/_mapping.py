"""Any JSON or JSONL log, through a declarative field mapping.

The mapping names, as field paths into each record (``session.id``, ``turns[0].text``),
where the case's parts live::

    id: session_id              # or a list of paths, joined with '-': [task_id, trial]
    messages: conversation      # the messages, in ``messages_format`` (default openai)
    messages_format: anthropic  # openai, openai-responses or anthropic
    system: system_prompt       # anthropic: the system prompt
    final_state: outcome.state
    ground_truth: task.expected
    metadata: {task: task_id, model: agent.model}   # or one path to an object
    records: simulations        # when each value of the file holds a list of records
    input: request.text         # default: the first user message's text
    error: info.error           # a failed run's error: an errored case (optional by nature)

``trace`` instead of ``messages`` names steps already in checkweigh's own step format. Every
path given must resolve in every record: a record where one does not is a bad record naming
the field and the path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator
from pydantic_core import to_json

from ..core import FieldPath
from ._anthropic import anthropic_steps
from ._base import ImportContext
from ._convert import Record, RecordError, RecordFormat, StepDict, case_id, kind_of
from ._openai import openai_steps
from ._responses import responses_steps

MessagesFormat = Literal["openai", "openai-responses", "anthropic"]


def _check_path(value: str) -> str:
    FieldPath.parse(value)  # raises PathSyntaxError, a ValueError: pydantic names the field
    return value


class FieldMapping(BaseModel):
    """Where a log record keeps a case's parts: field paths into the record."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    records: str | None = None
    """Where the records are, when each value of the file holds a list of them (e.g.
    ``simulations`` in tau2-bench's results); the other paths are then into each record."""
    id: str | list[str] | None = Field(default=None, min_length=1)
    """The case id's path, or several paths whose values are joined with ``-``; without it,
    ``<file stem>-<line>``."""
    input: str | None = None
    """The case's input; without it, the first user message's text."""
    messages: str | None = None
    """The conversation's messages."""
    messages_format: MessagesFormat = "openai"
    """The format the messages are in."""
    system: str | None = None
    """The system prompt (Anthropic messages keep it beside them)."""
    trace: str | None = None
    """Steps already in checkweigh's step format (instead of ``messages``)."""
    final_state: str | None = None
    """The agent's final state (an object; null when the run recorded none)."""
    error: str | None = None
    """Where a run that failed keeps its error (e.g. ``info.error`` in tau-bench's results):
    a record with something there is an errored case, and the other paths need not resolve
    in it (a crashed run keeps little else). Absent or null: the run did not fail."""
    ground_truth: str | None = None
    """The reference."""
    metadata: str | dict[str, str] | None = None
    """A path to an object, or metadata names to paths."""
    _paths: dict[str, FieldPath] = PrivateAttr(default_factory=dict)

    @field_validator(
        "records",
        "id",
        "input",
        "messages",
        "system",
        "trace",
        "final_state",
        "ground_truth",
        "error",
    )
    @classmethod
    def _paths_parse(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list):
            return [_check_path(v) for v in value]
        return None if value is None else _check_path(value)

    @field_validator("metadata")
    @classmethod
    def _metadata_paths(cls, value: str | dict[str, str] | None) -> str | dict[str, str] | None:
        if isinstance(value, dict):
            return {name: _check_path(path) for name, path in value.items()}
        return None if value is None else _check_path(value)

    @model_validator(mode="after")
    def _consistent(self) -> FieldMapping:
        if self.messages is not None and self.trace is not None:
            raise ValueError("give either 'messages' or 'trace', not both")
        if self.system is not None and self.messages_format != "anthropic":
            raise ValueError("'system' applies to messages_format: anthropic")
        return self

    def path(self, text: str) -> FieldPath:
        """The parsed path (parsed once)."""
        found = self._paths.get(text)
        if found is None:
            found = self._paths[text] = FieldPath.parse(text)
        return found


_ABSENT = object()


def _first_user(steps: Any) -> str | None:
    """The first user step's text, in steps given in checkweigh's own format."""
    for step in steps if isinstance(steps, list) else ():
        if isinstance(step, dict) and step.get("kind") == "user":
            content = step.get("content")
            return content if isinstance(content, str) else None
    return None


_STEPS: dict[str, Callable[..., tuple[list[StepDict], str | None]]] = {
    "openai": openai_steps,
    "openai-responses": responses_steps,
    "anthropic": anthropic_steps,
}


class MappingFormat(RecordFormat):
    """``mapping``: any JSON or JSONL log through a :class:`FieldMapping`."""

    name: ClassVar[str] = "mapping"

    speaks: ClassVar[bool] = False  # a reply may hold only the agent's final state

    def __init__(self, mapping: FieldMapping | dict[str, Any]) -> None:
        self.mapping = (
            mapping if isinstance(mapping, FieldMapping) else FieldMapping.model_validate(mapping)
        )

    def records(self, path: Path, ctx: ImportContext) -> Iterator[Record]:
        """Each value of the file, or the records listed in it at ``mapping.records``."""
        where = self.mapping.records
        if where is None:
            yield from super().records(path, ctx)
            return
        for outer in super().records(path, ctx):
            items = self.mapping.path(where).get(outer.value, _ABSENT)
            if not isinstance(items, list):
                got = "no value" if items is _ABSENT else kind_of(items)
                message = f"records: expected a list of records at {where!r}, got {got}"
                ctx.bad(path, outer.line, f"{outer.label}{message}")
                continue
            for i, item in enumerate(items):
                ctx.records += 1
                label = f"{outer.label}{where}[{i}]: "
                yield Record(outer.line, f"{outer.key}-{i + 1}", label, item)
            ctx.records -= 1  # the outer value held them; it is not a record itself

    def _get(self, record: dict[str, Any], field: str, text: str, lenient: bool = False) -> Any:
        """The value at ``text``; a path that does not resolve is a bad record naming the
        field, unless ``lenient`` (an errored run's record), which gives ``_ABSENT``."""
        value = self.mapping.path(text).get(record, _ABSENT)
        if value is _ABSENT and not lenient:
            raise RecordError(f"{field}: no value at {text!r} (mapping.{field})")
        return value

    def _error(self, record: dict[str, Any]) -> str | None:
        """The run's error, when the mapping says where and the record has one."""
        if self.mapping.error is None:
            return None
        found = self.mapping.path(self.mapping.error).get(record, None)
        if found in (None, "", False, {}, []):
            return None
        text = found if isinstance(found, str) else to_json(found).decode()
        return " ".join(text.split()) or "error"  # one line, as reports show it

    def convert(self, record: Any) -> dict[str, Any]:
        """One record as a case's fields."""
        if not isinstance(record, dict):
            raise RecordError(f"expected a record (an object), got {kind_of(record)}")
        m = self.mapping
        error = self._error(record)
        lenient = error is not None

        def get(field: str, text: str) -> Any:
            return self._get(record, field, text, lenient)

        case: dict[str, Any] = {}
        first_user: str | None = None
        if m.messages is not None:
            messages = get("messages", m.messages)
            if m.messages_format == "openai-responses" and isinstance(messages, dict):
                messages = [*(messages.get("input") or []), *(messages.get("output") or [])]
            convert = _STEPS[m.messages_format]
            if messages is _ABSENT:
                pass
            elif m.system is not None:
                system = get("system", m.system)
                system = None if system is _ABSENT else system
                case["trace"], first_user = convert(messages, m.messages, system=system)
            else:
                case["trace"], first_user = convert(messages, m.messages)
        elif m.trace is not None:
            steps = get("trace", m.trace)
            if steps is not _ABSENT:
                case["trace"] = steps
                first_user = _first_user(steps)
        if m.id is not None:
            paths = m.id if isinstance(m.id, list) else [m.id]
            parts = [case_id(self._get(record, "id", p)) for p in paths]
            case["id"] = "-".join(parts)
        given = get("input", m.input) if m.input else first_user
        case["input"] = None if given is _ABSENT else given
        for field in ("final_state", "ground_truth"):
            text = getattr(m, field)
            value = _ABSENT if text is None else get(field, text)
            # a run that recorded no final state (null) has none, rather than a bad one
            if value is not _ABSENT and not (field == "final_state" and value is None):
                case[field] = value
        if isinstance(m.metadata, str):
            metadata = get("metadata", m.metadata)
            if metadata is not _ABSENT:
                case["metadata"] = metadata
        elif m.metadata is not None:
            found = {k: get("metadata", p) for k, p in m.metadata.items()}
            case["metadata"] = {k: v for k, v in found.items() if v is not _ABSENT}
        if error is not None:
            case["error"] = error
        return case
