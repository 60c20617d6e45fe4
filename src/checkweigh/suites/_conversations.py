"""Before a run starts: cases the suite's target cannot hold as written are refused, with the
cases file and line, instead of each one erroring when its turn comes.

- A simulated user speaks through a model: the case's ``user.model``, else the run's
  ``--judge``. Without either, the case could never start.
- ``messages`` and ``turn`` are sent only in the turns of a conversation: an HTTP target
  whose ``body:`` reads them cannot send a case without a ``user``.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from pydantic import TypeAdapter, ValidationError

from ..core import SimulatedUser, UserSpec
from ..errors import CaseFileError
from ._cases import STREAMED, is_blank, iter_cases
from ._errors import first_error, loc_text
from ._http import BODY_REF, _strings
from ._suite import Suite
from ._text import BOM, shown

CONVERSATION_ONLY = ("messages", "turn")
"""What a request holds only in a conversation's turns."""
NO_MODEL = (
    "a simulated user needs a model: run with --judge PROVIDER:MODEL, or set user.model in the case"
)


def conversation_reads(body: Any) -> str | None:
    """The first ``{{...}}`` of a body template that reads what only a conversation's turns
    send (``{{messages}}``, ``{{turn}}``), or None."""
    for text in _strings(body):
        for found in BODY_REF.finditer(text):
            root = found.group(1).split(".", 1)[0].split("[", 1)[0]
            if root in CONVERSATION_ONLY:
                return found.group()
    return None


def check_conversations(suite: Suite, *, judge: bool) -> None:
    """Refuse the first case the suite's target cannot hold (see the module's docstring).

    Args:
        suite: the loaded suite, its cases already screened.
        judge: whether the run has a ``--judge`` (the simulated users' default model).

    Raises:
        CaseFileError: naming the cases file, the line (in JSONL) and the rule.
    """
    target = suite.target
    if target is None:
        return
    reads = conversation_reads(getattr(target, "body", None))
    if judge and reads is None:
        return
    source = suite.cases
    if source.imported:  # cases read from agent logs never hold a user
        if reads is not None:
            for case in source.iter_cases():
                raise _single(source.path, None, case.id, reads, suite.path)
        return
    for line, case_id, user in _users(source.path, every=reads is not None):
        if user is None:
            assert reads is not None  # only then is every case looked at
            raise _single(source.path, line, case_id, reads, suite.path)
        if "turns" in user and "goal" in user:  # what screening the file would say first
            _check_user(user, source.path, line)
        if not judge and user.get("goal") is not None and user.get("model") is None:
            raise CaseFileError(NO_MODEL, file=source.path, line=line, field="user.model")


_USER: TypeAdapter[Any] = TypeAdapter(UserSpec)


def _check_user(user: dict[str, Any], path: Path, line: int | None) -> None:
    """Refuse ``user`` as the cases file's reader refuses it (the same one line)."""
    try:
        _USER.validate_python(user)
    except ValidationError as exc:
        loc, message = first_error(exc)
        where = "user" + ("." + loc_text(loc) if loc else "")
        raise CaseFileError(message, file=path, line=line, field=where) from None


def _single(path: Path, line: int | None, case_id: str, ref: str, suite: Path) -> CaseFileError:
    return CaseFileError(
        f"case {shown(case_id)} has no user, but target.body in {suite.name} reads {ref}, "
        "which only the turns of a conversation send; give the case a user: block, or read "
        "{{input}}",
        file=path,
        line=line,
        field="user",
    )


def _users(path: Path, *, every: bool) -> Iterator[tuple[int | None, str, dict[str, Any] | None]]:
    """(line, case id, its ``user`` block or None) of the cases that may matter: every case
    when ``every``, else those that may hold a simulated user (a ``goal``)."""
    if path.suffix not in STREAMED:
        for case in iter_cases(path):
            user = case.user
            if every or isinstance(user, SimulatedUser):
                yield None, case.id, None if user is None else user.model_dump()
        return
    if not every and not _mentions(path, b'"goal"'):
        return  # most files: one search at the speed of memory, no line read
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, 1):
            if not every and b'"goal"' not in raw:
                continue
            if number == 1:
                raw = raw.removeprefix(BOM)
            if is_blank(raw):
                continue
            try:
                data = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue  # not a case: the screen (or the worker reading it) says so
            if not isinstance(data, dict):
                continue
            user = data.get("user")
            yield number, str(data.get("id")), user if isinstance(user, dict) else None


def _mentions(path: Path, text: bytes) -> bool:
    """Whether the file holds ``text`` anywhere."""
    with path.open("rb") as fh:
        try:
            mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file cannot be mapped
            return False
        with mapped:
            return mapped.find(text) != -1
