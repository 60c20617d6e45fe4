"""The webhook a monitor's alerts are POSTed to: JSON, a few tries, and a result, never an error.

The worker that sends an alert must go on scoring whatever the receiver does, so
:func:`send_alert` returns what happened (:class:`WebhookResult`) and raises nothing but
cancellation. A webhook URL often holds its secret (a user and password, a token in the path or
the query), so messages name only the URL's scheme, host and port.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

from .. import __version__
from ..errors import InputError
from ..runs.targets.http import retry_after_s

if TYPE_CHECKING:
    import aiohttp

RETRY_STATUSES = frozenset((429, 500, 502, 503, 504))
"""Answers that say "try again later"."""
INSTALL_HINT = "sending webhooks needs aiohttp: pip install 'checkweigh[http]'"


class WebhookResult(BaseModel):
    """What became of one alert's POST (stored with the window's alerts)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ok: bool
    """The receiver answered 2xx."""
    status: int | None
    """The last HTTP status received; None when no answer came."""
    tries: int
    """POSTs made (0 when none could be: no aiohttp, a payload that is not JSON)."""
    error: str | None
    """Why it failed, in one line with no secret of the URL; None when ``ok``."""
    waited_s: float = 0.0
    """Seconds waited between tries (backoff, or the receiver's ``Retry-After``)."""


def validate_webhook_url(url: object, *, file: str | Path | None = None) -> str:
    """``url`` when it can receive alerts: an http:// or https:// URL with a host.

    Raises:
        InputError: one line naming the field ``webhook`` (and ``file``); it does not repeat
            the URL, which may hold a secret.
    """

    def bad(message: str) -> InputError:
        return InputError(message, file=file, field="webhook")

    if not isinstance(url, str) or not url.strip():
        raise bad("expected an http:// or https:// URL")
    if any(c.isspace() or not c.isprintable() for c in url):
        raise bad("expected a URL without spaces or control characters")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        raise bad("expected an http:// or https:// URL with a numeric port, if any") from None
    if parts.scheme.lower() not in ("http", "https"):
        scheme = parts.scheme if parts.scheme.isalnum() else ""
        got = f"a {scheme}: URL" if scheme else "no scheme"
        raise bad(f"expected an http:// or https:// URL, got {got}")
    if not parts.hostname:
        raise bad("expected a host in the URL")
    return url


async def send_alert(
    url: str,
    payload: Mapping[str, Any],
    *,
    timeout_s: float = 10.0,
    tries: int = 3,
    backoff_s: float = 0.5,
    max_wait_s: float = 30.0,
) -> WebhookResult:
    """POST ``payload`` as JSON to ``url``, trying again on failed connections, timeouts,
    429 and 5xx.

    Redirects are not followed (a 3xx is a failure: an alert goes where it was configured to,
    not where a server sends it), nothing is read from the environment (proxies, ``.netrc``)
    and no cookie is kept.

    Args:
        url: the webhook (see :func:`validate_webhook_url`).
        payload: the JSON object to send.
        timeout_s: the most one try may take, answer included.
        tries: the most POSTs made.
        backoff_s: the wait before the second try, doubled before each next one.
        max_wait_s: the longest wait between tries, a receiver's ``Retry-After`` included.

    Returns:
        What happened; never raises (cancellation excepted).
    """
    where = _origin(url)
    try:
        body = json.dumps(dict(payload), allow_nan=False, ensure_ascii=False).encode()
    except (TypeError, ValueError) as exc:
        return WebhookResult(ok=False, status=None, tries=0, error=f"payload is not JSON: {exc}")
    try:
        import aiohttp
    except ImportError:
        return WebhookResult(ok=False, status=None, tries=0, error=INSTALL_HINT)
    sender = _Sender(aiohttp, url, where, body, timeout_s, max(1, tries))
    try:
        return await sender.send(backoff_s, max_wait_s)
    except Exception as exc:  # noqa: BLE001 - the worker goes on: recorded, never raised
        return sender.failed(None, f"{type(exc).__name__}: {exc}")


