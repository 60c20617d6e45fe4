"""The ``lines`` log format: a text log, one message a line as ``ROLE: text``, conversations
separated by a blank line. ``# id: NAME`` names the next conversation (default
``<file stem>-<n>``); ``# state: {JSON}`` gives its final state::

    # id: refund-1
    user: I want my money back
    assistant: Refund issued.
    # state: {"refunded": true}

    user: hello
    assistant: hi

It reads files (``checkweigh import lines log.txt -o cases.jsonl``, ``cases: {format: lines}``)
and a command or HTTP agent's reply (``reply: {format: lines}``: the whole reply is one
conversation).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from checkweigh.core import Case
from checkweigh.importers import ImportContext, Reply, ReplyError

ROLES = ("system", "user", "assistant")


class _Conversation:
    def __init__(self, line: int) -> None:
        self.line = line
        self.id: str | None = None
        self.steps: list[dict[str, Any]] = []
        self.state: Any = {}


class LinesFormat:
    """``lines``: see the module's docstring."""

    name = "lines"
    reply_input = "text"  # read_reply is given the reply's text, not its JSON

    def cases(self, path: Path, ctx: ImportContext) -> Iterator[Case]:
        """One case per conversation; a line that is not ``ROLE: text`` is a bad record."""
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            ctx.bad(path, None, f"cannot read: {exc}")
            return
        for n, (conversation, problem) in enumerate(_conversations(text), start=1):
            ctx.records += 1
            if problem is not None:
                ctx.bad(path, problem[0], problem[1])
                continue
            case = Case(
                id=conversation.id or f"{path.stem}-{n}",
                input=next((s["content"] for s in conversation.steps if s["kind"] == "user"), ""),
                trace=conversation.steps,
                final_state=conversation.state,
            )
            if ctx.accept(case, path, conversation.line):
                yield case

    def read_reply(self, data: Any) -> Reply:
        """An agent's reply in this format: one conversation (its final state, if any)."""
        found = list(_conversations(data))
        if not found:
            raise ReplyError("it is empty", "silent")
        if len(found) > 1:
            raise ReplyError(f"expected one conversation, got {len(found)}")
        conversation, problem = found[0]
        if problem is not None:
            raise ReplyError(f"line {problem[0]}: {problem[1]}")
        return Reply(conversation.steps, conversation.state)


def _conversations(text: str) -> Iterator[tuple[_Conversation, tuple[int, str] | None]]:
    """Each conversation of ``text``, with the first problem in it (its line and what)."""
    current: _Conversation | None = None
    problem: tuple[int, str] | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            if current is not None:
                yield current, problem
            current, problem = None, None
            continue
        if current is None:
            current = _Conversation(number)
        if problem is not None:
            continue
        problem = _add(current, number, line)
    if current is not None:
        yield current, problem


def _add(conversation: _Conversation, number: int, line: str) -> tuple[int, str] | None:
    if line.startswith("# id:"):
        conversation.id = line[len("# id:") :].strip()
        return None
    if line.startswith("# state:"):
        try:
            conversation.state = json.loads(line[len("# state:") :])
        except ValueError as exc:
            return number, f"# state: expected JSON ({exc})"
        return None
    role, colon, said = line.partition(":")
    if not colon or role.strip().lower() not in ROLES:
        return number, f"expected 'ROLE: text' with a role of {', '.join(ROLES)}, got {line[:40]!r}"
    conversation.steps.append({"kind": role.strip().lower(), "content": said.strip()})
    return None
