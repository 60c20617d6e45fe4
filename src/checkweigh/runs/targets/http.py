"""The HTTP target: each case is POSTed as JSON to the agent's endpoint.

The request is :func:`request_payload` (or the suite's ``body:`` template filled from it); the
reply is read as the suite's ``reply:`` says (:mod:`._reply`). A 429, 502, 503 or 504
and a failed connection are tried again after an exponential backoff with jitter, or after
the server's ``Retry-After``; everything else that gives no usable reply is an
:class:`AgentFailure` with one line saying what happened (and what the earlier tries saw), so
its case is errored and the run goes on. Secrets (``${NAME}`` in headers) are read from the
environment when the target is built and never appear in a message: a reply that echoes one
shows ``***``. They go only where they were sent: the client follows no redirect by itself,
and ``follow_redirects: same_host`` follows only those to the same scheme, host and port. A
reply is read as it arrives and dropped at ``max_reply_bytes``, so memory stays bounded.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urljoin, urlsplit

import orjson

from ...core import FieldPath
from ...errors import InputError, TargetError
from ...suites import BODY_REF, ENV_REF, HttpTargetSpec, env_names, env_url_problem
from ._base import AgentFailure, AgentRun, TargetRequest, request_payload
from ._reply import parse_json, raw_reader, reply_reader, size_text, visible
from ._timing import note_progress
from ._tries import Tries, origin, origin_text

if TYPE_CHECKING:
    import aiohttp

RETRY_STATUSES = frozenset((429, 502, 503, 504))
"""Statuses that say "try again later" (or come from a proxy whose agent is restarting)."""
REDIRECT_STATUSES = frozenset((301, 302, 303, 307, 308))
"""Statuses that send the request elsewhere (with a ``Location``)."""
MAX_REDIRECTS = 5
"""The most redirects one try follows (``follow_redirects: same_host``)."""
ERROR_BODY_READ = 4096
"""How much of an error status's body is read (its message quotes the start)."""
INSTALL_HINT = "the http target needs aiohttp: pip install 'checkweigh[http]'"


def _aiohttp() -> Any:
    # aiohttp, not httpx: on benchmarks/bench_http_target.py httpx spent 0.52 ms of CPU a
    # request and capped a 100 ms agent at ~580 cases/s at concurrency 64 by itself; aiohttp
    # spends 0.11 ms (and the judge providers already use it)
    try:
        import aiohttp
    except ImportError:
        raise TargetError(INSTALL_HINT) from None
    return aiohttp


def _resolve(text: str, field: str, environ: Mapping[str, str]) -> tuple[str, list[str]]:
    """``text`` with each ``${NAME}`` replaced from ``environ``, and the values used.

    Raises:
        TargetError: a variable is unset or empty (one line naming the suite field).
    """
    values = []
    for name in env_names(text):
        value = environ.get(name)
        if not value:
            state = "is not set" if value is None else "is empty"
            raise TargetError(
                f"{field}: environment variable {name} {state} (the suite reads it at run start)"
            )
        values.append(value)
    return ENV_REF.sub(lambda m: environ[m.group(1)], text), values


