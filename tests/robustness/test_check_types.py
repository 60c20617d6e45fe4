"""A catalogue of mistakes in a suite's own check classes (``type: module.Class``), each run
through the real ``checkweigh`` CLI: exit 2, one line naming the file, line, field and what was
expected, no traceback, nothing stored. The controls run a valid class, one that crashes while
judging (an errored verdict, never the end of the run), and a judge check without a judge."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from checkweigh.store import Store
from support.recorded_suite import standard_cases, write_suite

CHECKS_MODULE = '''\
"""The bookings team's own checks."""

from typing import Literal

from pydantic import BaseModel, field_validator

from checkweigh.checks import BuiltinCheck
from checkweigh.core import failed, passed


class MaxParticipants(BuiltinCheck):
    """No booking with more than ``limit`` people."""

    limit: int

    def evaluate(self, case):
        people = (case.final_state.get("booking") or {}).get("participants") or []
        if len(people) > self.limit:
            return failed(f"{len(people)} participants > {self.limit}")
        return passed(f"{len(people)} participants")


class NoEvaluate(BaseModel):
    limit: int = 2


class Strict(MaxParticipants):
    @field_validator("limit")
    @classmethod
    def _small(cls, value):
        if value > 50:
            raise ValueError("a meeting room holds at most 50 people")
        return value


class Exploding(MaxParticipants):
    def evaluate(self, case):
        raise KeyError("calendar")


class BrokenNames(MaxParticipants):
    def verdict_names(self):
        raise LookupError("no metric table")


class DottedNames(MaxParticipants):
    def verdict_names(self):
        return ("rooms.small",)


class AsksJudge(BuiltinCheck):
    """A judge check of the team's own."""

    type: Literal["asks_judge"] = "asks_judge"

    async def evaluate(self, case, judge):
        return passed()


def helper(case):
    return True
