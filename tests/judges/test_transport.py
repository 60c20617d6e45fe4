"""Provider clients run on the SDK's aiohttp transport when it is installed, and fall back to
the SDK's default transport when it is not."""

from __future__ import annotations

import asyncio
import types

import aiohttp
import openai
import pytest

from checkweigh.judges import JudgeRequest, Message, OpenAIJudge
from checkweigh.judges._sdk import aiohttp_client
from checkweigh.testing import Reply, fake_llm_server
from support.closing import closing


def test_the_aiohttp_transport_is_used_when_installed() -> None:
    client = aiohttp_client(openai)
    assert isinstance(client, openai.DefaultAioHttpClient)
    assert type(client).__name__ != "_MissingAioHttpClient"


def test_an_sdk_without_the_transport_gets_its_default() -> None:
    old_sdk = types.ModuleType("old_sdk")
    assert aiohttp_client(old_sdk) is None

    def missing(**_kwargs: object) -> object:
        raise RuntimeError("To use the aiohttp client you must have installed aiohttp")

    no_aiohttp = types.ModuleType("no_aiohttp")
    no_aiohttp.DefaultAioHttpClient = missing  # type: ignore[attr-defined]
    assert aiohttp_client(no_aiohttp) is None


def test_calls_use_aiohttp_and_close_its_session(monkeypatch: pytest.MonkeyPatch) -> None:
    sessions: list[aiohttp.ClientSession] = []
    real_init = aiohttp.ClientSession.__init__

    def spy(self: aiohttp.ClientSession, *args: object, **kwargs: object) -> None:
        real_init(self, *args, **kwargs)  # type: ignore[arg-type]
        sessions.append(self)

    monkeypatch.setattr(aiohttp.ClientSession, "__init__", spy)
    reply = Reply('{"verdict": "yes", "reason": "grounded"}')
    with fake_llm_server([reply, reply]) as server:
        judge = OpenAIJudge("gpt-test", base_url=server.base_url, api_key="k")

        async def two_calls() -> list[str]:
            request = JudgeRequest(messages=(Message(role="user", content="q?"),))
            return [(await judge.complete(request)).text for _ in range(2)]

        texts = asyncio.run(closing(judge, two_calls()))
    assert texts == ['{"verdict": "yes", "reason": "grounded"}'] * 2
    assert len(sessions) == 1
    assert sessions[0].closed
