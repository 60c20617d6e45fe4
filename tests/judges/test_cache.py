"""The judge cache: a re-run makes zero calls, any change to the call misses, replay turns a
miss into an error, bypass neither reads nor writes, and a damaged entry is just a miss."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from checkweigh.core import Case, VerdictState
from checkweigh.judges import (
    CachedJudge,
    CacheMode,
    JudgeCache,
    JudgeCheck,
    ReplayMiss,
    ScriptedJudge,
    TraceFormatter,
    cache_dir,
    cache_key,
)

CASE = Case(
    id="s07",
    input={"message": "Move my 1:1 with Dan to Thursday"},
    trace=[
        {"kind": "tool_call", "name": "check_availability", "result": {"Dan": "free"}},
        {"kind": "assistant", "content": "Moved your 1:1 with Dan to Thursday at 14:00."},
    ],
)
YES = '{"verdict": "yes", "reason": "the move matches the request"}'


def run(judge: CachedJudge, check: JudgeCheck | None = None) -> object:
    check = check or JudgeCheck(question="Did the agent do what was asked?")
    return asyncio.run(check.evaluate(CASE, judge))


def test_a_rerun_is_answered_from_the_cache(tmp_path: Path) -> None:
    inner = ScriptedJudge([YES])
    first = CachedJudge(inner, JudgeCache(tmp_path))
    assert run(first) == (VerdictState.PASSED, "the move matches the request", None)
    second = CachedJudge(ScriptedJudge([]), JudgeCache(tmp_path))  # any call would fail
    assert run(second) == (VerdictState.PASSED, "the move matches the request", None)
    assert (first.calls, first.misses, second.calls, second.hits) == (1, 1, 0, 1)
    entries = list(tmp_path.rglob("*.json"))
    assert len(entries) == 1
    assert "the move matches the request" in entries[0].read_text()


def test_changes_to_the_call_miss(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    judge = CachedJudge(ScriptedJudge([YES, YES, YES]), cache)
    run(judge)
    run(judge, JudgeCheck(question="Did the agent do what was asked?", max_tokens=50))
    v3 = TraceFormatter(version="3")  # same text today, but a new version is a new metric
    run(judge, JudgeCheck(question="Did the agent do what was asked?", formatter=v3))
    assert (judge.calls, judge.hits) == (3, 0)
    request = JudgeCheck(question="q").request(CASE)
    assert cache_key("openai:a", request) != cache_key("openai:b", request)


def test_replay_turns_a_miss_into_an_errored_verdict(tmp_path: Path) -> None:
    judge = CachedJudge(ScriptedJudge([YES]), JudgeCache(tmp_path), CacheMode.REPLAY)
    verdict = run(judge)
    assert verdict.state is VerdictState.ERRORED  # type: ignore[attr-defined]
    assert "no cached answer for this call" in verdict.error  # type: ignore[attr-defined]
    assert judge.calls == 0
    with pytest.raises(ReplayMiss):
        asyncio.run(judge.complete(JudgeCheck(question="q").request(CASE)))


def test_bypass_neither_reads_nor_writes(tmp_path: Path) -> None:
    warm = CachedJudge(ScriptedJudge([YES]), JudgeCache(tmp_path))
    run(warm)
    no = '{"verdict": "no", "reason": "fresh answer"}'
    bypass = CachedJudge(ScriptedJudge([no]), JudgeCache(tmp_path), CacheMode.BYPASS)
    assert run(bypass) == (VerdictState.FAILED, "fresh answer", None)  # not the cached yes
    assert (bypass.calls, bypass.hits, bypass.misses) == (1, 0, 0)
    assert len(list(tmp_path.rglob("*.json"))) == 1  # nothing new written


def test_a_damaged_entry_is_a_miss_and_is_replaced(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    judge = CachedJudge(ScriptedJudge([YES, YES]), cache)
    run(judge)
    (entry,) = tmp_path.rglob("*.json")
    entry.write_text("{truncated")
    assert run(judge) == (VerdictState.PASSED, "the move matches the request", None)
    assert judge.calls == 2
    assert entry.read_text().startswith("{")
    assert JudgeCache(tmp_path).get(entry.stem) is not None


def test_cache_folder_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHECKWEIGH_CACHE_DIR", raising=False)
    assert cache_dir() == Path(".checkweigh/cache")
    monkeypatch.setenv("CHECKWEIGH_CACHE_DIR", "/tmp/judges")
    assert cache_dir() == Path("/tmp/judges")
    assert cache_dir("here") == Path("here")


def test_an_invalid_answer_is_not_cached_so_the_next_run_asks_again(tmp_path: Path) -> None:
    junk = CachedJudge(ScriptedJudge(["Sure!", '{"verdict": "maybe"}']), JudgeCache(tmp_path))
    verdict = run(junk)
    assert verdict.state is VerdictState.ERRORED  # type: ignore[attr-defined]
    assert "invalid judge answer after one repair" in verdict.error  # type: ignore[attr-defined]
    assert list(tmp_path.rglob("*.json")) == []  # neither the junk nor the bad repair
    fixed = CachedJudge(ScriptedJudge([YES]), JudgeCache(tmp_path))
    assert run(fixed) == (VerdictState.PASSED, "the move matches the request", None)
    assert (fixed.calls, fixed.hits) == (1, 0)
    replay = CachedJudge(ScriptedJudge([]), JudgeCache(tmp_path), CacheMode.REPLAY)
    assert run(replay) == (VerdictState.PASSED, "the move matches the request", None)


def test_a_repaired_answer_is_cached_under_the_question(tmp_path: Path) -> None:
    judge = CachedJudge(ScriptedJudge(["Yes, it did.", YES]), JudgeCache(tmp_path))
    assert run(judge) == (VerdictState.PASSED, "the move matches the request", None)
    (entry,) = tmp_path.rglob("*.json")
    question = JudgeCheck(question="Did the agent do what was asked?").request(CASE)
    assert entry.stem == cache_key(judge.name, question)
    assert "Yes, it did." not in entry.read_text()
    replay = CachedJudge(ScriptedJudge([]), JudgeCache(tmp_path), CacheMode.REPLAY)
    assert run(replay) == (VerdictState.PASSED, "the move matches the request", None)
    assert (replay.calls, replay.hits) == (0, 1)
