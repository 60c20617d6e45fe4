"""`checkweigh align` end to end: a judge check run through the real openai SDK against the
local scripted server, then compared with human labels written as CSV and as JSONL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.testing import Reply, fake_llm_server
from support.recorded_suite import standard_cases, write_suite

JUDGE_CHECK = """\
  grounded:
    type: judge
    question: Is every statement in the final answer supported by the trace?
    when: {path: final_state.success, equals: true}
rubrics:
"""


def _yes(reason: str) -> Reply:
    return Reply(json.dumps({"verdict": "yes", "reason": reason}))


def _no(reason: str) -> Reply:
    return Reply(json.dumps({"verdict": "no", "reason": reason}))


# One judge slot answers case by case, repeat by repeat, in the order the cases were admitted;
# crash fails its `when` guard, so it is not applicable and never asked. The repair request
# for missing-bob's unusable answer joins the back of the queue: it is answered by REPAIR.
SCRIPT = [
    _yes("every claim is in the trace"),  # ok-1, repeat 0
    _yes("every claim is in the trace"),  # ok-1, repeat 1
    _yes("all supported"),  # ok-2, 0
    _no("claims a room that was never booked"),  # ok-2, 1
    _yes("looks fine"),  # wrong-time, 0
    _yes("looks fine to me"),  # wrong-time, 1
    Reply("not JSON at all"),  # missing-bob, 0: the answer and its repair are unusable
    _no("Bob is missing"),  # missing-bob, 1
    _no("too short to check"),  # terse, 0
    _no("[red]too terse[/red] :m:"),  # terse, 1: rich markup and an emoji code, printed as is
]

REPAIR = Reply("still not JSON")


def _repair(body: dict[str, Any]) -> Reply | None:
    """A repair request carries the unusable answer back as an assistant message."""
    return REPAIR if any(m.get("role") == "assistant" for m in body["messages"]) else None


NOTE = "[b]booked 11:00[/b] while 10:00 was asked"
# (case, check, label, repeat, note)
LABELS: list[tuple[str, str, str, int | None, str]] = [
    ("ok-1", "grounded", "yes", None, ""),  # agrees twice
    ("ok-2", "grounded", "yes", None, ""),  # agrees on repeat 0, not on 1
    ("wrong-time", "grounded", "no", None, NOTE),  # the judge said yes both times
    ("missing-bob", "grounded", "no", None, ""),  # repeat 0 errored; agrees on 1
    ("crash", "grounded", "no", None, ""),  # not applicable twice
    ("terse", "grounded", "no", None, ""),  # agrees on repeat 0 ...
    ("terse", "grounded", "yes", 1, ""),  # ... repeat 1 is labelled apart, and disagrees
    ("ghost", "grounded", "yes", None, ""),  # no such case
    ("ok-1", "grounded", "yes", 7, ""),  # no such repeat
    ("ok-1", "correct_time", "yes", None, ""),
    ("wrong-time", "correct_time", "no", None, ""),
    ("missing-bob", "correct_time", "yes", None, ""),
    ("ok-1", "tone", "yes", None, ""),  # no such check in the run
]
# grounded: 3 both yes, 2 both no, 2 judge-only yes, 2 human-only yes over 9 compared:
# accuracy 5/9; p_e = (5*5 + 4*4) / 81, kappa = (45 - 41) / (81 - 41) = 0.1; P = R = 3/5.
# correct_time: 4 both yes, 2 both no: kappa 1. Pooled: 7, 4, 2, 2 of 15: accuracy 11/15,
# kappa = (15*11 - (9*9 + 6*6)) / (225 - 117) = 48/108 = 0.444; P = R = 7/9.
EXPECTED_TABLE = {
    "correct_time": ["6", "1.000", "0.61-1.00", "1.000", "almost perfect", "1.000", "1.000", "0"],
    "grounded": ["9", "0.556", "0.27-0.81", "0.100", "slight", "0.600", "0.600", "5"],
    "tone": ["0", "—", "—", "—", "—", "—", "—", "2"],
    "all checks": ["15", "0.733", "0.48-0.89", "0.444", "moderate", "0.778", "0.778", "7"],
}
EXPECTED_DISAGREEMENTS = [
    ["grounded", "ok-2", "1", "yes", "no", "claims a room that was never booked", ""],
    ["grounded", "wrong-time", "0", "no", "yes", "looks fine", NOTE],
    ["grounded", "wrong-time", "1", "no", "yes", "looks fine to me", NOTE],
    ["grounded", "terse", "1", "yes", "no", "[red]too terse[/red] :m:", ""],
]


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def judged_run(tmp_path: Path) -> str:
    """A stored run of the recorded suite plus a judge check, each case twice."""
    suite = write_suite(tmp_path / "s", standard_cases(), gate=0.0)
    text = suite.read_text().replace("rubrics:\n", JUDGE_CHECK, 1)
    text = text.replace("clear_explanation: 0.2\n", "clear_explanation: 0.2\n      grounded: 0.2\n")
    suite.write_text(text)
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    with fake_llm_server(SCRIPT, respond=_repair) as server:
        env = {
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "sk-test",
            "CHECKWEIGH_CACHE_DIR": str(tmp_path / "cache"),
            "COLUMNS": "200",
        }
        args = ["run", str(suite), "--db", db, "-q", "--repeat", "2", "--concurrency", "1"]
        args += ["--judge", "openai:gpt-test", "--no-cache", "--judge-concurrency", "1"]
        result = CliRunner().invoke(app, args, env=env)
        assert len(server.requests) == len(SCRIPT) + 1, result.output  # + the repair
    assert result.exit_code in (0, 1), result.output  # 1: the default gate on errored cases
    return db


@pytest.fixture
def plain_run(suite_path: Path, tmp_path: Path) -> str:
    """A stored run without a judge, for the input errors."""
    db = f"sqlite:///{tmp_path / 'plain.db'}"
    code, out, err = _invoke("run", str(suite_path), "--db", db, "-q")
    assert code == 0, out + err
    return db


def _write_csv(path: Path, rows: list[tuple[str, str, str, int | None, str]]) -> Path:
    lines = ["case,check,label,repeat,note"]
    for case, check, label, repeat, note in rows:
        lines.append(f"{case},{check},{label},{'' if repeat is None else repeat},{note}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _write_jsonl(path: Path, rows: list[tuple[str, str, str, int | None, str]]) -> Path:
    spellings = {"yes": [True, "Yes", 1, "pass"], "no": [False, "NO", 0, "fail"]}
    out = []
    for i, (case, check, label, repeat, note) in enumerate(rows):
        record: dict[str, Any] = {"case": case, "check": check}
        record["label"] = spellings[label][i % 4]
        if repeat is not None:
            record["repeat"] = repeat
        if note:
            record["note"] = note
        out.append(json.dumps(record))
    path.write_text("\n".join(out) + "\n")
    return path


def _tables(out: str) -> tuple[dict[str, list[str]], list[list[str]]]:
    """The figures table by check, and the disagreement rows."""
    figures, _, rest = out.partition("Disagreements (")
    rows = {}
    for line in figures.splitlines():
        if line.startswith("│"):
            cells = [c.strip() for c in line.strip("│").split("│")]
            rows[cells[0]] = cells[1:]
    listing = [
        [c.strip() for c in line.strip("│").split("│")]
        for line in rest.splitlines()
        if line.startswith("│")
    ]
    return rows, listing


def test_align_with_csv_labels(judged_run: str, tmp_path: Path) -> None:
    labels = _write_csv(tmp_path / "labels.csv", LABELS)
    report = tmp_path / "out" / "alignment.json"  # its folder is made
    code, out, err = _invoke(
        "align", "latest", str(labels), "--db", judged_run, "--json", str(report)
    )
    assert code == 0, out + err
    assert err == ""
    assert f"against {labels}: 13 label(s), 22 label-execution pair(s)" in out
    figures, disagreements = _tables(out)
    assert figures == EXPECTED_TABLE
    assert disagreements == EXPECTED_DISAGREEMENTS
    assert "Disagreements (4)" in out
    lines = out.splitlines()
    start = lines.index("Not compared")
    assert lines[start + 1 : start + 3] == [
        "  grounded: 1 verdict errored, 2 not applicable, 1 repeat not in the run, "
        "1 case not in the run",
        "  tone: 2 check not in the run",
    ]
    assert "note: kappa" not in out
    assert f"wrote the alignment report to {report}" in out

    document = json.loads(report.read_text())
    assert document["labels"] == str(labels)
    assert document["run"]["suite"] == "bookings"
    assert document["pairs"] == 22
    grounded = document["checks"][1]
    assert grounded["check"] == "grounded"
    assert grounded["confusion"] == {"true_yes": 3, "false_yes": 2, "false_no": 2, "true_no": 2}
    assert grounded["kappa"] == pytest.approx(0.1)
    assert grounded["kappa_band"] == "slight"
    assert grounded["not_compared"] == {
        "judge_errored": 1,
        "not_applicable": 2,
        "repeat_missing": 1,
        "case_missing": 1,
    }
    assert [d["case_id"] for d in grounded["disagreements"]] == [
        "ok-2",
        "wrong-time",
        "wrong-time",
        "terse",
    ]
    assert document["overall"]["kappa"] == pytest.approx(48 / 108)
    assert document["checks"][2]["kappa_note"] == "nothing compared"


def test_jsonl_labels_give_the_same_report(judged_run: str, tmp_path: Path) -> None:
    csv_json, jsonl_json = tmp_path / "a.json", tmp_path / "b.json"
    csv_labels = _write_csv(tmp_path / "labels.csv", LABELS)
    jsonl_labels = _write_jsonl(tmp_path / "labels.jsonl", LABELS)
    for labels, target in ((csv_labels, csv_json), (jsonl_labels, jsonl_json)):
        code, out, err = _invoke(
            "align", "latest", str(labels), "--db", judged_run, "--json", str(target)
        )
        assert code == 0, out + err
    a, b = json.loads(csv_json.read_text()), json.loads(jsonl_json.read_text())
    assert a.pop("labels") != b.pop("labels")
    assert a == b

    code, out, err = _invoke(
        "align", "latest", str(jsonl_labels), "--db", judged_run, "--check", "grounded"
    )
    assert code == 0, out + err
    figures, disagreements = _tables(out)
    assert figures == {
        "grounded": EXPECTED_TABLE["grounded"],
        "all checks": EXPECTED_TABLE["grounded"],
    }
    assert disagreements == EXPECTED_DISAGREEMENTS
    assert "9 label(s), 14 label-execution pair(s)" in out


def test_undefined_and_one_sided_kappas_are_noted(judged_run: str, tmp_path: Path) -> None:
    rows: list[tuple[str, str, str, int | None, str]] = [
        ("ok-1", "grounded", "yes", None, ""),
        ("ok-1", "correct_time", "yes", None, ""),
        ("wrong-time", "correct_time", "yes", None, ""),
    ]
    code, out, err = _invoke(
        "align", "latest", str(_write_csv(tmp_path / "l.csv", rows)), "--db", judged_run
    )
    assert code == 0, out + err
    figures, _ = _tables(out)
    assert figures["grounded"] == ["2", "1.000", "0.34-1.00", "—", "—", "1.000", "1.000", "0"]
    assert figures["correct_time"][:5] == ["4", "0.500", "0.15-0.85", "0.000", "slight"]
    assert "note: kappa of correct_time is 0 by construction: the human said yes every time" in out
    assert (
        "note: kappa of grounded is undefined: the human and the judge both said yes every time"
        in out
    )
    assert "No disagreements." not in out


def test_bad_labels_give_one_line_and_exit_2(plain_run: str, tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text("case,check,label\nok-1,correct_time,yes\nok-2,correct_time,maybe\n")
    code, out, err = _invoke("align", "latest", str(labels), "--db", plain_run)
    assert code == 2
    assert out == ""
    assert err.splitlines() == [
        f"error: {labels}:3: label: expected yes/no, true/false, 1/0 or pass/fail, got 'maybe'"
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "error: RUN: no run 'nope' in sqlite:///"),
        (["latest", "--check", "tnoe"], "error: --check: no labels for check 'tnoe' in "),
        (["latest", "--json", "."], "error: --json: cannot write .: Is a directory"),
    ],
)
def test_input_errors_exit_2(plain_run: str, tmp_path: Path, args: list[str], message: str) -> None:
    labels = _write_csv(tmp_path / "labels.csv", [("ok-1", "correct_time", "yes", None, "")])
    run, *rest = args
    code, _out, err = _invoke("align", run, str(labels), "--db", plain_run, *rest)
    assert code == 2
    assert err.startswith(message), err
    assert len(err.splitlines()) == 1
    assert "Traceback" not in err


def test_missing_labels_file(plain_run: str, tmp_path: Path) -> None:
    code, _out, err = _invoke("align", "latest", str(tmp_path / "gone.jsonl"), "--db", plain_run)
    assert code == 2
    assert (
        err.strip() == f"error: {tmp_path / 'gone.jsonl'}: cannot read: No such file or directory"
    )
