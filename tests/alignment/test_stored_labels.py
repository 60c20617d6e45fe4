"""Labels in the store, end to end: a judge run through the real openai SDK against a local
scripted server, labels imported against it (bound to the evidence each judge saw), `align`
reading them from the store, the labels following the same evidence into a later run, an
export imported into another store, and stale labels reported, never used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checkweigh.store import Store, read_labels, run_labels
from support.judge_suite import cli, judge_suite, says_no_to, with_judge

# the judge says no when the agent's last reply names no time
_ANSWER = says_no_to("Done.", "Booked Alice on Tuesday")


def _run(suite: Path, db: str, tmp: Path) -> tuple[int, str]:
    return with_judge(tmp, _ANSWER, "run", str(suite), "--db", db, "-q", "--judge", "openai:t")


def _import_labels(tmp: Path, db: str) -> None:
    (tmp / "labels.csv").write_text(LABELS)
    code, out = cli("labels", "import", str(tmp / "labels.csv"), "--run", "latest", "--db", db)
    assert code == 0, out


@pytest.fixture
def judged(tmp_path: Path) -> tuple[Path, str, Path]:
    suite = judge_suite(tmp_path / "s")
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    code, out = _run(suite, db, tmp_path)
    assert code in (0, 1), out
    return suite, db, tmp_path


LABELS = """\
case,check,label,note
ok-1,grounded,yes,
ok-2,grounded,yes,
wrong-time,grounded,no,says 10:00 but booked 11:00
terse,grounded,no,
"""


def test_labels_bound_to_the_run_follow_the_evidence_into_a_later_run(
    judged: tuple[Path, str, Path], tmp_path: Path
) -> None:
    suite, db, _ = judged
    first = Store(db).get_run("latest").id
    (tmp_path / "labels.csv").write_text(LABELS)
    labels = str(tmp_path / "labels.csv")
    code, out = cli("labels", "import", labels, "--run", first, "--reviewer", "ann", "--db", db)
    assert code == 0, out
    assert "stored 4 label(s) from 4 line(s)" in out
    stored = read_labels(Store(db))
    assert {label.reviewer for label in stored} == {"ann"}
    assert all(label.evidence and label.criterion for label in stored)
    assert {(label.case_id, label.verdict) for label in stored} == {
        ("ok-1", "yes"),
        ("ok-2", "yes"),
        ("wrong-time", "yes"),
        ("terse", "no"),
    }

    code, out = cli("align", "latest", "--db", db, "--json", str(tmp_path / "a.json"))
    assert code == 0, out
    report = json.loads((tmp_path / "a.json").read_text())
    (grounded,) = report["checks"]
    # the judge said yes to wrong-time, the person no: one disagreement of four
    assert grounded["confusion"] == {"true_yes": 2, "false_yes": 1, "false_no": 0, "true_no": 1}
    assert [d["case_id"] for d in grounded["disagreements"]] == ["wrong-time"]
    assert grounded["disagreements"][0]["note"] == "says 10:00 but booked 11:00"

    # a second run of the same cases: the judge sees the same prompts, the labels apply
    code, out = _run(suite, db, tmp_path)
    second = Store(db).get_run("latest").id
    assert second != first
    labelled = run_labels(Store(db), second, ["grounded"])["grounded"]
    assert labelled.confusion().model_dump() == grounded["confusion"]
    assert (labelled.stale_criterion, labelled.stale_evidence) == (0, 0)

    # compare puts both runs' raw and calibrated rates side by side
    code, out = cli(
        "compare",
        first,
        second,
        "--db",
        db,
        "--json",
        str(tmp_path / "c.json"),
    )
    assert code == 0, out
    assert "judge checks against people's labels" in out
    (change,) = json.loads((tmp_path / "c.json").read_text())["calibrated"]
    assert change["check"] == "grounded"
    assert change["base"] == change["candidate"]
    assert change["base"]["labels"] == 4
    assert change["base"]["raw"] == 5 / 6  # the judge said no to terse only


def test_an_export_imports_into_another_store_with_its_fingerprints(
    judged: tuple[Path, str, Path], tmp_path: Path
) -> None:
    _, db, _ = judged
    _import_labels(tmp_path, db)
    for name in ("out.jsonl", "out.csv"):
        code, out = cli("labels", "export", str(tmp_path / name), "--db", db)
        assert code == 0, out
        assert "wrote 4 label(s)" in out
        other = f"sqlite:///{tmp_path / (name + '.db')}"
        code, out = cli("labels", "import", str(tmp_path / name), "--db", other)
        assert code == 0, out
        key = lambda label: (label.case_id, label.label, label.evidence, label.run_id)  # noqa: E731
        assert sorted(map(key, read_labels(Store(other)))) == sorted(
            map(key, read_labels(Store(db)))
        )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "case,check,label\nok-1,grounded,yes\nnobody,grounded,no\n",
            "labels.csv:3: case: run {run} has no verdict of 'grounded' on case 'nobody'",
        ),
        (
            "case,check,label\nok-1,tone,yes\n",
            "labels.csv:2: check: run {run} has no check 'tone'",
        ),
    ],
)
def test_a_label_naming_nothing_in_the_run_is_refused_and_nothing_is_stored(
    judged: tuple[Path, str, Path], tmp_path: Path, text: str, message: str
) -> None:
    _, db, _ = judged
    run = Store(db).get_run("latest").id
    (tmp_path / "labels.csv").write_text(text)
    code, out = cli(
        "labels",
        "import",
        str(tmp_path / "labels.csv"),
        "--run",
        run,
        "--db",
        db,
    )
    assert code == 2
    assert message.format(run=run) in out
    assert "Traceback" not in out
    assert read_labels(Store(db)) == []


def test_a_label_without_a_run_or_fingerprints_says_what_is_missing(
    judged: tuple[Path, str, Path], tmp_path: Path
) -> None:
    _, db, _ = judged
    (tmp_path / "labels.csv").write_text("case,check,label\nok-1,grounded,yes\n")
    code, out = cli("labels", "import", str(tmp_path / "labels.csv"), "--db", db)
    assert code == 2
    assert "labels.csv:2: run: a label without fingerprints is bound to the run" in out


def test_labels_made_under_another_question_are_stale_never_used(
    judged: tuple[Path, str, Path], tmp_path: Path
) -> None:
    suite, db, _ = judged
    _import_labels(tmp_path, db)
    suite.write_text(suite.read_text().replace("supported by the trace?", "true to the trace?"))
    code, out = _run(suite, db, tmp_path)
    labelled = run_labels(Store(db), Store(db).get_run("latest").id, ["grounded"])["grounded"]
    assert labelled.confusion().n == 0
    assert labelled.stale_criterion == 4
    code, out = cli("align", "latest", "--db", db)
    assert code == 0, out
    assert "4 stale (made on another criterion or other evidence)" in out
