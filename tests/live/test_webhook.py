"""The alert webhook against real aiohttp servers on 127.0.0.1: retries on 5xx and 429 (with
Retry-After), no redirect followed, timeouts, refused connections, no proxy from the
environment, no secret of the URL in an error, and the body the receiver got."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

import pytest
from aiohttp import web

from checkweigh.core import AlertRule, Counts, evaluate_rule
from checkweigh.errors import InputError
from checkweigh.live import WebhookResult, send_alert, validate_webhook_url

Answer = Callable[[web.Request], Awaitable[web.StreamResponse]]


def status(code: int, headers: dict[str, str] | None = None) -> Answer:
    async def answer(request: web.Request) -> web.StreamResponse:
        return web.Response(status=code, headers=headers, text=f"status {code}")

    return answer


class Receiver:
    """A webhook receiver on 127.0.0.1 that gives ``answers`` in turn (the last one again once
    they run out) and keeps every request it got."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.got: list[tuple[str, dict[str, str], bytes]] = []
        self.release = asyncio.Event()  # what a slow answer waits for
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.got.append((request.path_qs, dict(request.headers), await request.read()))
        answer = self.answers[min(len(self.got), len(self.answers)) - 1]
        return await answer(request)

    async def slow(self, request: web.Request) -> web.StreamResponse:
        await self.release.wait()
        return web.Response(status=200)

    async def __aenter__(self) -> Receiver:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = self.runner.addresses[0][1]
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.release.set()
        await self.runner.cleanup()


def alert_payload() -> dict[str, Any]:
    rule = AlertRule("availability_checked", below=0.9)
    decision = evaluate_rule(rule, Counts(passed=85, failed=35))
    return {
        "monitor": "booking-prod",
        "window": {"start": "2026-12-02T09:00:00Z", "end": "2026-12-02T10:00:00Z"},
        "rule": rule.describe(),
        "decision": decision.model_dump(mode="json"),
        "run": "mon-1a2b3c4d-20261202T0900",
    }


def send(url: str, payload: dict[str, Any] | None = None, **options: Any) -> WebhookResult:
    return asyncio.run(send_alert(url, alert_payload() if payload is None else payload, **options))


def test_a_500_is_tried_again_and_the_receiver_gets_the_alert_as_json() -> None:
    payload = alert_payload()

    async def main() -> tuple[Receiver, WebhookResult]:
        async with Receiver(status(500), status(200)) as hook:
            return hook, await send_alert(f"{hook.url}/hooks/booking", payload, backoff_s=0.01)

    hook, result = asyncio.run(main())
    assert result == WebhookResult(ok=True, status=200, tries=2, error=None, waited_s=0.01)
    assert len(hook.got) == 2
    for path, headers, body in hook.got:
        assert path == "/hooks/booking"
        assert headers["Content-Type"] == "application/json"
        assert headers["User-Agent"].startswith("checkweigh/")
        assert "Cookie" not in headers
        assert json.loads(body) == payload
    assert json.loads(hook.got[0][2])["decision"]["state"] == "fired"


def test_a_429_waits_as_long_as_retry_after_says() -> None:
    async def main() -> tuple[Receiver, WebhookResult]:
        async with Receiver(status(429, {"Retry-After": "1"}), status(204)) as hook:
            return hook, await send_alert(hook.url, alert_payload(), backoff_s=0.01)

    hook, result = asyncio.run(main())
    assert result == WebhookResult(ok=True, status=204, tries=2, error=None, waited_s=1.0)
    assert len(hook.got) == 2


def test_a_long_retry_after_is_capped() -> None:
    async def main() -> WebhookResult:
        async with Receiver(status(503, {"Retry-After": "3600"}), status(200)) as hook:
            return await send_alert(hook.url, alert_payload(), max_wait_s=0.05)

    assert asyncio.run(main()) == WebhookResult(
        ok=True, status=200, tries=2, error=None, waited_s=0.05
    )


def test_a_receiver_that_keeps_failing_is_tried_three_times_and_named() -> None:
    async def main() -> tuple[Receiver, WebhookResult]:
        async with Receiver(status(500)) as hook:
            return hook, await send_alert(hook.url, alert_payload(), backoff_s=0.01)

    hook, result = asyncio.run(main())
    assert result == WebhookResult(
        ok=False,
        status=500,
        tries=3,
        error=f"webhook {hook.url}: answered 500 Internal Server Error (3 tries)",
        waited_s=0.01 + 0.02,
    )
    assert len(hook.got) == 3


def test_a_redirect_to_another_host_is_not_followed() -> None:
    async def main() -> tuple[Receiver, Receiver, WebhookResult]:
        async with Receiver(status(200)) as elsewhere:
            moved = status(302, {"Location": f"{elsewhere.url}/collect"})
            async with Receiver(moved) as hook:
                return hook, elsewhere, await send_alert(hook.url, alert_payload())

    hook, elsewhere, result = asyncio.run(main())
    assert result == WebhookResult(
        ok=False,
        status=302,
        tries=1,
        error=f"webhook {hook.url}: answered 302 Found: a redirect, not followed (1 try)",
    )
    assert len(hook.got) == 1
    assert elsewhere.got == []


def test_a_client_error_is_not_tried_again() -> None:
    async def main() -> WebhookResult:
        async with Receiver(status(404)) as hook:
            return await send_alert(f"{hook.url}/gone", alert_payload())

    result = asyncio.run(main())
    assert not result.ok
    assert (result.status, result.tries) == (404, 1)
    assert result.error is not None
    assert result.error.endswith(": answered 404 Not Found (1 try)")


