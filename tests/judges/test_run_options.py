"""`checkweigh run --judge` with the judge options, end to end through the CLI and the real
openai SDK: the suite's ``judge:`` block and the ``--judge-*`` flags (flags win) recorded in
the run, one-line errors for bad values, a hung provider ending the check within the
deadline, the negotiated output format in the report, invalid answers left out of the
cache, and the API key in no output, file, database or cache entry."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from checkweigh.judges import MAX_WINDOW
from checkweigh.reports._console import judge_line
from checkweigh.store import Store
from checkweigh.testing import Reply, fake_llm_server
from support.judge_suite import CASES, KEY, YES, judge_suite, run_judged


def stored(tmp_path: Path) -> Store:
    return Store(f"sqlite:///{tmp_path / 'runs.db'}")


def test_the_suite_block_and_flags_are_recorded_flags_winning(tmp_path: Path) -> None:
    block = "judge:\n  timeout_s: 20\n  retries: 4\n  format: json_object\n  concurrency: 3\n"
    suite = judge_suite(tmp_path / "s", block)
    with fake_llm_server([], default=Reply(YES)) as server:
        code, out = run_judged(
            suite, server, tmp_path, "--judge-timeout", "7.5", "--judge-format", "auto"
        )
    assert code == 0, out
    config = stored(tmp_path).get_run("latest").config
    assert config["judge_options"] == {
        "timeout_s": 7.5,
        "retries": 4,
        "deadline_s": 120.0,
        "backoff_initial_s": 0.5,
        "backoff_max_s": 20.0,
        "format": "auto",
        "concurrency": 3,
    }
    assert "note: judge output format: json_schema (negotiated: accepted)" in out


def test_a_llama_cpp_like_server_is_negotiated_and_the_report_says_so(tmp_path: Path) -> None:
    suite = judge_suite(tmp_path / "s")
    with fake_llm_server([], default=Reply(YES), structured="llama") as server:
        code, out = run_judged(suite, server, tmp_path)
    assert code == 0, out
    assert "json_object (negotiated: the server rejected json_schema)" in out
    # llama-cpp-python's server decodes one request at a time: two calls in flight, not 32,
    # and the report says why
    assert stored(tmp_path).get_run("latest").config["judge_options"]["concurrency"] == 2
    assert "judge concurrency 2: llama-cpp-python on this machine decodes one request" in out
    assert "of 2 allowed" in out
    info = stored(tmp_path).get_run("latest")
    assert info.summary is not None
    assert (info.summary.judge.calls, info.summary.judge.errors) == (CASES, 0)  # type: ignore[union-attr]
    assert any("json_object (negotiated" in n for n in info.summary.notes)


def test_any_other_server_on_this_machine_gets_the_adaptive_default(tmp_path: Path) -> None:
    suite = judge_suite(tmp_path / "s")
    with fake_llm_server([], default=Reply(YES, delay_s=0.2), keep_alive=True) as server:
        code, out = run_judged(suite, server, tmp_path)
        seen = server.stats()
    assert code == 0, out
    info = stored(tmp_path).get_run("latest")
    assert info.config["judge_options"]["concurrency"] == 32
    assert info.summary is not None
    judge = info.summary.judge
    assert judge is not None
    # one call probes for rate-limit headers, then every other case's call is in flight at
    # once, as the server saw it and as the report says
    assert judge.peak_in_flight == seen["peak_in_flight"] == CASES - 1
    # adaptive from 32 up to MAX_WINDOW; the fake sends no rate-limit headers: nothing learned
    assert (judge.adaptive, judge.concurrency, judge.answered_429) == (True, MAX_WINDOW, 0)
    assert (judge.learned_rpm, judge.learned_tpm) == (None, None)
    line = judge_line(judge)
    assert f"peak {CASES - 1} in flight of {MAX_WINDOW} allowed" in line
    assert "adaptive: window peak 32, 0 429(s) answered" in line
    assert "judge concurrency" not in out


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("judge:\n  timeout_s: fast\n", "suite.yaml:38: judge.timeout_s: expected a number"),
        ("judge:\n  timeout: 5\n", "judge.timeout: unknown key 'timeout'; did you mean"),
        ("judge:\n  format: xml\n", "judge.format: expected 'auto', 'json_schema'"),
        ("judge:\n  retries: -1\n", "judge.retries: input should be greater than or equal to 0"),
        ("judge:\n  deadline_s: 0\n", "judge.deadline_s: input should be greater than 0"),
        ("judge: 5\n", "suite.yaml:37: judge: expected a mapping, got 5"),
    ],
)
def test_a_bad_judge_block_is_one_line(tmp_path: Path, block: str, message: str) -> None:
    code, out = run_judged(judge_suite(tmp_path / "s", block), None, tmp_path)
    assert code == 2
    assert message in out
    assert len(out.strip().splitlines()) == 1
    assert "Traceback" not in out


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--judge-timeout", "0", "--judge-timeout: expected a number of seconds > 0"),
        ("--judge-deadline", "-5", "--judge-deadline: expected a number of seconds > 0"),
        ("--judge-retries", "-1", "--judge-retries: expected a whole number from 0 to 100, got -1"),
        ("--judge-concurrency", "0", "--judge-concurrency: expected an integer >= 1"),
        ("--judge-format", "xml", "--judge-format: expected one of auto, json_schema, json_obj"),
    ],
)
def test_a_bad_judge_flag_is_one_line(tmp_path: Path, flag: str, value: str, message: str) -> None:
    code, out = run_judged(judge_suite(tmp_path / "s"), None, tmp_path, flag, value)
    assert code == 2
    assert message in out
    assert len(out.strip().splitlines()) == 1


def test_a_hung_provider_ends_each_check_errored_within_the_deadline(tmp_path: Path) -> None:
    suite = judge_suite(tmp_path / "s")
    with fake_llm_server([], default=Reply(hang=True)) as server:
        start = time.monotonic()
        code, out = run_judged(
            suite, server, tmp_path, "--judge-timeout", "0.3", "--judge-deadline", "0.8"
        )
        took = time.monotonic() - start
    assert code == 1, out  # errored executions fail the gate; the run ends
    assert "6 errored" in out
    # six checks, all in flight at once (32 slots): one round of ~0.8 s, well within 8 s
    assert took < 8.0
    results = list(stored(tmp_path).iter_results(stored(tmp_path).get_run("latest").id))
    errors = [r.verdicts["grounded"].error or "" for r in results]
    assert len(errors) == CASES
    for error in errors:
        found = re.fullmatch(
            r"openai:gpt-test: timed out after ([\d.]+) s \(\d+ attempt\(s\), deadline 0.8 s\)",
            error,
        )
        assert found is not None, error
        assert 0.7 <= float(found[1]) < 1.5  # the deadline, and the time cancelling takes


def test_an_invalid_answer_is_not_cached_and_the_next_run_asks_again(tmp_path: Path) -> None:
    suite = judge_suite(tmp_path / "s")
    with fake_llm_server([], default=Reply("I think so, yes.")) as server:
        code, out = run_judged(suite, server, tmp_path)
    assert code == 1, out
    assert "6 errored" in out
    assert len(server.requests) == 2 * CASES  # each asked, repaired once, still junk
    assert not [p for p in (tmp_path / "cache").rglob("*.json")]
    with fake_llm_server([], default=Reply(YES)) as server:
        code, out = run_judged(suite, server, tmp_path)
    assert code == 0, out
    assert len(server.requests) == CASES  # real calls, not the frozen errored answers
    code, out = run_judged(suite, None, tmp_path, "--replay")
    assert code == 0, out  # the valid answers were cached
    assert f"0 call(s), {CASES} cache hit(s)" in out


def test_the_key_echoed_by_a_provider_is_in_no_output(tmp_path: Path) -> None:
    suite = judge_suite(tmp_path / "s")
    outputs = {name: tmp_path / f"report.{name}" for name in ("json", "md", "xml")}
    with fake_llm_server([], default=Reply(status=403, echo_auth=True)) as server:
        code, out = run_judged(
            suite,
            server,
            tmp_path,
            "--json",
            str(outputs["json"]),
            "--markdown",
            str(outputs["md"]),
            "--junit",
            str(outputs["xml"]),
        )
    assert code == 1, out
    assert KEY in str(server.headers)  # the proxy did echo what it was sent
    assert KEY not in out
    assert "Authorization: Bearer ***" in outputs["json"].read_text()
    files = [*outputs.values(), tmp_path / "runs.db", *(tmp_path / "cache").rglob("*")]
    for path in files:
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    assert len(server.requests) == CASES  # a 403 is final: not retried


def test_json_object_is_refused_for_anthropic_in_one_line(tmp_path: Path) -> None:
    suite = judge_suite(tmp_path / "s")
    code, out = run_judged(
        suite, None, tmp_path, "--judge-format", "json_object", judge="anthropic:claude-test"
    )
    assert code == 2
    assert out.strip() == (
        "error: --judge: anthropic:claude-test: format json_object is OpenAI's; "
        "use auto, json_schema or prompt"
    )
