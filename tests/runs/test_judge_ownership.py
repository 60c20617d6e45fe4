"""Who closes the judge, one rule on every path: a judge the caller passes is the caller's and
is never closed by the run (``run`` included); a judge the run builds from
``RunOptions.judge`` is the run's and is closed when it ends (``run`` and ``arun``, a run
that fails included). The real openai SDK against a local chat-completions server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import checkweigh as cw
from checkweigh.errors import InputError
from checkweigh.judges import CachedJudge, JudgeModel, close_judge
from checkweigh.runs import JudgeSetup, RunOptions, RunStart, RunStopped, make_cached_judge
from checkweigh.store import RunStatus
from checkweigh.testing import Reply, fake_llm_server
from support.judge_suite import judge_suite


@pytest.fixture
def closed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[JudgeModel]]:
    """The judges closed meanwhile, in order; a local judge server for ``openai:gpt-test``."""
    seen: list[JudgeModel] = []
    close = CachedJudge.aclose

    async def spy(self: CachedJudge) -> None:
        seen.append(self)
        await close(self)

    monkeypatch.setattr(CachedJudge, "aclose", spy)
    answers = [Reply(json.dumps({"verdict": "yes", "reason": "every claim is in the trace"}))]
    with fake_llm_server(answers * 100) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
        monkeypatch.setenv("CHECKWEIGH_CACHE_DIR", str(tmp_path / "cache"))
        yield seen


def test_a_judge_the_run_builds_is_closed_by_run_and_arun(
    closed: list[JudgeModel], tmp_path: Path
) -> None:
    suite = judge_suite(tmp_path / "s")
    options = RunOptions(judge=JudgeSetup(spec="openai:gpt-test", no_cache=True))
    built: list[JudgeModel | None] = []

    def keep(begun: RunStart) -> None:
        built.append(begun.judge)

    report = cw.run(suite, options, on_start=keep)
    assert report.summary.judge is not None
    assert report.summary.judge.calls == 6
    awaited = asyncio.run(cw.arun(suite, options, on_start=keep))
    assert awaited.summary.judge is not None
    assert len(built) == 2
    assert all(isinstance(j, CachedJudge) for j in built)
    assert closed == built  # each closed once, by the run that built it


def test_a_judge_the_run_builds_is_closed_when_the_run_fails(
    closed: list[JudgeModel], tmp_path: Path
) -> None:
    suite = judge_suite(tmp_path / "s")
    built: list[JudgeModel | None] = []

    def fail(begun: RunStart) -> None:
        built.append(begun.judge)
        raise OSError("the progress display broke")

    options = RunOptions(judge=JudgeSetup(spec="openai:gpt-test"))
    store = cw.Store("sqlite://")
    with pytest.raises(RunStopped) as stopped:
        cw.run(suite, options, store=store, on_start=fail)
    assert isinstance(stopped.value.cause, OSError)
    assert closed == built
    (run,) = store.list_runs()
    assert run.status is RunStatus.INCOMPLETE  # the run it created is not left running


def test_a_judge_the_caller_passes_is_never_closed(
    closed: list[JudgeModel], tmp_path: Path
) -> None:
    suite = judge_suite(tmp_path / "s")

    async def twice() -> None:
        judge = make_cached_judge("openai:gpt-test", no_cache=True, replay=False)
        assert judge is not None
        first = await cw.arun(suite, judge=judge)
        second = await cw.arun(suite, judge=judge)  # the same client, still open
        assert first.summary.judge is not None
        assert second.summary.judge is not None
        assert second.summary.judge.calls == 12  # the caller's meter counts both runs
        assert closed == []
        await judge.aclose()  # the caller closes it, in its own loop

    asyncio.run(twice())
    assert len(closed) == 1


def test_a_judge_given_twice_is_refused(closed: list[JudgeModel], tmp_path: Path) -> None:
    judge = make_cached_judge("openai:gpt-test", no_cache=True, replay=False)
    options = RunOptions(judge=JudgeSetup(spec="openai:gpt-test"))
    with pytest.raises(InputError, match=r"^judge: a judge is given both as an object and"):
        cw.run(judge_suite(tmp_path / "s"), options, judge=judge)
    asyncio.run(close_judge(judge))
