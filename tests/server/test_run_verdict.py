"""The runs list, the run page and ``checkweigh show`` give a run the same verdict: passed,
failed, or not decided (running, or ended early), with a ``gates:`` block or without one."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from checkweigh.cli import app as cli
from checkweigh.server import create_app
from checkweigh.store import RunStatus, Store, store_run
from server.test_pages import page
from support.recorded_suite import standard_cases, write_suite

# the standard cases: 2 of 6 pass, mean score 61.7, the completion TCR 0.617
PASSING = {"metrics_pass_threshold": 50.0, "cases_pass_threshold": 30.0}
FAILING = {"metrics_pass_threshold": 50.0, "cases_pass_threshold": 90.0}


def _run(folder: Path, db: str, thresholds: dict[str, float], gate: float | None) -> str:
    """One run of the recorded suite, with a gates block of ``gate`` or none at all."""
    suite = write_suite(folder, standard_cases(), gate=gate or 0.5, thresholds=thresholds)
    if gate is None:
        text = suite.read_text()
        block = "gates:\n  - {rubric: completion, metric: tcr, min: 0.5}\n"
        assert block in text
        suite.write_text(text.replace(block, ""))
    done = CliRunner().invoke(cli, ["run", str(suite), "--db", db, "-q"])
    assert done.exit_code in (0, 1), done.output
    with Store(db) as store:
        return store.get_run("latest").id


def test_every_page_gives_a_run_the_verdict_show_gives(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    made = {
        "no gates block, thresholds met": (_run(tmp_path / "a", db, PASSING, None), "passed"),
        "no gates block, a threshold missed": (_run(tmp_path / "b", db, FAILING, None), "failed"),
        "gates met": (_run(tmp_path / "c", db, PASSING, 0.5), "passed"),
        "a gate missed": (_run(tmp_path / "d", db, PASSING, 0.9), "failed"),
    }
    with Store(db) as store:
        done = store.get_run(made["gates met"][0])
        results = list(store.iter_results(done.id))
        # interrupted after every case had passed its gates: still not a verdict
        cut = done.model_copy(update={"id": "interrupted-1", "status": RunStatus.INCOMPLETE})
        store_run(store, cut, results)
        running = store.create_run(done.suite, done.suite_path, done.config, 1)
    made["interrupted"] = ("interrupted-1", "not decided")
    made["running"] = (running, "not decided")

    with Store(db) as store, TestClient(create_app(store)) as client:
        listed = {
            row.get("data-run-id"): row.one("td", "gates")
            for row in page(client, "/runs").by_id("runs").all("tr")
            if row.get("data-run-id")
        }
        for what, (run_id, expected) in made.items():
            cell = listed[run_id]
            assert cell.get("data-verdict") == expected, what
            assert expected in cell.text, what
            shown = page(client, f"/runs/{run_id}")
            if run_id != running:  # a running run has no gates yet
                word = shown.by_id("gates").one("span", "verdict-word")
                assert (word.get("data-verdict"), word.text) == (expected, expected), what
        assert "interrupted" in listed["interrupted-1"].get("title")
        assert "still running" in listed[running].get("title")

    # what `checkweigh show` exits with says the same: 0 passed, 1 failed or ended early,
    # 2 still running
    codes = {"passed": {0}, "failed": {1}, "not decided": {1, 2}}
    for what, (run_id, expected) in made.items():
        shown = CliRunner().invoke(cli, ["show", run_id, "--db", db])
        assert shown.exit_code in codes[expected], (what, shown.output)
    # and `checkweigh runs` lists the same verdict in its gates column
    listing = CliRunner().invoke(cli, ["runs", "--db", db, "--limit", "20"], env={"COLUMNS": "300"})
    assert listing.exit_code == 0, listing.output
    words = {"passed": "pass", "failed": "FAIL", "not decided": "not decided"}
    for what, (run_id, expected) in made.items():
        line = next(x for x in listing.output.splitlines() if run_id in x)
        assert line.rstrip(" │").endswith(words[expected]), (what, line)
