"""Gates that know the judge, end to end through `checkweigh run`: a judge check below its
`trust:` bar leaves the gates resting on it not decided (exit 4, saying how many labels are
short) until labels in the store clear it; a gate on a calibrated rate is decided by its
interval, and not decided while the interval holds its bound."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from checkweigh.store import Store
from support.judge_suite import cli, judge_suite, says_no_to, with_judge

_ANSWER = says_no_to("Done.")


def _suite(folder: Path, trust: str = "", gates: str = "") -> Path:
    suite = judge_suite(folder)
    text = suite.read_text()
    if trust:
        text = text.replace(
            "supported by the trace?\n", f"supported by the trace?\n    trust: {trust}\n"
        )
    text = text.replace("gates:\n", "gates:\n" + gates)
    suite.write_text(text)
    return suite


def _run(suite: Path, tmp: Path, *extra: str) -> tuple[int, str]:
    db = f"sqlite:///{tmp / 'runs.db'}"
    return with_judge(tmp, _ANSWER, "run", str(suite), "--db", db, "--judge", "openai:t", *extra)


def _label(tmp: Path, rows: str) -> None:
    (tmp / "labels.csv").write_text("case,check,label,reviewer\n" + rows)
    db = f"sqlite:///{tmp / 'runs.db'}"
    code, out = cli("labels", "import", str(tmp / "labels.csv"), "--run", "latest", "--db", db)
    assert code == 0, out


AGREEING = """\
ok-1,grounded,yes,ann
ok-2,grounded,yes,ann
wrong-time,grounded,yes,ann
missing-bob,grounded,yes,ann
crash,grounded,yes,ann
terse,grounded,no,ann
"""


def test_a_judge_below_its_trust_bar_leaves_its_gates_not_decided_until_labelled(
    tmp_path: Path,
) -> None:
    suite = _suite(tmp_path / "s", trust="{min_labels: 5}")
    report = tmp_path / "out.json"
    junit = tmp_path / "junit.xml"
    code, out = _run(suite, tmp_path, "--json", str(report), "--junit", str(junit))
    assert code == 4, out
    assert "gates not decided (exit 4)" in out
    assert "grounded's agreement with people is inconclusive: 5 more labels (5 required, 0" in out
    summary = json.loads(report.read_text())["summary"]
    assert summary["gates_status"] == "not_decided"
    assert summary["gates_passed"] is None
    (gate,) = summary["gates"]
    assert (gate["status"], gate["decided"]) == ("not_decided", False)
    assert summary["case_gates_undecided"].startswith("grounded's agreement")
    (calibrated,) = summary["calibration"]
    assert calibrated["trust"]["status"] == "inconclusive"
    gates = ET.parse(junit).getroot().find("testsuite[@name='bookings gates']")
    assert gates is not None
    assert (gates.get("failures"), gates.get("skipped")) == ("0", "3")
    # `show` reads the stored run the same way
    code, out = cli("show", "latest", "--db", f"sqlite:///{tmp_path / 'runs.db'}")
    assert code == 4, out

    _label(tmp_path, AGREEING)
    code, out = _run(suite, tmp_path, "--json", str(report))
    assert code == 0, out
    summary = json.loads(report.read_text())["summary"]
    assert summary["gates_status"] == "passed"
    (calibrated,) = summary["calibration"]
    assert calibrated["trust"]["status"] == "trusted"
    assert calibrated["figures"]["labels"] == 6
    # correct_time is required in the rubric: its TCR is not linear in the pass rates
    (rubric,) = summary["rubrics"]
    assert rubric["calibrated_tcr"] is None
    assert "a required check zeroes a case's score" in rubric["calibrated_tcr_note"]
    assert calibrated["figures"]["confusion"] == {
        "true_yes": 5,
        "false_yes": 0,
        "false_no": 0,
        "true_no": 1,
    }


@pytest.mark.parametrize(
    ("gate", "labels", "code", "status", "needs"),
    [
        ("{check: grounded, metric: calibrated_pass_rate, min: 0.05}", AGREEING, 0, "passed", ""),
        ("{check: grounded, metric: calibrated_pass_rate, max: 0.1}", AGREEING, 1, "failed", ""),
        (
            "{check: grounded, metric: calibrated_pass_rate, min: 0.8}",
            AGREEING,
            4,
            "not_decided",
            "labelling the rest of this run (6 of 6 labelled) would not settle it",
        ),
    ],
)
def test_a_calibrated_gate_is_decided_by_its_interval(
    tmp_path: Path, gate: str, labels: str, code: int, status: str, needs: str
) -> None:
    suite = _suite(tmp_path / "s", gates=f"  - {gate}\n")
    _run(suite, tmp_path)
    _label(tmp_path, labels)
    report = tmp_path / "out.json"
    markdown = tmp_path / "out.md"
    got, out = _run(suite, tmp_path, "--json", str(report), "--markdown", str(markdown))
    assert got == code, out
    summary = json.loads(report.read_text())["summary"]
    calibrated = next(g for g in summary["gates"] if "calibrated_pass_rate" in g["gate"])
    assert calibrated["status"] == status
    (figures,) = summary["calibration"]
    low, high = figures["figures"]["calibrated_low"], figures["figures"]["calibrated_high"]
    assert (calibrated["low"], calibrated["high"]) == (low, high)
    assert low < 0.8 < high  # six labels: the interval is wide
    if status == "not_decided":
        assert needs in calibrated["needs"]
        assert "gates not decided (exit 4)" in out
        assert "Gates not decided** (exit 4)" in markdown.read_text()
    assert "judge checks against people's labels" in out
    labelled = len(labels.splitlines())
    assert f"| grounded | {labelled} of 6 |" in markdown.read_text()


def test_a_calibrated_gate_on_a_check_that_asks_no_judge_is_refused(tmp_path: Path) -> None:
    suite = _suite(
        tmp_path / "s", gates="  - {check: correct_time, metric: calibrated_pass_rate, min: 0.5}\n"
    )
    code, out = _run(suite, tmp_path)
    assert code == 2
    assert "gates[0].check: 'correct_time' is not a judge check of the suite" in out
    assert "(judge checks: grounded)" in out
    assert Store(f"sqlite:///{tmp_path / 'runs.db'}").list_runs() == []
