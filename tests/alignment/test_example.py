"""``checkweigh align`` on the example data of docs/concepts/alignment.md: the scheduling agent
judged by a yes/no check and a graded metric, replayed from the committed judge cache, against
the committed labels with grades. The page's output lines are the command's; the figures are
checked against the confusion counts; the cache is what the stand-in judge answers."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.testing import fake_llm_server
from support.graded_example import CACHE, EXAMPLE, JUDGE, ROOT, respond

PAGE = ROOT / "docs" / "concepts" / "alignment.md"
CASES = 43


def _invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "120", **(env or {})})
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A copy of examples/scheduling (its agent module is forgotten after the test)."""
    return Path(shutil.copytree(EXAMPLE, tmp_path / "scheduling"))


@pytest.fixture
def replayed(example: Path, tmp_path: Path) -> str:
    """The example's judged suite run with the judge replayed from the committed cache."""
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    suite = str(example / "judged.yaml")
    code, out, err = _invoke(
        "run", suite, "--db", db, "--judge", JUDGE, "--replay", "-q",
        env={"CHECKWEIGH_CACHE_DIR": str(example / "judge-cache")},
    )  # fmt: skip
    assert code == 0, out + err
    assert f"0 call(s), {2 * CASES} cache hit(s), 0 error(s)" in out
    return db


def _shown_output() -> list[str]:
    page = PAGE.read_text(encoding="utf-8")
    block = re.search(
        r"<!-- output of: checkweigh align latest judged-labels.csv -->\n```text\n(.*?)```",
        page,
        re.S,
    )
    assert block is not None, "the page shows the report's output"
    return block.group(1).splitlines()


@pytest.mark.usefixtures("fresh_modules")
def test_the_page_shows_what_align_prints(replayed: str, example: Path, tmp_path: Path) -> None:
    report = tmp_path / "alignment.json"
    labels = str(example / "judged-labels.csv")
    code, out, err = _invoke("align", "latest", labels, "--db", replayed, "--json", str(report))
    assert code == 0, out + err
    lines = [line.rstrip() for line in out.splitlines()]
    shown = [line.rstrip() for line in _shown_output()]
    start = lines.index(shown[0])
    assert lines[start : start + len(shown)] == shown
    assert "Disagreements (4)" in out

    document = json.loads(report.read_text())
    tone, delivery = document["checks"]
    assert (tone["check"], tone["kind"], tone["grades"]) == ("appropriate_tone", "binary", None)
    # tone: 20 both yes, s38 judged yes and labelled no, 3 both no
    assert tone["confusion"] == {"true_yes": 20, "false_yes": 1, "false_no": 0, "true_no": 3}
    assert tone["kappa"] == pytest.approx((24 * 23 - (21 * 20 + 3 * 4)) / (576 - 432))
    # response delivery, thresholded at grade 3: s29, s32 and s34 graded 3-4 by the judge, 2 by
    # the labeller
    assert delivery["kind"] == "graded"
    assert delivery["confusion"] == {"true_yes": 17, "false_yes": 3, "false_no": 0, "true_no": 4}
    assert delivery["kappa"] == pytest.approx((24 * 21 - (20 * 17 + 4 * 7)) / (576 - 368))
    grades = delivery["grades"]
    assert grades["threshold"] == 3.0
    assert grades["graded"] == 24
    assert grades["mean_abs_diff"] == pytest.approx(15 / 24)
    assert grades["spearman_low"] < grades["spearman"] < grades["spearman_high"]
    assert [
        (d["case_id"], d["human_grade"], d["judge_grade"]) for d in delivery["disagreements"]
    ] == [
        ("s29-twelve-thirty-pm", 2, 3),
        ("s32-bare-clock-time", 2, 3),
        ("s34-former-member", 2, 4),
    ]

    kinds = {k["kind"]: k for k in document["kinds"]}
    assert kinds["binary"]["checks"] == ["appropriate_tone"]
    assert kinds["graded"]["figures"]["kappa"] == pytest.approx(delivery["kappa"])
    comparison = document["comparison"]
    assert comparison["labels"] == 48
    assert comparison["difference"] == pytest.approx(tone["kappa"] - delivery["kappa"])
    assert comparison["difference_low"] < 0 < comparison["difference_high"]
    assert comparison["better"] is None


@pytest.mark.usefixtures("fresh_modules")
def test_a_grade_that_contradicts_its_label_stops_align(replayed: str, tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "case,check,label,grade\n"
        "s01-simple-booking,reply_quality.response_delivery,yes,4\n"
        "s38-weekend,reply_quality.response_delivery,yes,2.5\n"
    )
    code, out, err = _invoke("align", "latest", str(labels), "--db", replayed)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"error: {labels}:3: label: grade 2.5 is below the pass threshold of "
        "reply_quality.response_delivery (60/100, grade 3), so the label should be no, got yes; "
        "expected a label and grade that agree"
    ]
    labels.write_text("case,check,label,grade\ns01-simple-booking,appropriate_tone,yes,5\n")
    code, _, err = _invoke("align", "latest", str(labels), "--db", replayed)
    assert code == 2
    assert err.splitlines() == [
        f"error: {labels}:2: grade: a grade is for a graded metric (CHECK.METRIC of a graded "
        "check), and 'appropriate_tone' is a binary check in this run; expected no grade"
    ]


@pytest.mark.usefixtures("fresh_modules")
def test_the_committed_cache_holds_the_stand_in_judges_answers(
    example: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "recorded"
    db = f"sqlite:///{tmp_path / 'recorded.db'}"
    with fake_llm_server([], respond=respond) as server:
        code, out, err = _invoke(
            "run", str(example / "judged.yaml"), "--db", db, "--judge", JUDGE, "-q",
            env={
                "OPENAI_BASE_URL": server.base_url,
                "OPENAI_API_KEY": "sk-test",
                "CHECKWEIGH_CACHE_DIR": str(cache),
            },
        )  # fmt: skip
    assert code == 0, out + err
    assert len(server.requests) == 2 * CASES

    def answers(folder: Path) -> dict[str, str]:
        return {p.name: json.loads(p.read_text())["text"] for p in folder.rglob("*.json")}

    assert answers(cache) == answers(CACHE)
    assert len(answers(CACHE)) == 2 * CASES


@pytest.mark.usefixtures("fresh_modules")
def test_labels_import_refuses_grades_it_cannot_keep(replayed: str, example: Path) -> None:
    labels = example / "judged-labels.csv"
    code, out, err = _invoke("labels", "import", str(labels), "--run", "latest", "--db", replayed)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"error: {labels}:3: grade: the store keeps yes/no labels only, so a grade would be "
        f"lost; expected no grade (compare grades with `checkweigh align RUN {labels}`)"
    ]
    code, _, err = _invoke("align", "latest", "--db", replayed)
    assert code == 2  # nothing was stored
    assert "the store holds no labels of run" in err
