"""`checkweigh compare --baseline results.json`: CI compares its run with the export kept from
the main branch, without the database that run was stored in, and posts the Markdown."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import cmarkgfm
import pytest
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from checkweigh.cli import app
from support.recorded_suite import make_case, write_suite

runner = CliRunner()
SERVER = "https://checkweigh.example.com/team"
HOSTILE = "](javascript:alert(1))<script>alert(2)</script>"


def _run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _good(case_id: str) -> dict[str, Any]:
    return make_case(case_id, participants=["Alice", "Bob"], time="10:00")


def _store_and_export(
    tmp_path: Path, db: str, name: str, cases: list[dict[str, Any]], suite_name: str = "bookings"
) -> tuple[str, Path]:
    """Run ``cases`` through the engine into ``db`` and export the run; its id and export."""
    suite = write_suite(tmp_path / name, cases, thresholds={"cases_pass_threshold": 0.0})
    if suite_name != "bookings":
        suite.write_text(suite.read_text().replace("name: bookings", f"name: {suite_name}"))
    export = tmp_path / f"{name}.json"
    code, out, err = _run("run", str(suite), "--db", db, "-q", "--json", str(export))
    assert code in (0, 1), out + err
    return json.loads(export.read_text())["run"]["id"], export


def _regressed(n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A base of ``n`` good cases and a candidate where every third case books 11:00."""
    base = [_good(f"case-{i:02d}") for i in range(n)]
    cand = [
        make_case(f"case-{i:02d}", participants=["Alice", "Bob"], time="11:00")
        if i % 3 == 0
        else _good(f"case-{i:02d}")
        for i in range(n)
    ]
    return base, cand