class _Try(NamedTuple):
    """One POST's outcome."""

    status: int | None
    """The answer's status; None when none came."""
    problem: str | None
    """What went wrong; None on a 2xx."""
    again: bool = False
    """Whether trying again may help (a failed connection, a timeout, 429, 5xx)."""
    retry_after: float | None = None
    """The receiver's ``Retry-After``, in seconds."""


class _Sender:
    """One alert's tries, counted as they go (so an unforeseen failure still says how many)."""

    def __init__(
        self, aiohttp: Any, url: str, where: str, body: bytes, timeout_s: float, tries: int
    ) -> None:
        self.aiohttp, self.url, self.where, self.body = aiohttp, url, where, body
        self.timeout_s, self.most = timeout_s, tries
        self.tries, self.waited_s = 0, 0.0

    async def send(self, backoff_s: float, max_wait_s: float) -> WebhookResult:
        aiohttp = self.aiohttp
        async with aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self.timeout_s),
            trust_env=False,
            cookie_jar=aiohttp.DummyCookieJar(),
            headers={"User-Agent": f"checkweigh/{__version__}"},
        ) as session:
            while True:
                self.tries += 1
                done = await self._try(session)
                if done.problem is None:
                    return WebhookResult(
                        ok=True,
                        status=done.status,
                        tries=self.tries,
                        error=None,
                        waited_s=self.waited_s,
                    )
                if not done.again or self.tries >= self.most:
                    return self.failed(done.status, done.problem)
                wait = backoff_s * 2 ** (self.tries - 1)
                if done.retry_after is not None:
                    wait = done.retry_after
                wait = min(max(0.0, wait), max_wait_s)
                await asyncio.sleep(wait)
                self.waited_s += wait

    async def _try(self, session: aiohttp.ClientSession) -> _Try:
        aiohttp = self.aiohttp
        try:
            async with session.post(
                self.url,
                data=self.body,
                headers={"Content-Type": "application/json"},
                allow_redirects=False,
            ) as response:
                status, reason = response.status, response.reason or ""
                retry_after = retry_after_s(response.headers.get("Retry-After"))
        except aiohttp.InvalidURL:
            return _Try(
                None,
                "not a URL that can be sent to "
                "(expected http:// or https://, a host and a port up to 65535)",
            )
        except TimeoutError:
            return _Try(None, f"no answer within {self.timeout_s:g}s", again=True)
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            return _Try(None, f"connection failed ({type(exc).__name__}: {exc})", again=True)
        said = f"answered {status} {reason}".rstrip()
        if 200 <= status < 300:
            return _Try(status, None)
        if 300 <= status < 400:
            return _Try(status, f"{said}: a redirect, not followed")
        return _Try(status, said, again=status in RETRY_STATUSES, retry_after=retry_after)

    def failed(self, status: int | None, problem: str) -> WebhookResult:
        """The result of a failure: ``problem`` in one line, with no secret of the URL."""
        tries = f" ({self.tries} {'try' if self.tries == 1 else 'tries'})"
        error = f"webhook {self.where}: {_scrub(problem, self.url)}{tries}"
        return WebhookResult(
            ok=False, status=status, tries=self.tries, error=error, waited_s=self.waited_s
        )


def _origin(url: str) -> str:
    """``scheme://host:port`` of ``url``: what a message may say of it."""
    try:
        parts = urlsplit(url)
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(a URL that does not parse)"
    if not parts.scheme or not parts.hostname:
        return "(a URL without a scheme or host)"
    host = parts.hostname
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}{port}"


def _scrub(text: str, url: str) -> str:
    """``text`` without the parts of ``url`` that may be secret (user, password, path, query),
    on one line and without control characters: an exception's message may quote the URL,
    and the error is shown on a terminal and a page."""
    try:
        parts = urlsplit(url)
        secrets = [url, parts.username, parts.password, parts.query, parts.fragment]
    except ValueError:
        secrets = [url]
        parts = None
    if parts is not None and len(parts.path) > 1:
        secrets.append(parts.path)
    for secret in sorted((s for s in secrets if s and len(s) > 1), key=len, reverse=True):
        text = text.replace(secret, "***")
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())
