"""A check no rubric weighs is not run, and the run says so instead of passing over it."""

from __future__ import annotations

from pathlib import Path

from checkweigh.store import Store
from checkweigh.suites import load_suite
from support import cli_process as cli
from support.engine import run_into
from support.worker_suite import write_worker_suite

EXTRA = """\
from pathlib import Path


def noted(case):
    with open(Path(__file__).with_name("called"), "a") as out:
        out.write(case.id + "\\n")
    return True
"""


def _suite(folder: Path, *extra: str) -> Path:
    suite = write_worker_suite(folder, 12)
    (folder / "extra.py").write_text(EXTRA)
    lines = "".join(f"  {name}: {{type: python, function: 'extra:noted'}}\n" for name in extra)
    suite.write_text(
        suite.read_text().replace("  polite: {type: python", lines + "  polite: {type: python")
    )
    return suite


def test_a_check_in_no_rubric_is_not_run_and_the_summary_says_so(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "tone")
    store = Store("sqlite://")
    outcome = run_into(load_suite(suite), store)
    assert not (tmp_path / "called").exists()
    results = list(store.iter_results(outcome.run_id))
    assert len(results) == 12
    assert all("tone" not in r.verdicts for r in results)
    assert (
        "check tone was not run: no rubric weighs it (give it a weight in a rubric to run it)"
        in outcome.summary.notes
    )


def test_the_command_notes_every_check_it_did_not_run(tmp_path: Path) -> None:
    _suite(tmp_path, "tone", "brevity")
    done = cli.run(["run", "suite.yaml", "--db", "sqlite:///r.db"], tmp_path)
    assert done.code == 0, done.err
    assert "note: checks tone, brevity were not run: no rubric weighs them" in done.out
    assert not (tmp_path / "called").exists()


def test_a_suite_whose_checks_are_all_weighed_has_no_such_note(tmp_path: Path) -> None:
    outcome = run_into(load_suite(_suite(tmp_path)), Store("sqlite://"))
    assert not [n for n in outcome.summary.notes if "not run" in n]
