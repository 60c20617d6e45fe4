"""Runs of imported OpenTelemetry traces: tokens, cost and latency in the reports, the store
and ``checkweigh compare``."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.importers import ImportContext, get_format

FIXTURES = Path(__file__).parent / "fixtures"
runner = CliRunner()
T0 = 1763900000_000000000

SUITE = """\
name: airline-otel
cases: cases.jsonl
checks:
  answered:
    type: word_count
    path: output
    min: 5
rubrics:
  support:
    weights: {answered: 1.0}
thresholds:
  metrics_pass_threshold: 0
  cases_pass_threshold: 0
"""


def _stretched(line: str, copy: int, factor: float) -> str:
    """The export line with its trace ids and case id made unique to ``copy``, and every
    time stretched by ``factor`` from the first span's start (a slower agent)."""
    request = json.loads(line)
    for rs in request["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                span["traceId"] = f"{copy:02x}" + span["traceId"][2:]
                for key in ("startTimeUnixNano", "endTimeUnixNano"):
                    span[key] = str(T0 + round((int(span[key]) - T0) * factor))
                for attr in span["attributes"]:
                    if attr["key"] == "checkweigh.case.id":
                        attr["value"]["stringValue"] += f"-{copy}"
    return json.dumps(request)


def _suite(folder: Path, factor: float, copies: int = 8) -> Path:
    folder.mkdir(parents=True)
    lines = (FIXTURES / "otel_airline.jsonl").read_text().splitlines()
    spans = folder / "spans.jsonl"
    spans.write_text("".join(_stretched(x, c, factor) + "\n" for c in range(copies) for x in lines))
    with (folder / "cases.jsonl").open("w") as out:
        for case in get_format("otel").cases(spans, ImportContext()):
            out.write(case.model_dump_json() + "\n")
    (folder / "suite.yaml").write_text(SUITE)
    return folder / "suite.yaml"


def _run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def test_a_run_of_imported_traces_reports_tokens_cost_and_latency(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    with (folder / "cases.jsonl").open("w") as out:
        for name in ("otel_airline.jsonl", "otel_events.json"):
            for case in get_format("otel").cases(FIXTURES / name, ImportContext()):
                out.write(case.model_dump_json() + "\n")
    (folder / "suite.yaml").write_text(SUITE)
    db = f"sqlite:///{tmp_path / 'r.db'}"
    md = tmp_path / "r.md"
    js = tmp_path / "r.json"
    code, out = _run("run", str(folder / "suite.yaml"), "--db", db, "--markdown", str(md))
    assert code == 0, out
    # chat spans only: 7,250 + 4,213 + 782 input, 245 + 109 + 56 output; one trace has a cost
    line = "agent: 12,245 input + 410 output tokens, $0.0082 over 3 cases; mean latency 5,133 ms"
    assert line in " ".join(out.split())
    assert "Agent: 12,245 input + 410 output tokens, $0.0082 over 3 cases" in md.read_text()
    # stored with the run: the summary and each result, read back by `report`
    code, out = _run("show", "latest", "--db", db, "--json", str(js))
    assert code == 0, out
    assert line in " ".join(out.split())
    data = json.loads(js.read_text())
    usage = data["summary"]["usage"]
    assert usage == {
        "executions": 3,
        "input_tokens": 12245,
        "output_tokens": 410,
        "mean_input_tokens": 12245 / 3,
        "mean_output_tokens": 410 / 3,
        "cost_usd": 0.0082,
        "cost_executions": 1,
        "timed_executions": 3,
        "mean_latency_ms": (9200 + 4100 + 2100) / 3,
    }
    results = {r["case_id"]: r for r in data["results"]}
    assert results["cancel-ZFA04Y-basic-economy"]["usage"] == {
        "input_tokens": 7250,
        "output_tokens": 245,
        "cost_usd": None,
    }
    assert results["cancel-ZFA04Y-basic-economy"]["latency_ms"] == 9200.0


def test_compare_flags_a_slower_agent_on_imported_traces(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    for name, factor in (("base", 1.0), ("slower", 1.6)):
        code, out = _run("run", str(_suite(tmp_path / name, factor)), "--db", db, "-q")
        assert code == 0, out
    code, out = _run("compare", "previous", "latest", "--db", db)
    text = " ".join(out.split())
    assert code == 1, out
    assert "REGRESSION" in text
    assert "threshold exceeded on mean latency (ms)" in text
    # and the same agent at the same speed is no regression
    code, out = _run("run", str(_suite(tmp_path / "again", 1.6)), "--db", db, "-q")
    assert code == 0, out
    code, out = _run("compare", "previous", "latest", "--db", db)
    assert code == 0, out
    assert "NO REGRESSION" in " ".join(out.split())
