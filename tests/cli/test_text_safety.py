"""Any text a Python string can hold is stored and shown: lone surrogates from an agent, a
check, a cases file or a stored result never end a run (issue 22, found on real data)."""

from __future__ import annotations

import json
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path

from support import cli_process as cli

AGENT = """\
def run(request):
    return {"trace": [{"kind": "assistant", "content": "booked \\ud800 at " + request["time"]}],
            "final_state": {"time": request["time"], "note": "\\udc80 pair \\ud83d\\ude00"}}


def polite(case):
    return False, "rude reply \\udfff"
"""

SUITE = """\
name: surrogates
cases: cases.jsonl
target: {agent: "agents:run", concurrency: 2, timeout_s: 10}
checks:
  correct_time: {type: equals, path: final_state.time, value: "10:00"}
  polite: {type: python, function: "agents:polite"}
rubrics:
  completion:
    weights: {correct_time: 0.5, polite: 0.5}
"""


def _write(folder: Path) -> None:
    (folder / "agents.py").write_text(AGENT)
    (folder / "suite.yaml").write_text(SUITE)
    # json.dumps writes a lone surrogate as the escape \ud800: valid JSON that orjson, jiter
    # and msgspec refuse
    lines = [
        {"id": f"book-{n}", "input": {"time": "10:00", "ask": f"at ten \ud800 {n}"}}
        for n in range(5)
    ]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in lines))


def test_lone_surrogates_from_agent_check_and_cases_file_are_stored_escaped(
    tmp_path: Path,
) -> None:
    _write(tmp_path)
    outputs = ["--json", "o.json", "--json-cases", "--junit", "o.xml", "--markdown", "o.md"]
    done = cli.run(["run", "suite.yaml", "--db", "sqlite:///r.db", *outputs], tmp_path)
    # every case fails its python check: a gate fails, exit 1 (README's table), not 3
    assert done.code == 1, done.out + done.err
    assert "internal error" not in done.err
    assert "Traceback" not in done.out + done.err
    assert "0 passed, 5 failed, 0 errored of 5" in done.out
    assert "rude reply \\udfff" in done.out  # shown as the visible escape
    with sqlite3.connect(tmp_path / "r.db") as db:
        assert db.execute("SELECT status FROM runs").fetchall() == [("complete",)]
        assert db.execute("SELECT count(*) FROM case_results").fetchone() == (5,)
        assert db.execute("SELECT count(*) FROM case_bodies").fetchone() == (5,)
    exported = json.loads((tmp_path / "o.json").read_text())
    first = exported["results"][0]
    assert first["verdicts"]["polite"]["reason"] == "rude reply \\udfff"
    case = first["evaluated_case"]
    assert case["input"]["ask"] == "at ten \\ud800 0"
    assert case["trace"][0]["content"] == "booked \\ud800 at 10:00"
    # a high and a low surrogate in a row are the character they encode
    assert case["final_state"]["note"] == "\\udc80 pair \U0001f600"
    junit = ET.parse(tmp_path / "o.xml").getroot()
    assert "rude reply \\udfff" in ET.tostring(junit, encoding="unicode")
    assert "5 execution(s) of 5 case(s), 0 errored" in (tmp_path / "o.md").read_text("utf-8")
    shown = cli.run(["show", "latest", "--db", "sqlite:///r.db"], tmp_path)
    assert shown.code == 1, shown.out + shown.err
    assert "rude reply \\udfff" in shown.out


def test_a_cases_file_as_one_json_document_reads_escaped_surrogates(tmp_path: Path) -> None:
    _write(tmp_path)
    cases = [json.loads(line) for line in (tmp_path / "cases.jsonl").read_text().splitlines()]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    (tmp_path / "suite.yaml").write_text(SUITE.replace("cases.jsonl", "cases.json"))
    done = cli.run(["run", "suite.yaml", "--db", "sqlite:///r.db", "--json", "o.json"], tmp_path)
    assert done.code == 1, done.out + done.err
    assert "5 failed, 0 errored of 5" in done.out


def test_json_that_is_bad_for_another_reason_still_names_its_line(tmp_path: Path) -> None:
    _write(tmp_path)
    with (tmp_path / "cases.jsonl").open("a") as fh:
        fh.write('{"id": "book-9", "input": "\\ud800", }\n')  # a trailing comma
    done = cli.run(["run", "suite.yaml", "--db", "sqlite:///r.db"], tmp_path)
    assert done.code == 2, done.out + done.err
    assert done.err.startswith("error: "), done.err
    assert "cases.jsonl:6" in done.err, done.err
    assert "Traceback" not in done.err


def test_an_agent_value_no_json_encoder_takes_is_its_case_error(tmp_path: Path) -> None:
    _write(tmp_path)
    (tmp_path / "agents.py").write_text(
        AGENT.replace('"note": ', '"note": object() if "2" in request["ask"] else ')
    )
    done = cli.run(["run", "suite.yaml", "--db", "sqlite:///r.db", "--json", "o.json"], tmp_path)
    assert done.code == 1, done.out + done.err
    assert "4 failed, 1 errored of 5" in done.out
    assert "agent returned a value that cannot be stored" in done.out
    with sqlite3.connect(tmp_path / "r.db") as db:
        assert db.execute("SELECT status FROM runs").fetchall() == [("complete",)]
        assert db.execute("SELECT count(*) FROM case_results").fetchone() == (5,)


def test_a_run_export_holding_an_escaped_lone_surrogate_can_be_compared(tmp_path: Path) -> None:
    _write(tmp_path)
    db = ["--db", "sqlite:///r.db"]
    for export in ("base.json", "candidate.json"):
        done = cli.run(["run", "suite.yaml", *db, "--json", export], tmp_path)
        assert done.code == 1, done.out + done.err
    base = tmp_path / "base.json"
    text = base.read_text(encoding="utf-8")
    # what the file holds for the escape's text, made the JSON escape of a lone surrogate
    assert "rude reply \\\\udfff" in text
    base.write_text(text.replace("rude reply \\\\udfff", "rude reply \\udfff"), encoding="utf-8")
    compared = cli.run(
        ["compare", "--baseline", "base.json", "--candidate", "candidate.json", "--json", "c.json"],
        tmp_path,
    )
    assert compared.code == 0, compared.out + compared.err
    assert json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