def test_a_slow_receiver_times_out_on_every_try() -> None:
    async def main() -> tuple[Receiver, WebhookResult]:
        async with Receiver() as hook:
            hook.answers = [hook.slow]
            return hook, await send_alert(
                hook.url, alert_payload(), timeout_s=0.2, tries=2, backoff_s=0.01
            )

    hook, result = asyncio.run(main())
    assert result == WebhookResult(
        ok=False,
        status=None,
        tries=2,
        error=f"webhook {hook.url}: no answer within 0.2s (2 tries)",
        waited_s=0.01,
    )
    assert len(hook.got) == 2


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_a_refused_connection_is_tried_again_and_no_secret_is_said() -> None:
    port = free_port()
    url = f"https://alice:s3cret-pw@127.0.0.1:{port}/services/T000/XXXXtoken?key=abc123"
    result = send(url, backoff_s=0.01)
    assert not result.ok
    assert (result.status, result.tries) == (None, 3)
    assert result.error is not None
    assert result.error.startswith(f"webhook https://127.0.0.1:{port}: connection failed (")
    assert result.error.endswith("(3 tries)")
    for secret in ("alice", "s3cret", "T000", "XXXXtoken", "abc123", "/services"):
        assert secret not in result.error


def test_the_url_s_user_is_sent_as_basic_auth_and_kept_out_of_errors() -> None:
    async def main() -> tuple[Receiver, WebhookResult]:
        async with Receiver(status(500)) as hook:
            url = f"http://alice:s3cret-pw@127.0.0.1:{hook.port}/hooks/XXXXtoken?key=abc123"
            return hook, await send_alert(url, alert_payload(), tries=1)

    hook, result = asyncio.run(main())
    path, headers, _ = hook.got[0]
    assert path == "/hooks/XXXXtoken?key=abc123"
    assert headers["Authorization"] == "Basic " + base64.b64encode(b"alice:s3cret-pw").decode()
    assert result.error == f"webhook {hook.url}: answered 500 Internal Server Error (1 try)"


def test_a_proxy_in_the_environment_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.setenv(name, dead)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)

    async def main() -> tuple[Receiver, WebhookResult]:
        async with Receiver(status(200)) as hook:
            return hook, await send_alert(hook.url, alert_payload())

    hook, result = asyncio.run(main())
    assert result.ok
    assert len(hook.got) == 1
    assert "Proxy-Authorization" not in hook.got[0][1]


@pytest.mark.parametrize(
    ("payload", "error"),
    [
        ({"at": datetime(2026, 12, 2, tzinfo=UTC)}, "payload is not JSON: Object of type"),
        ({"rate": float("nan")}, "payload is not JSON: Out of range float values"),
    ],
)
def test_a_payload_that_is_not_json_is_not_sent(payload: dict[str, Any], error: str) -> None:
    result = send("http://127.0.0.1:9/hook", payload)
    assert (result.ok, result.tries, result.status) == (False, 0, None)
    assert result.error is not None
    assert result.error.startswith(error)


def test_a_url_aiohttp_refuses_is_a_result_not_an_error() -> None:
    result = send("http://127.0.0.1:99999/hook")
    assert (result.ok, result.status, result.tries) == (False, None, 1)
    assert result.error == (
        "webhook (a URL that does not parse): not a URL that can be sent to (expected http:// "
        "or https://, a host and a port up to 65535) (1 try)"
    )


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9000/hook", "https://hooks.example.com/services/T0/B0/x?y=1"]
)
def test_a_good_webhook_url_is_kept(url: str) -> None:
    assert validate_webhook_url(url) == url


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (None, "monitor.yaml: webhook: expected an http:// or https:// URL"),
        ("", "monitor.yaml: webhook: expected an http:// or https:// URL"),
        (
            "ftp://alice:pw@files.example.com/x",
            "monitor.yaml: webhook: expected an http:// or https:// URL, got a ftp: URL",
        ),
        (
            "hooks.example.com/services/T0/secret",
            "monitor.yaml: webhook: expected an http:// or https:// URL, got no scheme",
        ),
        ("http:///hook", "monitor.yaml: webhook: expected a host in the URL"),
        (
            "http://example.com:port/hook",
            "monitor.yaml: webhook: expected an http:// or https:// URL with a numeric port, "
            "if any",
        ),
        (
            "http://example.com/a b",
            "monitor.yaml: webhook: expected a URL without spaces or control characters",
        ),
    ],
)
def test_a_bad_webhook_url_is_one_line_without_its_secret(url: object, message: str) -> None:
    with pytest.raises(InputError) as raised:
        validate_webhook_url(url, file="monitor.yaml")
    assert str(raised.value) == message


def test_a_failure_nobody_foresaw_is_a_clean_result(monkeypatch: pytest.MonkeyPatch) -> None:
    from checkweigh.live import _webhook

    url_holder: list[str] = []

    def broken(value: str | None) -> float | None:
        raise RuntimeError(f"cannot read\x1b[31m {url_holder[0]}\nat all")

    monkeypatch.setattr(_webhook, "retry_after_s", broken)

    async def main() -> tuple[Receiver, WebhookResult]:
        async with Receiver(status(200)) as hook:
            url_holder.append(f"http://bob:pw-123@127.0.0.1:{hook.port}/hooks/XXXXtoken")
            return hook, await send_alert(url_holder[0], alert_payload())

    hook, result = asyncio.run(main())
    assert result == WebhookResult(
        ok=False,
        status=None,
        tries=1,
        error=f"webhook {hook.url}: RuntimeError: cannot read [31m *** at all (1 try)",
    )
