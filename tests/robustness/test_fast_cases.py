"""Recorded cases through ``checkweigh run`` now that msgspec builds most of them (the fast
path of ``suites/_fast.py``) and pydantic validates only what it does not vouch for.

Each valid row is a case written the way recorders and hand-written files write them (nulls,
JSON-text arguments, timestamps, long tool results, deep results): the run from the JSONL
file must store exactly what a run of the same cases from a JSON document stores (those are
validated by pydantic alone). Each bad row is a mistake on one line: exit 2, one line naming
the file, the line and the field, the words reading the file gives, and no database.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from checkweigh.errors import CaseFileError
from checkweigh.store import Store
from checkweigh.suites import iter_cases
from support.recorded_suite import standard_cases, write_suite


def _edit(index: int, **changes: Any) -> list[dict[str, Any]]:
    cases = standard_cases()
    cases[index] = {**cases[index], **changes}
    return cases


def _step(index: int, step: int, **changes: Any) -> list[dict[str, Any]]:
    cases = standard_cases()
    trace = list(cases[index]["trace"])
    trace[step] = {**trace[step], **changes}
    cases[index] = {**cases[index], "trace": trace}
    return cases


def _deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


FLIGHTS = [{"flight": f"HAT{k:03d}", "seats": {"economy": k, "business": k % 4}} for k in range(40)]

VALID = [
    ("explicit nulls", _step(0, 1, content=None, error=None, timestamp=None, result=None)),
    ("a case's null user and latency", _edit(1, user=None, latency_ms=None, input=None)),
    ("JSON-text arguments", _step(2, 1, arguments='{"who": ["Alice", "Bob"]}')),
    ("arguments that are no JSON", _step(3, 1, arguments="who=Alice")),
    ("timestamps with offsets", _step(4, 0, timestamp="2024-05-20T10:00:00.250+02:00")),
    ("integer latencies", _step(5, 2, latency_ms=0)),
    ("long tool results", _step(0, 1, result={"flights": FLIGHTS})),
    ("a result 150 levels deep", _step(1, 1, result=_deep(150))),
    ("a huge integer in a result", _step(2, 2, result={"seats": -(2**90)})),
    ("empty attributes and arguments", _step(3, 2, attributes={}, arguments={})),
    ("text past ASCII", _step(4, 0, content="Réserve Zoë et 日本 à 10h 🙂")),
]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from checkweigh.cli import main; main()", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="backslashreplace",
        cwd=cwd,
        timeout=60,
    )


def _stored(folder: Path, suite: Path) -> list[tuple[str, str, str, float | None]]:
    db = folder / "r.db"
    proc = _cli("run", str(suite), "--db", f"sqlite:///{db}", "-q", cwd=folder)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    store = Store(f"sqlite:///{db}")
    (run,) = store.list_runs()
    return sorted(
        (r.case_id, repr(r.verdicts), repr(r.results), r.latency_ms)
        for r in store.iter_results(run.id)
    )


@pytest.mark.parametrize("cases", [v[1] for v in VALID], ids=[v[0] for v in VALID])
def test_a_run_stores_what_a_fully_validated_run_stores(
    tmp_path: Path, cases: list[dict[str, Any]]
) -> None:
    streamed = write_suite(tmp_path / "jsonl", cases)
    document = write_suite(tmp_path / "json", cases)
    (tmp_path / "json" / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    text = document.read_text(encoding="utf-8").replace("cases.jsonl", "cases.json")
    document.write_text(text, encoding="utf-8")
    from_jsonl = _stored(tmp_path / "jsonl", streamed)
    assert len(from_jsonl) == len(cases)
    assert from_jsonl == _stored(tmp_path / "json", document)


# (id, cases, the line, a fragment of the message)
BAD = [
    ("a null trace", _edit(1, trace=None), 2, "trace"),
    ("null attributes", _step(2, 0, attributes=None), 3, "trace[0].attributes"),
    ("a step without a kind", _step(3, 0, kind=None), 4, "trace[0].kind"),
    ("a user given as text", _edit(4, user="alice"), 5, "user"),
    ("a latency given as a list", _step(5, 1, latency_ms=[40]), 6, "trace[1].latency_ms"),
    ("a timestamp that is no date", _step(0, 2, timestamp="2024-13-45T10:00:00Z"), 1, "timestamp"),
]


@pytest.mark.parametrize(
    ("cases", "line", "fragment"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_a_bad_line_is_one_error_naming_its_field(
    tmp_path: Path, cases: list[dict[str, Any]], line: int, fragment: str
) -> None:
    suite = write_suite(tmp_path / "s", cases)
    path = tmp_path / "s" / "cases.jsonl"
    with pytest.raises(CaseFileError) as read:
        list(iter_cases(path))
    db = tmp_path / "r.db"
    proc = _cli("run", str(suite), "--db", f"sqlite:///{db}", "-q", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    (message,) = proc.stderr.splitlines()
    assert message == f"error: {read.value}"
    assert message.startswith(f"error: {path}:{line}: "), message
    assert fragment in message, message
    assert not db.exists(), "a bad cases file must not create a run"