'''

CHECK = "  too_many:\n    type: {type}\n    limit: 2\n"


@dataclass(frozen=True)
class Bad:
    """The recorded suite with one own-class check added, and what the error must say."""

    id: str
    check: str
    """The check's YAML under ``checks:`` (two-space indented)."""
    line: int
    message: str
    files: tuple[tuple[str, str], ...] = ()
    """Extra modules written beside the suite."""


BAD = [
    Bad(
        "module-missing",
        CHECK.format(type="booking_policies.MaxParticipants"),
        22,
        "checks.too_many.type: cannot import module 'booking_policies'",
    ),
    Bad(
        "class-missing",
        CHECK.format(type="team_checks.MaxAttendees"),
        22,
        "checks.too_many.type: module 'team_checks' has no attribute 'MaxAttendees'",
    ),
    Bad(
        "a-function-not-a-class",
        CHECK.format(type="team_checks.helper"),
        22,
        "checks.too_many.type: 'team_checks.helper' is not a check class "
        "(a pydantic model with an evaluate method)",
    ),
    Bad(
        "a-model-without-evaluate",
        CHECK.format(type="team_checks.NoEvaluate"),
        22,
        "checks.too_many.type: 'team_checks.NoEvaluate' is not a check class",
    ),
    Bad(
        "misspelled-field",
        "  too_many:\n    type: team_checks.MaxParticipants\n    limt: 2\n",
        23,
        "checks.too_many.limt: unknown key 'limt'; did you mean 'limit'?",
    ),
    Bad(
        "wrong-value",
        "  too_many:\n    type: team_checks.MaxParticipants\n    limit: two\n",
        23,
        "checks.too_many.limit: Input should be a valid integer",
    ),
    Bad(
        "missing-field",
        "  too_many:\n    type: team_checks.MaxParticipants\n",
        21,
        "checks.too_many.limit: required field is missing",
    ),
    Bad(
        "own-validator-refuses",
        "  too_many:\n    type: team_checks.Strict\n    limit: 80\n",
        23,
        "checks.too_many.limit: a meeting room holds at most 50 people",
    ),
    Bad(
        "verdict-names-raise",
        CHECK.format(type="team_checks.BrokenNames"),
        22,
        "checks.too_many.type: verdict_names() raised LookupError: no metric table",
    ),
    Bad(
        "verdict-names-with-a-dot",
        CHECK.format(type="team_checks.DottedNames"),
        22,
        "checks.too_many.type: verdict_names() must give names without dots, got 'rooms.small'",
    ),
    Bad(
        "module-exits-on-import",
        CHECK.format(type="exits.MaxParticipants"),
        22,
        "checks.too_many.type: importing module 'exits' called sys.exit(3)",
        (("exits.py", "import sys\nsys.exit(3)\n"),),
    ),
    Bad(
        "module-syntax-error",
        CHECK.format(type="broken.MaxParticipants"),
        22,
        "checks.too_many.type: syntax error in ",
        (("broken.py", "class MaxParticipants(\n"),),
    ),
]


def _suite(folder: Path, check: str, files: tuple[tuple[str, str], ...] = ()) -> Path:
    suite = write_suite(folder, standard_cases())
    text = suite.read_text()
    # the own check goes last under checks:, so its lines are fixed (21 onwards)
    text = text.replace("rubrics:\n", check + "rubrics:\n", 1)
    text = text.replace("clear_explanation: 0.2\n", "clear_explanation: 0.2\n      too_many: 0.1\n")
    suite.write_text(text)
    (folder / "team_checks.py").write_text(CHECKS_MODULE)
    for name, body in files:
        (folder / name).write_text(body)
    return suite


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from checkweigh.cli import main; main()", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )


@pytest.mark.parametrize("bad", BAD, ids=[b.id for b in BAD])
def test_a_bad_own_check_class_is_one_line(tmp_path: Path, bad: Bad) -> None:
    folder = tmp_path / "s"
    suite = _suite(folder, bad.check, bad.files)
    db = tmp_path / "r.db"
    proc = _cli("run", str(suite), "--db", f"sqlite:///{db}", "-q", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"error: {suite}:{bad.line}: {bad.message}"), line
    assert not db.exists()


def test_an_own_class_runs_and_its_crash_is_an_errored_verdict(tmp_path: Path) -> None:
    cases = standard_cases()
    cases[0]["final_state"]["booking"]["participants"] = ["Alice", "Bob", "Carol"]
    folder = tmp_path / "s"
    check = (
        CHECK.format(type="team_checks.MaxParticipants")
        + "  calendar:\n    type: team_checks.Exploding\n    limit: 9\n"
    )
    suite = _suite(folder, check)
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    text = suite.read_text().replace("too_many: 0.1\n", "too_many: 0.1\n      calendar: 0.1\n")
    suite.write_text(text)
    db = tmp_path / "r.db"
    out = tmp_path / "report.json"
    proc = _cli("run", str(suite), "--db", f"sqlite:///{db}", "--json", str(out), cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    with Store(f"sqlite:///{db}") as store:
        (run,) = store.list_runs()
        results = {r.case_id: r for r in store.iter_results(run.id)}
    assert results["ok-1"].verdicts["too_many"].reason == "3 participants > 2"
    assert results["ok-2"].verdicts["too_many"].reason == "2 participants"
    calendar = results["ok-2"].verdicts["calendar"]
    assert calendar.state.value == "errored"
    assert "KeyError" in (calendar.error or "")
    assert len(results) == len(cases)  # the crash ended no case and not the run


def test_an_own_judge_check_without_a_judge_is_skipped_and_noted(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    suite = _suite(folder, "  too_many:\n    type: team_checks.AsksJudge\n")
    db = tmp_path / "r.db"
    proc = _cli("run", str(suite), "--db", f"sqlite:///{db}", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    flat = " ".join(proc.stdout.split())
    assert "judge checks too_many were skipped" in flat