def shown_url(url: str) -> str:
    """``url`` for messages: no user, password or query (where tokens hide)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def retry_after_s(value: str | None, now: float | None = None) -> float | None:
    """A ``Retry-After`` header in seconds (it gives seconds or an HTTP date), or None."""
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value)) if value.replace(".", "", 1).isdigit() else _date(value, now)
    except (TypeError, ValueError, OverflowError):
        return None


def _date(value: str, now: float | None) -> float:
    when = parsedate_to_datetime(value).timestamp()
    return max(0.0, when - (time.time() if now is None else now))


class _Reply(NamedTuple):
    status: int
    reason: str | None
    body: bytes
    retry_after: str | None


class HttpTarget:
    """An agent behind an HTTP endpoint (the suite's ``target: {kind: http, ...}``)."""

    kind = "http"
    spec = HttpTargetSpec

    @classmethod
    def check(cls, spec: HttpTargetSpec, base: Path, *, load_agent: bool) -> None:
        """A URL taken from the environment is read now, as it will be when the run starts.

        Raises:
            InputError: the URL it makes is unusable.
        """
        problem = env_url_problem(spec.url, os.environ) if load_agent else None
        if problem is not None:
            raise InputError(problem, field="url")

    @classmethod
    def build(cls, spec: HttpTargetSpec, base: Path) -> HttpTarget:
        """The target ``spec`` describes (aiohttp is imported now, only for suites that use it).

        Raises:
            TargetError: aiohttp is missing, a variable is unset, the URL is unusable.
        """
        return cls(spec)

    def __init__(
        self,
        spec: HttpTargetSpec,
        *,
        environ: Mapping[str, str] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        """Read the URL and headers from the environment and get ready to send.

        Raises:
            TargetError: aiohttp is missing, a variable is unset, the URL it gives is unusable.
        """
        self._aiohttp = _aiohttp()
        env = os.environ if environ is None else environ
        self.config = spec
        self.url, _ = _resolve(spec.url, "target.url", env)
        problem = env_url_problem(spec.url, env)
        if problem is not None:  # the suite's loading checked it too, if it read this env
            raise TargetError(f"target.url: {problem}")
        self.where = shown_url(self.url)
        self.headers = {"content-type": "application/json", "accept": "application/json"}
        self._secrets: list[str] = []
        for name, template in spec.headers.items():
            value, used = _resolve(template, f"target.headers.{name}", env)
            self.headers[name] = value
            self._secrets += used
        self._read = reply_reader(spec.reply)
        self._raw = raw_reader(spec.reply)
        self._sleep = sleep
        self._jitter = jitter
        self._sessions: dict[asyncio.AbstractEventLoop, aiohttp.ClientSession] = {}

    def _session_here(self) -> aiohttp.ClientSession:
        """The connection pool of the running event loop (a pool cannot move between loops; a
        test helper may run each case in its own)."""
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            aiohttp = self._aiohttp
            session = aiohttp.ClientSession(
                # no cap here: the run's concurrency bounds the requests in flight
                connector=aiohttp.TCPConnector(limit=0, limit_per_host=0),
                timeout=aiohttp.ClientTimeout(total=self.config.request_timeout_s),
                # the endpoint is the user's agent, often on this machine: a proxy from the
                # environment would send 127.0.0.1 elsewhere
                trust_env=False,
                auto_decompress=True,
            )
            self._sessions = {
                loop: session,
                **{k: v for k, v in self._sessions.items() if not k.is_closed()},
            }
        return session

    def body(self, request: TargetRequest) -> Any:
        """The JSON sent for ``request``.

        Raises:
            AgentFailure: the body template reads a path the request does not have.
        """
        payload = request_payload(request)
        if self.config.body is None:
            return payload
        return _fill(self.config.body, payload)

    async def run(self, request: TargetRequest) -> AgentRun:
        """POST the case and read the reply, trying again on 429/502/503/504 and failed
        connections.

        Raises:
            AgentFailure: with a one-line reason.
        """
        content = orjson.dumps(self.body(request))
        session = self._session_here()
        aiohttp = self._aiohttp
        tries = Tries()
        note_progress("http", "")  # an earlier turn's tries are not this call's
        while True:
            try:
                reply = await self._post(session, content)
            except (
                aiohttp.ConnectionTimeoutError,
                aiohttp.ClientConnectorError,
                aiohttp.ServerDisconnectedError,
                aiohttp.ClientPayloadError,
                aiohttp.ClientOSError,
            ) as exc:
                reason = self._transport(exc)
                if tries.count >= self.config.retries:
                    raise AgentFailure(tries.said(f"{reason}: {self.where}")) from None
                tries.add(reason)
                await self._sleep(self._backoff(tries.count))
                continue
            except TimeoutError:
                raise AgentFailure(
                    tries.said(
                        f"http agent gave no reply within {self.config.request_timeout_s:g}s "
                        f"(request_timeout_s): {self.where}"
                    )
                ) from None
            except aiohttp.ClientError as exc:
                reason = f"http request failed ({self._clean(f'{type(exc).__name__}: {exc}')})"
                raise AgentFailure(tries.said(reason)) from None
            if 200 <= reply.status < 300:
                if self._raw is not None:
                    return self._raw(reply.body)
                return self._read(parse_json(reply.body))
            if reply.status in RETRY_STATUSES and tries.count < self.config.retries:
                wait, problem = self._wait(tries.count + 1, reply.retry_after)
                if problem is None:
                    tries.add(str(reply.status), reply.retry_after)
                    await self._sleep(wait)
                    continue
                raise AgentFailure(tries.said(f"{self._status(reply)} ({problem})"))
            raise AgentFailure(tries.said(self._status(reply)))

    async def _post(self, session: aiohttp.ClientSession, content: bytes) -> _Reply:
        """One try: the POST, and the redirects ``follow_redirects`` allows; the reply read up
        to ``max_reply_bytes`` (an error status's body only as far as a message quotes it).

        Raises:
            AgentFailure: a redirect that is not followed, or a reply over the cap.
        """
        url, method = self.url, "POST"
        data: bytes | None = content
        for _ in range(MAX_REDIRECTS + 1):
            # aiohttp would follow a redirect anywhere, with our headers: never let it
            async with session.request(
                method, url, data=data, headers=self.headers, allow_redirects=False
            ) as response:
                location = response.headers.get("location")
                if response.status in REDIRECT_STATUSES and location:
                    url = self._redirect(response.status, response.reason, url, location)
                    if response.status not in (307, 308):  # 301/302/303 mean "GET it there"
                        method, data = "GET", None
                    continue
                body = await self._body(response, ok=200 <= response.status < 300)
                retry_after = response.headers.get("retry-after")
                return _Reply(response.status, response.reason, body, retry_after)
        raise AgentFailure(f"http agent redirected more than {MAX_REDIRECTS} times ({self.where})")

    def _redirect(self, status: int, phrase: str | None, url: str, location: str) -> str:
        """Where a redirect from ``url`` leads, if it is followed.

        Raises:
            AgentFailure: it is not: naming the status and the other place's origin, never a
                header (nor the Location's path or query, where tokens hide).
        """
        target = urljoin(url, location)
        there = origin(target)
        if self.config.follow_redirects == "same_host" and there == origin(self.url):
            return target
        head = f"http agent answered {status}{f' {self._clean(phrase, 60)}' if phrase else ''}"
        shown = self._clean(origin_text(there), 120)
        if self.config.follow_redirects == "same_host":
            why = (
                f"a redirect to another host, {shown}, is not followed (follow_redirects: "
                f"same_host follows only {origin_text(origin(self.url))})"
            )
        else:
            why = (
                f"a redirect to {shown} is not followed (follow_redirects: never); point url "
                "at the final address, or set follow_redirects: same_host for one on the same "
                "host"
            )
        raise AgentFailure(f"{head} ({self.where}): {why}")

    async def _body(self, response: aiohttp.ClientResponse, *, ok: bool) -> bytes:
        """The reply's body, read as it comes: an answer (``ok``) longer than
        ``max_reply_bytes`` is the case's error; an error status's body is cut where a message
        stops quoting it.

        Raises:
            AgentFailure: an answer over ``max_reply_bytes``.
        """
        cap = self.config.max_reply_bytes
        limit = cap if ok else ERROR_BODY_READ
        length = response.content_length
        if ok and length is not None and length > cap:
            response.close()
            raise AgentFailure(self._too_big(f"its Content-Length is {length}"))
        body = bytearray()
        async for chunk in response.content.iter_chunked(2**16):
            if len(body) + len(chunk) > limit:
                response.close()  # the rest is never read: the connection is dropped
                if ok:
                    raise AgentFailure(self._too_big("the rest was not read"))
                body += chunk[: limit - len(body)]
                break
            body += chunk
        return bytes(body)

    def _too_big(self, detail: str) -> str:
        return (
            f"http reply is over {size_text(self.config.max_reply_bytes)} (max_reply_bytes; "
            f"{detail}): {self.where}"
        )

    async def aclose(self) -> None:
        """Close the connection pool of the running loop (those of closed loops are gone)."""
        sessions, self._sessions = self._sessions, {}
        loop = asyncio.get_running_loop()
        for owner, session in sessions.items():
            if owner is loop:
                await session.close()

    def _backoff(self, attempt: int) -> float:
        """The wait before try ``attempt + 1``: doubling from ``backoff_s``, at most
        ``max_wait_s``, times a random 0.5-1 (so cases that failed together retry apart)."""
        full = min(self.config.max_wait_s, self.config.backoff_s * 2 ** (attempt - 1))
        return float(full * (0.5 + self._jitter() / 2))

    def _wait(self, attempt: int, retry_after: str | None) -> tuple[float, str | None]:
        """The wait before the next try, or why there is none (a Retry-After too long)."""
        asked = retry_after_s(retry_after)
        if asked is None:
            return self._backoff(attempt), None
        if asked > self.config.max_wait_s:
            return 0.0, f"Retry-After {asked:g}s is over max_wait_s {self.config.max_wait_s:g}"
        return asked, None

    def _status(self, reply: _Reply) -> str:
        text = self._clean(reply.body[:400].decode("utf-8", "replace"))
        phrase = f" {self._clean(reply.reason, 60)}" if reply.reason else ""
        said = f": {text}" if text else ""
        return f"http agent answered {reply.status}{phrase} ({self.where}){said}"

    def _transport(self, exc: Exception) -> str:
        aiohttp = self._aiohttp
        if isinstance(exc, aiohttp.ConnectionTimeoutError):
            return "connection timed out"
        if isinstance(exc, aiohttp.ClientConnectorError):
            if isinstance(exc.os_error, ConnectionRefusedError):
                return "connection refused"
            return f"cannot connect ({self._clean(str(exc.os_error), 120)})"
        why = str(exc) or type(exc).__name__
        return f"connection dropped ({self._clean(why, 120)})"

    def _tries(self, text: str, attempt: int) -> str:
        return f"{text} (after {attempt} tries)" if attempt > 1 else text

    def _clean(self, text: str, limit: int = 200) -> str:
        """Untrusted text for a message: one line, no control characters, no secret."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return visible(text, limit)


def _fill(template: Any, payload: dict[str, Any]) -> Any:
    """``template`` with every ``{{path}}`` read from ``payload``: a string that is only a
    reference takes the value as it is (an object stays an object); within text, the value's
    text (JSON for anything but a string)."""
    if isinstance(template, dict):
        return {k: _fill(v, payload) for k, v in template.items()}
    if isinstance(template, list):
        return [_fill(v, payload) for v in template]
    if not isinstance(template, str) or "{{" not in template:
        return template
    whole = BODY_REF.fullmatch(template)
    if whole is not None:
        return _lookup(whole.group(1), payload)

    def text(match: Any) -> str:
        value = _lookup(match.group(1), payload)
        return value if isinstance(value, str) else orjson.dumps(value).decode()

    return BODY_REF.sub(text, template)


_MISSING = object()


def _lookup(path: str, payload: dict[str, Any]) -> Any:
    value = FieldPath.parse(path).get(payload, _MISSING)
    if value is _MISSING:
        raise AgentFailure(f"body: {{{{{path}}}}} has no value in this request")
    return value
