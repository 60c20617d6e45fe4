"""A catalogue of logs that leave ``checkweigh import``'s fast way (cases written without being
built, ids kept as fingerprints) for the slow one, each run through the real CLI.

Each row is a realistic log with one such value: what is written is read back exactly (a long
integer stays an integer, NaN is null as before, a timestamp is parsed), and a bad one is
one line naming the file and line, exit 2, no traceback, nothing written. Duplicate ids in a
large log are each found, with where the first copy was.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic_core import from_json

from checkweigh.core import Case
from checkweigh.suites import iter_cases
from support.cli_process import run_cli

BIG = 2**80 + 7


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, timeout=120)  # the 20,000-case log takes a while


def _call(name: str, arguments: str, call_id: str = "call_1") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _refund(*, result: str, extra: dict[str, Any] | None = None) -> str:
    """A retail conversation: a refund looked up by a tool, as one JSONL line."""
    record = {
        "id": "refund-1",
        "messages": [
            {"role": "user", "content": "Refund order 4471 please."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [_call("get_order", '{"order_id": 4471}')],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": result},
            {"role": "assistant", "content": "Refunded."},
        ],
        **(extra or {}),
    }
    return json.dumps(record)


@dataclass(frozen=True)
class Row:
    """``checkweigh import openai log.jsonl --out out.jsonl`` on one log line."""

    id: str
    line: str
    error: str | None = None
    """The whole error line after ``error: `` (``{log}`` for the log's path); None: it imports."""
    written: dict[str, Any] = field(default_factory=dict)
    """Paths into the written case (``trace.2.result``) and the exact JSON value there."""


ROWS = [
    Row(
        "integer-beyond-64-bits-in-a-tool-result",
        _refund(result=json.dumps({"order_id": 4471, "payment_ref": BIG})),
        written={"trace.1.result": {"order_id": 4471, "payment_ref": BIG}},
    ),
    Row(
        "integer-beyond-64-bits-in-the-arguments",
        _refund(result="ok").replace('{\\"order_id\\": 4471}', f'{{\\"order_id\\": {BIG}}}'),
        written={"trace.1.arguments": {"order_id": BIG}},
    ),
    Row(
        "negative-19-digit-integer-in-the-metadata",
        _refund(result="ok", extra={"metadata": {"offset": -9999999999999999999}}),
        written={"metadata": {"offset": -9999999999999999999}},
    ),
    Row(
        "nan-in-a-tool-result",
        _refund(result='{"refund": NaN, "currency": "EUR"}'),
        written={"trace.1.result": {"refund": None, "currency": "EUR"}},
    ),
    Row(
        "infinity-in-the-usage",
        _refund(result="ok", extra={"usage": {"prompt_tokens": 12}}).replace(
            '"prompt_tokens": 12', '"prompt_tokens": 12, "budget": Infinity'
        ),
        written={"trace.2.attributes": {"input_tokens": 12, "budget": None}},
    ),
    Row(
        "timestamps-parsed",
        _refund(result="ok").replace(
            '"content": "Refunded."', '"content": "Refunded.", "timestamp": "2024-05-01T10:00:00Z"'
        ),
        written={"trace.2.timestamp": "2024-05-01T10:00:00Z"},
    ),
    Row(
        "arguments-that-are-not-json",
        _refund(result="ok").replace('{\\"order_id\\": 4471}', "order 4471"),
        written={"trace.1.arguments": "order 4471"},
    ),
    Row(
        "tool-result-null",
        _refund(result="ok").replace('"content": "ok"', '"content": null'),
        written={
            "trace.1": {
                "kind": "tool_call",
                "name": "get_order",
                "arguments": {"order_id": 4471},
                "id": "call_1",
            }
        },
    ),
    Row(
        "bad-timestamp",
        _refund(result="ok").replace(
            '"content": "Refunded."', '"content": "Refunded.", "timestamp": "soon"'
        ),
        error="{log}:1: trace[2].timestamp: Input should be a valid datetime or date, input is "
        "too short",
    ),
    Row(
        "final-state-not-an-object",
        _refund(result="ok", extra={"final_state": ["refunded"]}),
        error="{log}:1: final_state: Input should be a valid dictionary",
    ),
    Row(
        "lone-surrogate",
        _refund(result="ok").replace("Refund order", "Refund \\ud800 order"),
        # valid JSON the fast parser refuses: read again, the lone surrogate kept visible
        written={"trace.0.content": "Refund \\ud800 order 4471 please."},
    ),
    Row(
        "nested-too-deep",
        _refund(result="ok", extra={"metadata": {"tree": "DEEP"}}).replace(
            '"DEEP"', "[" * 300 + "]" * 300
        ),
        error="{log}:1: invalid JSON: recursion limit exceeded at column 586",
    ),
]


def _at(case: dict[str, Any], path: str) -> Any:
    value: Any = case
    for key in path.split("."):
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_values_the_fast_way_leaves_to_the_slow_one(tmp_path: Path, row: Row) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(row.line + "\n", encoding="utf-8")
    proc = _cli("import", "openai", str(log), "--out", "out.jsonl", cwd=tmp_path)
    assert "Traceback" not in proc.stderr
    out = tmp_path / "out.jsonl"
    if row.error is not None:
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.splitlines() == [f"error: {row.error.format(log=log)}"]
        assert not out.exists()
        return
    assert proc.returncode == 0, proc.stderr
    (line,) = out.read_bytes().splitlines()
    written = from_json(line)
    for path, value in row.written.items():
        assert _at(written, path) == value, path
    assert list(iter_cases(out)) == [Case.model_validate_json(line)]  # checkweigh run reads it


def _log(path: Path, ids: list[str]) -> Path:
    lines = []
    for case_id in ids:
        record = json.loads(_refund(result='{"status": "refunded"}'))
        record["id"] = case_id
        lines.append(json.dumps(record))
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_duplicate_ids_across_large_logs_are_each_found(tmp_path: Path) -> None:
    a = _log(tmp_path / "a.jsonl", [f"refund-{i}" for i in range(20_000)])
    b = _log(tmp_path / "b.jsonl", ["refund-19999", "new-1", "refund-0", "new-1", "refund-8191"])
    proc = _cli(
        "import", "openai", "a.jsonl", "b.jsonl", "--out", "out.jsonl",
        "--on-bad-record", "skip", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "read 20005 record(s) from 2 file(s); wrote 20001 case(s) to out.jsonl",
        "skipped 4 bad record(s):",
        "  b.jsonl:1: duplicate case id 'refund-19999' (first at a.jsonl:20000)",
        "  b.jsonl:3: duplicate case id 'refund-0' (first at a.jsonl:1)",
        "  b.jsonl:4: duplicate case id 'new-1' (first at b.jsonl:2)",
        "  b.jsonl:5: duplicate case id 'refund-8191' (first at a.jsonl:8192)",
    ]
    ids = [case.id for case in iter_cases(tmp_path / "out.jsonl")]
    assert ids == [*(f"refund-{i}" for i in range(20_000)), "new-1"]

    proc = _cli("import", "openai", str(a), str(b), "--out", "out2.jsonl", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"error: {b}:1: duplicate case id 'refund-19999' (first at {a}:20000)"
    ]
    assert not (tmp_path / "out2.jsonl").exists()