def test_stored_and_exported_runs_give_the_same_comparison(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    base_cases, cand_cases = _regressed(30)
    base_id, base_json = _store_and_export(tmp_path, db, "base", base_cases)
    cand_id, cand_json = _store_and_export(tmp_path, db, "cand", cand_cases)
    combos = {
        "store/store": [base_id, cand_id, "--db", db],
        "store/export": [base_id, "--candidate", str(cand_json), "--db", db],
        "export/store": ["--baseline", str(base_json), cand_id, "--db", db],
        "export/export": ["--baseline", str(base_json), "--candidate", str(cand_json)],
    }
    # the two exports need no database at all: none is opened, none is created
    never = tmp_path / "nowhere" / "never.db"
    monkeypatch.setenv("CHECKWEIGH_DB", f"sqlite:///{never}")
    outputs: dict[str, tuple[str, str, str]] = {}
    for name, args in combos.items():
        out_json = tmp_path / "cmp" / f"{name.replace('/', '-')}.json"
        out_md = tmp_path / "cmp" / f"{name.replace('/', '-')}.md"
        code, out, err = _run("compare", *args, "--json", str(out_json), "--markdown", str(out_md))
        assert code == 1, (name, out, err)
        assert "REGRESSION" in out
        console = "\n".join(line for line in out.splitlines() if not line.startswith("wrote "))
        outputs[name] = (out_json.read_text(), out_md.read_text(), console)
    assert not never.parent.exists()
    reference = outputs["store/store"]
    data = json.loads(reference[0])
    assert (data["base"], data["candidate"]) == (base_id, cand_id)
    assert data["verdict"] == "regression"
    assert data["paired"] == 30
    assert [c["case_id"] for c in data["regressions"]] == [f"case-{i:02d}" for i in range(0, 30, 3)]
    assert data["suite"][0]["p_value"] == pytest.approx(2 / 2**10)
    assert {c["check"]: c["worse"] for c in data["checks"]}["correct_time"] == 10
    for name, (cmp_json, md, console) in outputs.items():
        assert cmp_json == reference[0], name  # the same bytes
        assert md == reference[1], name
        assert console == reference[2], name


def test_the_baseline_is_compared_with_the_latest_run_of_its_suite(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    base_cases, cand_cases = _regressed(12)
    _, base_json = _store_and_export(tmp_path, db, "base", base_cases)
    cand_id, _ = _store_and_export(tmp_path, db, "cand", cand_cases)
    # the newest run of the database belongs to another suite: it is not the candidate
    other_id, _ = _store_and_export(tmp_path, db, "other", base_cases, suite_name="billing")
    out_json = tmp_path / "c.json"
    code, out, err = _run(
        "compare", "--baseline", str(base_json), "--db", db, "--json", str(out_json)
    )
    assert code == 1, out + err
    # 4 of 12 flipped (McNemar p = 0.125) but the mean score fell by 10 points (p < 0.05)
    assert "threshold exceeded on case pass rate (%), average case score (p < 0.05)" in out
    data = json.loads(out_json.read_text())
    assert data["candidate"] == cand_id != other_id
    assert len(data["regressions"]) == 4
    # given explicitly, the candidate must be of the baseline's suite
    code, out, err = _run("compare", "--baseline", str(base_json), other_id, "--db", db)
    assert code == 2
    assert err.strip() == (
        f"error: {base_json}: run.suite: a run of suite 'bookings'; expected a run of "
        f"'billing', the suite of run {other_id} it is compared with"
    )


def test_an_improvement_against_the_baseline_exits_0(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    cand_cases, base_cases = _regressed(9)
    _, base_json = _store_and_export(tmp_path, db, "base", base_cases)
    _store_and_export(tmp_path, db, "cand", cand_cases)
    out_md = tmp_path / "pr.md"
    code, out, err = _run(
        "compare", "--baseline", str(base_json), "--db", db, "--markdown", str(out_md)
    )
    assert code == 0, out + err
    assert "NO REGRESSION" in out
    md = out_md.read_text()
    assert md.startswith("## checkweigh compare: ✅ no regression\n")
    assert "None: no threshold exceeded, no case flipped or lost score." in md
    assert "**Improvements** (3)" in md


def _cells(md: MarkdownIt, text: str) -> list[list[str]]:
    rows: list[list[str]] = []
    tokens = md.parse(text)
    for i, tok in enumerate(tokens):
        if tok.type == "tr_open":
            rows.append([])
        elif tok.type == "inline" and tokens[i - 1].type in ("th_open", "td_open"):
            rows[-1].append(tok.content)
    return rows


def _pr_runs(tmp_path: Path, db: str) -> tuple[str, Path, str, Path]:
    """A base of 12 passing cases and a candidate where three fail by different amounts, one
    of them under a hostile case id, and one other loses points without failing."""
    ids = ["plain-1", HOSTILE, "spaces and/slash?#", *(f"ok-{i}" for i in range(9))]
    base = [_good(i) for i in ids]
    cand = [
        make_case(ids[0], participants=["Alice", "Bob"], time="11:00"),  # required check fails
        make_case(  # crashed: nothing booked
            ids[1], participants=[], time="", reply="", order=("book_meeting",), success=False
        ),
        make_case(ids[2], participants=["Alice"], time="11:00"),  # worse still than plain-1
        make_case(ids[3], participants=["Alice", "Bob"], time="10:00", reply="Done."),
        *base[4:],
    ]
    base_id, base_json = _store_and_export(tmp_path, db, "base", base)
    cand_id, cand_json = _store_and_export(tmp_path, db, "cand", cand)
    return base_id, base_json, cand_id, cand_json


def test_the_pull_request_comment_puts_regressions_first_worst_first_with_links(
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    base_id, base_json, cand_id, _ = _pr_runs(tmp_path, db)
    out_md = tmp_path / "pr.md"
    code, out, err = _run(
        "compare",
        "--baseline",
        str(base_json),
        "--db",
        db,
        "--markdown",
        str(out_md),
        "--server-url",
        SERVER + "/",
        "--strict",
    )
    assert code == 1, out + err
    text = out_md.read_text()
    assert text.startswith("## checkweigh compare: ❌ regression\n")
    sections = [line for line in text.splitlines() if line.startswith("### ")]
    assert sections == [
        "### Regressions",
        "### Score changes",
        "### Checks whose pass rate changed",
    ]
    regressions = text.split("### Score changes")[0]
    assert "**Thresholds exceeded**" in regressions
    md = MarkdownIt("commonmark").enable("table")
    rows = _cells(md, regressions)
    exceeded = rows[1]
    assert exceeded[0] == "case pass rate (%)"
    assert exceeded[1:5] == ["100.0", "75.0", "-25.0", "-0"]
    assert exceeded[6] == "not significant"  # 3 flips: McNemar p = 0.25
    flips = [r for r in rows if len(r) == 4 and "#0" in r[0]]
    # worst first: the crash lost everything, then the wrong time and missing participant
    # (score 40), then the wrong time alone (70); the terse reply lost points without failing
    assert [r[1].split(" ")[0] for r in flips] == ["passed"] * 4
    assert [r[2] for r in flips] == ["failed 0.0", "failed 30.0", "failed 70.0", "passed 80.0"]
    assert "flipped from pass to fail, worst first** (3)" in regressions
    assert "**Cases whose score dropped, worst first** (1)" in regressions
    html = md.render(text)
    gfm = cmarkgfm.github_flavored_markdown_to_html(text)
    for rendered in (html, gfm):
        assert "<script" not in rendered
        hrefs = re.findall(r'href="([^"]*)"', rendered)
        # the candidate's cases link to their pages; the baseline is an export: no page
        assert len(hrefs) == 4
        for href in hrefs:
            assert href.startswith(f"{SERVER}/runs/{cand_id}/cases/"), href
        linked = {unquote(h.rsplit("/", 1)[1]) for h in hrefs}
        assert linked == {"plain-1", HOSTILE, "spaces and/slash?#", "ok-0"}
        assert base_id not in rendered.split("<table>", 1)[1]  # only in the headline
    # the hostile id is the text of its link, nothing more
    assert "](javascript:alert(1))&lt;script&gt;alert(2)&lt;/script&gt;</a> #0" in html


def test_a_stored_baseline_links_both_runs_case_pages(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    base_id, _, cand_id, _ = _pr_runs(tmp_path, db)
    out_md = tmp_path / "pr.md"
    code, out, err = _run(
        "compare", base_id, cand_id, "--db", db, "--markdown", str(out_md), "--server-url", SERVER
    )
    assert code == 0, out + err
    html = cmarkgfm.github_flavored_markdown_to_html(out_md.read_text())
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert len(hrefs) == 8
    assert sum(h.startswith(f"{SERVER}/runs/{base_id}/cases/") for h in hrefs) == 4
    assert f"{SERVER}/runs/{cand_id}/cases/spaces%20and%2Fslash%3F%23" in hrefs


def test_an_export_from_an_older_version_compares_the_same(tmp_path: Path) -> None:
    """Exports written before a run recorded ``abandoned`` and each result its case verdict
    (``case``), and without the optional fields, are read as they are."""
    db = f"sqlite:///{tmp_path / 'r.db'}"
    base_cases, cand_cases = _regressed(9)
    base_id, base_json = _store_and_export(tmp_path, db, "base", base_cases)
    cand_id, _ = _store_and_export(tmp_path, db, "cand", cand_cases)
    data = json.loads(base_json.read_text())
    for key in ("abandoned", "executions", "finished_at"):
        del data["run"][key]
    for record in data["results"]:
        for key in ("case", "position", "usage", "agent_error"):
            record.pop(key, None)
    older = tmp_path / "older.json"
    older.write_text(json.dumps(data))
    outputs = []
    for base in (["--baseline", str(older)], [base_id]):
        out_json = tmp_path / "c.json"
        code, out, err = _run("compare", *base, cand_id, "--db", db, "--json", str(out_json))
        assert code == 0, out + err  # 3 of 9 flipped: not significant
        outputs.append(out_json.read_text())
    assert outputs[0] == outputs[1]
