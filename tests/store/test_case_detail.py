"""What the store keeps beside a verdict: the evaluated case (the line as read for JSONL, once
for all its repeats), the judge calls behind each verdict, and the verdicts that did not pass
queryable by run, check and state."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import func, select

from checkweigh.core import Case
from checkweigh.judges import CachedJudge, JudgeCache, ScriptedJudge
from checkweigh.store import Store, result_detail
from checkweigh.store._tables import CaseBodyRow, VerdictRow
from checkweigh.suites import load_suite
from support.engine import run_into

CASES = [
    {
        "id": "refund-<b>1</b>",
        "input": "I want a refund for order 1182",
        "trace": [
            {"kind": "user", "content": "I want a refund for order 1182"},
            {
                "kind": "tool_call",
                "name": "lookup_order",
                "arguments": {"order_id": "1182"},
                "result": {"status": "delivered", "total": 42.5},
                "latency_ms": 130.0,
            },
            {"kind": "assistant", "content": "Refund issued: 42.50 USD, 3-5 days."},
        ],
        "final_state": {"refunds": [{"order_id": "1182", "amount": 42.5}]},
        "ground_truth": {"refunded": True},
        "metadata": {"channel": "chat"},
    },
    {
        "id": "refund-2",
        "input": "Cancel my subscription",
        "trace": [
            {"kind": "user", "content": "Cancel my subscription"},
            {"kind": "assistant", "content": "<script>alert(1)</script> Done."},
        ],
        "final_state": {},
    },
]

SUITE = """
name: support
cases: {cases}
checks:
  looked_up:
    type: tool_called
    step: {{name: lookup_order}}
  polite:
    type: judge
    question: Is the reply polite?
rubrics:
  task:
    weights: {{looked_up: 2, polite: 1}}
"""


def says(verdict: str, reason: str) -> str:
    return json.dumps({"verdict": verdict, "reason": reason})


def _suite(tmp_path: Path, kind: str = "jsonl") -> Path:
    if kind == "jsonl":
        lines = "".join(json.dumps(c) + "\n" for c in CASES)
        (tmp_path / "cases.jsonl").write_text(lines, encoding="utf-8")
    else:
        (tmp_path / "cases.json").write_text(json.dumps(CASES), encoding="utf-8")
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE.format(cases=f"cases.{kind}"), encoding="utf-8")
    return path


def _count(store: Store, table: type[CaseBodyRow] | type[VerdictRow], *where: object) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table).where(*where)).scalar())


def test_a_run_stores_each_case_as_read_and_the_judge_calls_behind_its_verdicts(
    tmp_path: Path, db_url: str
) -> None:
    suite = load_suite(_suite(tmp_path))
    judge = ScriptedJudge(["not json", says("yes", "courteous"), says("no", "curt")])
    with Store(db_url) as store:
        outcome = run_into(suite, store, judge=judge)
        run = store.get_run(outcome.run_id)
        first = result_detail(store, run, "refund-<b>1</b>", 0)
        assert first is not None
        assert first.case is not None
        assert first.case == Case.model_validate(CASES[0])
        # the first answer was not JSON: the repair call is kept with it, in order
        assert [(e.check, e.reply, e.cached) for e in first.exchanges] == [
            ("polite", "not json", False),
            ("polite", says("yes", "courteous"), False),
        ]
        asked = first.exchanges[0].messages
        assert asked[0].role == "system"
        assert "Is the reply polite?" in asked[-1].content
        assert "Refund issued: 42.50 USD" in asked[-1].content
        assert first.exchanges[1].messages[-2].content == "not json"  # the repair quotes it
        second = result_detail(store, run, "refund-2", 0)
        assert second is not None
        assert second.case == Case.model_validate(CASES[1])
        assert [e.reply for e in second.exchanges] == [says("no", "curt")]
        # verdicts by run, check and state: the index answers "where did X fail"
        failed = select(VerdictRow.idx).where(
            VerdictRow.run_id == run.id,
            VerdictRow.check == "looked_up",
            VerdictRow.state == "failed",
        )
        with store.engine.connect() as conn:
            assert list(conn.execute(failed).scalars()) == [1]
        # a passed verdict has no row: only refund-2's two failures are there
        assert _count(store, VerdictRow, VerdictRow.run_id == run.id) == 2


def test_the_repeats_of_a_case_read_from_its_file_store_it_once(
    tmp_path: Path, db_url: str
) -> None:
    suite = load_suite(_suite(tmp_path))
    with Store(db_url) as store:
        outcome = run_into(suite, store, repeat=3)
        assert _count(store, CaseBodyRow) == 2
        detail = result_detail(store, store.get_run(outcome.run_id), "refund-2", 2)
        assert detail is not None
        assert detail.case == Case.model_validate(CASES[1])
        assert detail.exchanges == ()  # no judge: its check was skipped


def test_cases_from_a_json_document_are_stored_as_evaluated(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path, "json"))
    with Store(f"sqlite:///{tmp_path / 'r.db'}") as store:
        outcome = run_into(suite, store)
        for raw in CASES:
            detail = result_detail(store, store.get_run(outcome.run_id), raw["id"], 0)
            assert detail is not None
            assert detail.case == Case.model_validate(raw)


def test_answers_from_the_judge_cache_are_marked_cached(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path))
    cache = JudgeCache(tmp_path / "cache")
    script = [says("yes", "courteous"), says("no", "curt")]
    with Store(f"sqlite:///{tmp_path / 'r.db'}") as store:
        run_into(suite, store, judge=CachedJudge(ScriptedJudge(script), cache))
        # the second run is answered from the cache alone: its judge has no script left
        rerun = run_into(suite, store, judge=CachedJudge(ScriptedJudge([]), cache))
        detail = result_detail(store, store.get_run(rerun.run_id), "refund-2", 0)
        assert detail is not None
        assert [(e.reply, e.cached) for e in detail.exchanges] == [(says("no", "curt"), True)]
