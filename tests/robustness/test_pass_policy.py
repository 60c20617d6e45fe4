"""Mistakes in choosing a case pass policy, each through the real ``checkweigh`` CLI: exit 2,
one line naming the file, line and field (or the flag) and what was expected, no traceback,
nothing stored. The controls at the end are valid spellings that must run."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from checkweigh.store import Store
from support.airline_logs import ALL_CHECKS, write_airline_suite


@dataclass(frozen=True)
class Bad:
    """The airline suite with its thresholds block replaced, and the line it must fail with."""

    id: str
    thresholds: str
    """The suite's text where its thresholds block was (top-level keys included)."""
    line: str
    """The whole error line after ``error: <suite>``: ``:LINE: field: message``."""
    flags: tuple[str, ...] = ()


ROWS = [
    Bad(
        "unknown policy",
        "thresholds:\n  pass_policy: strict\n",
        ":35: thresholds.pass_policy: expected 'threshold' or 'all_checks', got 'strict'",
    ),
    Bad(
        "policy in capitals",
        "thresholds:\n  pass_policy: ALL_CHECKS\n",
        ":35: thresholds.pass_policy: expected 'threshold' or 'all_checks', got 'ALL_CHECKS'",
    ),
    Bad(
        "policy as a list",
        "thresholds:\n  pass_policy: [all_checks]\n",
        ":35: thresholds.pass_policy: expected 'threshold' or 'all_checks', got ['all_checks']",
    ),
    Bad(
        "policy at the top level",
        "pass_policy: all_checks\n",
        ":34: pass_policy: unknown key 'pass_policy' at the top level; it belongs under "
        "'thresholds:' (thresholds: {pass_policy: all_checks})",
    ),
    Bad(
        "dashed key",
        "thresholds:\n  pass-policy: all_checks\n",
        ":35: thresholds.pass-policy: unknown key 'pass-policy'; did you mean 'pass_policy'?",
    ),
    Bad(
        "a threshold all_checks does not read",
        "thresholds:\n  pass_policy: all_checks\n  pass_threshold: 90\n",
        ":36: thresholds.pass_threshold: pass_threshold is not used with pass_policy: "
        "all_checks (a case passes when every applicable check passes); remove one of them",
    ),
    Bad(
        "unknown rubric to pass on",
        "thresholds:\n  pass_policy: all_checks\n  score_rubrics: [tasks]\n",
        ":36: thresholds.score_rubrics[0]: unknown rubric 'tasks'; the suite defines: task",
    ),
]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from checkweigh.cli import main; main()", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )


@pytest.mark.parametrize("bad", ROWS, ids=[b.id for b in ROWS])
def test_a_mistaken_pass_policy_is_one_line_and_stores_nothing(tmp_path: Path, bad: Bad) -> None:
    suite = write_airline_suite(tmp_path / "s", thresholds=bad.thresholds)
    db = tmp_path / "r.db"
    proc = _cli("run", str(suite), "--db", f"sqlite:///{db}", "-q", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [f"error: {suite}{bad.line}"]
    assert not db.exists()


def test_a_pass_threshold_flag_under_all_checks_is_one_line(tmp_path: Path) -> None:
    suite = write_airline_suite(tmp_path / "s")
    db = tmp_path / "r.db"
    proc = _cli(
        "run", str(suite), "--db", f"sqlite:///{db}", "--pass-threshold", "80", cwd=tmp_path
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "error: --pass-threshold: the suite's pass_policy is all_checks, which uses no score "
        "threshold"
    ]
    assert not db.exists()


@pytest.mark.parametrize(
    ("thresholds", "policy", "passed"),
    [
        (ALL_CHECKS, "all_checks", 3),
        ("thresholds:\n  pass_policy: threshold\n  pass_threshold: 85\n", "threshold", 4),
        ("thresholds:\n  pass_policy: all_checks\n  score_rubrics: [task]\n", "all_checks", 3),
        ("", "threshold", 5),  # no thresholds block: the default policy and threshold 75
    ],
)
def test_valid_policies_run_and_are_stored(
    tmp_path: Path, thresholds: str, policy: str, passed: int
) -> None:
    suite = write_airline_suite(tmp_path / "s", thresholds=thresholds)
    db = f"sqlite:///{tmp_path / 'r.db'}"
    proc = _cli("run", str(suite), "--db", db, "-q", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    (info,) = Store(db).list_runs()
    assert info.config["thresholds"]["pass_policy"] == policy
    assert info.summary is not None
    g = info.summary.case_gates
    assert g is not None
    assert (g.pass_policy, g.passed, g.executions) == (policy, passed, 7)
