"""Bad and unusual JSONL cases through ``checkweigh run``, now that the count before a run
screens each line with msgspec and validates in full only what the screen cannot vouch for.

Each bad row is a realistic mistake on one line of a recorded cases file: the run must end
with exit 2 and one line naming the file, the line and the field (the same words reading the
file gives), no traceback, and no database. Each valid row is a case the screen leaves to the
full validation: the run must score it with the others.
"""

from __future__ import annotations

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
    """The standard cases with case ``index`` changed (a key set to None is removed)."""
    cases = standard_cases()
    case = {**cases[index], **changes}
    cases[index] = {k: v for k, v in case.items() if v is not None}
    return cases


def _step(index: int, step: int, **changes: Any) -> list[dict[str, Any]]:
    cases = standard_cases()
    trace = list(cases[index]["trace"])
    trace[step] = {**trace[step], **changes}
    cases[index] = {**cases[index], "trace": trace}
    return cases


# (id, cases, the line, a fragment of the message)
BAD = [
    ("a negative latency", _edit(2, latency_ms=-5), 3, "latency_ms"),
    ("a latency past any float", _edit(1, latency_ms=10**400), 2, "latency_ms"),
    ("a step kind that does not exist", _step(3, 0, kind="human"), 4, "trace[0].kind"),
    ("a misspelt step key", _step(0, 1, arguement={"who": "Alice"}), 1, "arguement"),
    ("arguments that are a number", _step(4, 1, arguments=42), 5, "trace[1].arguments"),
    ("a step id that is a number", _step(5, 2, id=7), 6, "trace[2].id"),
    ("an empty case id", _edit(2, id=""), 3, "id"),
    ("final state that is a list", _edit(1, final_state=["booked"]), 2, "final_state"),
    ("a timestamp that is no time", _step(2, 0, timestamp="yesterday"), 3, "timestamp"),
    ("a conversation with no turns", _edit(3, user={"turns": []}), 4, "user"),
    ("two cases with one id", _edit(5, id="ok-1"), 6, "duplicate case id 'ok-1'"),
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


@pytest.mark.parametrize(
    ("cases", "line", "fragment"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_a_bad_line_is_one_error_before_the_run(
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
    assert message.startswith(f"error: {path}:{line}: "), message
    assert fragment in message, message
    # the words a run would have read the line with, not the screen's
    assert message == f"error: {read.value}"
    assert not db.exists(), "a bad cases file must not create a run"


# valid cases the screen does not vouch for: validated in full, and scored
VALID = [
    ("timestamps on the steps", _step(0, 0, timestamp="2024-05-20T10:00:00Z")),
    ("a latency given as text", _edit(1, latency_ms="250.5")),
    ("a step latency as an integer", _step(2, 1, latency_ms=40)),
    ("JSON text arguments", _step(3, 1, arguments='{"who": ["Alice", "Bob"]}')),
    ("a huge integer in the input", _edit(4, input={"seats": 2**80})),
    ("deeply nested ground truth", _edit(5, ground_truth={"a": [[[[[[["x"]]]]]]]})),
]


@pytest.mark.parametrize("cases", [v[1] for v in VALID], ids=[v[0] for v in VALID])
def test_unusual_valid_lines_are_scored(tmp_path: Path, cases: list[dict[str, Any]]) -> None:
    suite = write_suite(tmp_path / "s", cases)
    db = tmp_path / "r.db"
    proc = _cli("run", str(suite), "--db", f"sqlite:///{db}", "-q", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"{len(cases)} execution(s) of {len(cases)} case(s); 0 errored" in proc.stdout
    store = Store(f"sqlite:///{db}")
    (run,) = store.list_runs()
    assert sorted(r.case_id for r in store.iter_results(run.id)) == sorted(c["id"] for c in cases)
