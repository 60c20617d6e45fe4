"""checkweigh.testing's scripted server as the peer benchmark uses it: answers chosen by the
answer schema a request asks for, and what the server saw (requests, the peak in flight, the
span from the first request to the last answer), in-process and from ``python -m
checkweigh.testing --stats``."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

from checkweigh.judges import JudgeRequest, Message, MeteredJudge, OpenAIJudge, RetryPolicy
from checkweigh.testing import Reply, by_schema, fake_llm_server, schema_name


def request(schema: str) -> JudgeRequest:
    return JudgeRequest(
        messages=(Message(role="user", content="Split the answer."),),
        schema_name=schema,
        json_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
    )


async def calls(base_url: str, schemas: list[str], concurrency: int) -> list[str]:
    client = OpenAIJudge("scripted", base_url=base_url, api_key="sk-test", retry=RetryPolicy(1))
    metered = MeteredJudge(client, concurrency=concurrency)
    try:
        replies = await asyncio.gather(*(metered.complete(request(s)) for s in schemas))
    finally:
        await metered.aclose()
    return [r.text for r in replies]


def test_answers_follow_the_schema_asked_for_and_the_server_counts_what_it_saw() -> None:
    answers = {
        "statements": Reply('{"n": 1}', delay_s=0.2),
        "statement_verdicts": Reply('{"n": 2}', delay_s=0.2),
    }
    schemas = ["statements", "statement_verdicts"] * 6
    with fake_llm_server(
        [], default=Reply('{"n": 0}'), respond=by_schema(answers), keep_alive=True
    ) as server:
        texts = asyncio.run(calls(server.base_url, schemas + ["other"], concurrency=4))
        stats = server.stats()
        seen = [schema_name(body) for body in server.requests]
    assert texts == ['{"n": 1}', '{"n": 2}'] * 6 + ['{"n": 0}']
    assert sorted(s for s in seen if s is not None) == sorted(schemas + ["other"])
    assert stats["requests"] == 13
    # at most 4 in flight (the client's limit), and it was reached
    assert stats["peak_in_flight"] == 4
    # 12 calls of 0.2 s, 4 at a time: three waves, at least 0.6 s from first to last
    assert 0.6 <= stats["span_s"] < 3.0


def test_the_server_process_prints_its_stats_when_stdin_closes() -> None:
    with subprocess.Popen(
        [
            sys.executable,
            "-m",
            "checkweigh.testing",
            "--keep-alive",
            "--stats",
            "--answer-for",
            'statements={"n": 7}',
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdin is not None
        base_url = proc.stdout.readline().strip()
        texts = asyncio.run(calls(base_url, ["statements", "verdict"], concurrency=2))
        proc.stdin.close()
        lines = proc.stdout.read().strip().splitlines()
        assert proc.wait(timeout=10) == 0
    assert texts[0] == '{"n": 7}'
    assert json.loads(texts[1])["verdict"] == "yes"  # the default --answer
    stats = json.loads(lines[-1])
    assert stats["requests"] == 2
    assert 1 <= stats["peak_in_flight"] <= 2
    assert stats["span_s"] >= 0


def test_a_bad_answer_for_is_one_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "checkweigh.testing", "--answer-for", "no-equals-sign"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2
    assert "expected NAME=TEXT, got 'no-equals-sign'" in proc.stderr
    assert "Traceback" not in proc.stderr
