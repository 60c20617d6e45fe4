"""The scheduling example's multi-turn suite: a user who corrects the date or time, a user who
accepts an offered alternative, each scored through the real ``checkweigh run``."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.core import Case
from checkweigh.store import Store

SUITE = Path(__file__).resolve().parents[2] / "examples" / "scheduling" / "conversations.yaml"


def test_the_conversation_suite_scores_every_turn(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    result = CliRunner().invoke(app, ["run", str(SUITE), "--db", db, "-q"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    store = Store(db)
    results = list(store.iter_results(store.get_run("latest").id, with_cases=True))
    failed = {
        r.case_id: sorted(n for n, v in r.verdicts.items() if v.state.value == "failed")
        for r in results
    }
    # the agent's deliberate mistake: a correction books again without cancelling
    assert failed == {
        "m01-corrects-the-date": ["no_double_booking"],
        "m02-corrects-the-time-then-thanks": ["no_double_booking"],
        "m03-accepts-a-named-alternative": [],
        "m04-accepts-the-first-alternative": [],
        "m05-long-conversation-cut-by-max-turns": ["no_double_booking"],
    }
    cases = {r.case_id: Case.model_validate_json(r.body or b"{}") for r in results}
    accepted = cases["m03-accepts-a-named-alternative"]
    assert [t.user for t in accepted.turns] == [
        "Book 30 minutes with Alice and Bob on 2025-03-05 at 10:00",
        "12:00 works for us",
        "Thank you!",
    ]
    assert accepted.turns[0].output.endswith("Which one should I book?")
    assert accepted.turns[1].output == (
        "Booked: 30-minute meeting with Alice and Bob on Wednesday 2025-03-05 at 12:00."
    )
    assert accepted.final_state["conversation"] == {"stop_reason": "agent_ended", "turns": 3}
    cut = cases["m05-long-conversation-cut-by-max-turns"]
    assert cut.final_state["conversation"] == {"stop_reason": "max_turns", "turns": 2}
    assert [t.user for t in cut.turns] == [
        "Book 30 minutes with Erin on Friday at 09:00",
        "Actually make it 10:00",
    ]
    # each turn's wall time is on the trace
    assert all(t.latency_ms is not None for c in cases.values() for t in c.turns)
