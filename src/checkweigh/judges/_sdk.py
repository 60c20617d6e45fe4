"""What the official provider SDKs have in common: their error classes (``APIStatusError``,
``APITimeoutError``, ``APIConnectionError``), which failures are retried, how ``Retry-After``
is read, and how a failure is reported (with the API key scrubbed out of the text).
"""

from __future__ import annotations

import errno
import importlib
import ipaddress
import math
import time
from collections.abc import Awaitable, Callable
from email.utils import parsedate_to_datetime
from types import ModuleType
from typing import Any, TypeVar
from urllib.parse import urlsplit

from ._model import JudgeError
from ._retry import AttemptTimeout, GaveUp, RetryPolicy, Slot, call_with_retries

T = TypeVar("T")

RETRIED_STATUSES = frozenset({408, 409, 429})
"""4xx statuses that may change on retry (with every 5xx); any other 4xx will not."""


BACKSTOP_S = 5.0
"""Added to the SDK client's own timeout: the per-attempt timeout of the retry loop (which
also respects the deadline) fires first and names its length; the SDK's is a backstop."""


MAX_TOKENS_PER_CALL = 10**9
"""More tokens than any call reads or writes: a larger count is junk from the server."""


def token_count(value: object) -> int:
    """A usage count reported by the server, or 0 when it is not a plausible one (missing,
    not a whole number, negative or absurdly large): accounting junk must neither error a
    valid answer nor overflow the stored totals."""
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return value if 0 <= value <= MAX_TOKENS_PER_CALL else 0


class FormatRejected(JudgeError):
    """The server refused the structured-output format asked for (the caller moves down)."""


MIN_SECRET = 8
"""The shortest key that is scrubbed from texts (real keys are far longer)."""


def scrub(text: str, secret: str | None) -> str:
    """``text`` with ``secret`` (an API key) replaced by ``***``: the one place every judge
    error text passes through before it is stored or printed. Keys shorter than 8
    characters are placeholders, not secrets (Ollama's ``ollama``, which would otherwise
    turn ``ollama:llama3`` into ``***:llama3``)."""
    if secret and len(secret) >= MIN_SECRET and secret in text:
        return text.replace(secret, "***")
    return text


def judge_error(
    name: str, text: str, secret: str | None, kind: type[JudgeError] = JudgeError
) -> JudgeError:
    """A :class:`JudgeError` naming the judge, on one line, with the key scrubbed out."""
    return kind(scrub(" ".join(f"{name}: {text}".split()), secret))


def is_loopback(url: str) -> bool:
    """Whether ``url`` names this machine (127.0.0.0/8, ::1 or localhost)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_key(name: str, key: str | None, variable: str) -> None:
    """Refuse an API key that cannot go in an HTTP header (a trailing newline from a secrets
    file, a control or non-ASCII character): the SDKs take it and fail on every call with
    an error about header injection. The key itself is never shown.

    Raises:
        JudgeError: naming the judge and the variable to fix.
    """
    if key is not None and not (key.isascii() and key.isprintable()):
        raise JudgeError(
            f"{name}: the API key holds a control or non-ASCII character (a trailing "
            f"newline?); fix {variable}"
        )


def check_base_url(name: str, url: str, variable: str) -> None:
    """Refuse a base URL the client cannot use: not ``http(s)://host...`` (the SDKs take
    ``not a url`` or ``ftp://...`` and fail on every call), or with a user and password in
    it (the key goes in the environment; the password is not echoed).

    Raises:
        JudgeError: naming the judge, the variable to fix and what was expected.
    """
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        shown = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
        raise JudgeError(
            f"{name}: the base URL {shown!r} holds a user name or password; "
            f"set {variable} without them (the key goes in the API key variable)"
        )
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise JudgeError(
            f"{name}: expected an http:// or https:// base URL with a host "
            f"(check {variable}), got {url.rstrip('/')!r}"
        )


def load_sdk(package: str) -> ModuleType:
    """Import an optional provider SDK, or say how to install it."""
    try:
        return importlib.import_module(package)
    except ImportError as exc:
        raise JudgeError(
            f"the {package} package is not installed: pip install 'checkweigh[{package}]'"
        ) from exc


def aiohttp_client(sdk: ModuleType) -> Any | None:
    """The SDK's aiohttp transport (``DefaultAioHttpClient``) when the SDK has one and
    ``aiohttp`` is installed, else None (the SDK's default httpx transport).

    The SDKs recommend it for concurrency: httpx's connection pool scans every connection
    on each request, which at 64 calls in flight costs a quarter of the client's CPU.
    Redirects are not followed (see :func:`http_client`).
    """
    factory = getattr(sdk, "DefaultAioHttpClient", None)
    if factory is None:
        return None
    try:
        return factory(follow_redirects=False)
    except RuntimeError:  # the SDK's stand-in when aiohttp is missing
        return None


def http_client(sdk: ModuleType) -> Any | None:
    """The HTTP client for the SDK: its aiohttp transport where available, else its default
    httpx client; None for an SDK that has neither (it builds its own).

    Neither follows redirects, which the SDKs do by default: a judge endpoint that
    redirects is misconfigured, and following it could carry the prompt (the agent's
    traces) to a host the user never named. A 3xx ends the call with the target named.
    """
    client = aiohttp_client(sdk)
    if client is not None:
        return client
    factory = getattr(sdk, "DefaultAsyncHttpxClient", None)
    return factory(follow_redirects=False) if factory is not None else None


def make_client(
    name: str,
    sdk: ModuleType,
    factory: Callable[..., T],
    base_error: type[Exception],
    **options: Any,
) -> T:
    """An async SDK client with the SDK's own retries off (ours apply), on the aiohttp
    transport where available."""
    client = http_client(sdk)
    if client is not None:
        options["http_client"] = client
    try:
        return factory(max_retries=0, **options)
    except base_error as exc:  # e.g. no key in the environment
        raise judge_error(name, str(exc), options.get("api_key")) from None


def retry_after(exc: BaseException, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait: ``retry-after-ms`` (OpenAI), else ``Retry-After``
    as seconds or as an HTTP date; None when absent, unreadable or not a finite number."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # no zone (or "-0000"): not an HTTP date, which is in GMT
        return None
    return when.timestamp() - (time.time() if now is None else now)


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) else None


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _connection_failure(exc: BaseException) -> str | None:
    """How a dropped connection reads, or None if the failure was really a timeout.

    The openai SDK's aiohttp transport maps every ``aiohttp.ClientConnectionError`` (a reset,
    a server that hung up) to ``httpx.ConnectTimeout``, so its ``APITimeoutError`` is checked
    for the real cause underneath.
    """
    chain = _chain(exc)
    if any(_is_reset(e) for e in chain):
        return "connection reset"
    if refused(exc):
        return "connection refused: nothing listens at the base URL (is the server running?)"
    if any(isinstance(e, TimeoutError) for e in chain[1:]):
        return None
    dropped = [e for e in chain[1:] if isinstance(e, OSError) or _is_aiohttp_connection(e)]
    if dropped:
        return f"connection error: {_detail(dropped[-1])}"
    return None


def _detail(exc: BaseException) -> str:
    """What an exception says, or its type when it says nothing useful (aiohttp's
    ``ServerDisconnectedError`` prints the repr of the half-read response, and its payload
    errors put their own status 400 before the ``message``)."""
    message = getattr(exc, "message", None)
    text = message if isinstance(message, str) and message else str(exc)
    text = text.strip()
    return type(exc).__name__ if not text or text.startswith("<") else text


def refused(exc: BaseException) -> bool:
    """Whether the connection was refused: no server listens at that address. Not retried,
    so that a judge pointed at a stopped local server fails each check at once instead of
    retrying it until the deadline."""
    return any(
        isinstance(e, ConnectionRefusedError) or getattr(e, "errno", None) == errno.ECONNREFUSED
        for e in _chain(exc)
    )


def _is_reset(exc: BaseException) -> bool:
    return isinstance(exc, ConnectionResetError) or getattr(exc, "errno", None) == errno.ECONNRESET


def _is_aiohttp_connection(exc: BaseException) -> bool:
    return any(
        c.__module__.startswith("aiohttp") and c.__name__ == "ClientConnectionError"
        for c in type(exc).__mro__
    )


def describe(sdk: ModuleType, exc: BaseException) -> str:
    """One line saying what went wrong with a call (before the judge's name is added)."""
    if isinstance(exc, AttemptTimeout):
        return str(exc)
    if isinstance(exc, sdk.APIStatusError) and 300 <= exc.status_code < 400:
        target = exc.response.headers.get("location", "")
        return (
            f"HTTP {exc.status_code}: the server redirects to {target!r}; redirects are not "
            "followed: point the base URL at the final address"
        )
    if isinstance(exc, sdk.APIStatusError):
        return f"HTTP {exc.status_code}: {exc.message}"
    if isinstance(exc, sdk.APITimeoutError | sdk.APIConnectionError):
        dropped = _connection_failure(exc)
        if dropped is not None:
            return dropped
        if isinstance(exc, sdk.APITimeoutError):
            return "timed out"
        root = _chain(exc)[-1]
        return f"connection error: {_detail(root)}"
    if isinstance(exc, ValueError):  # a body that is not JSON (a proxy's error page, say)
        return f"malformed response: {exc}"
    if isinstance(exc, RecursionError):  # a body nested deeper than the SDK's parser goes
        return "malformed response: JSON nested too deeply"
    if type(exc).__module__.startswith("aiohttp") and hasattr(exc, "message"):
        # a response aiohttp could not parse (a broken chunked encoding, say): its status
        # is aiohttp's own 400, not the server's
        return f"malformed response: {exc.message}"
    return f"{type(exc).__name__}: {exc}"


def retriable_status(status: int) -> bool:
    """Whether an HTTP status may change on retry: 408, 409, 429 and every 5xx."""
    return status in RETRIED_STATUSES or status >= 500


async def sdk_call(
    name: str,
    sdk: ModuleType,
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    secret: str | None = None,
    slot: Slot | None = None,
    final: Callable[[BaseException], bool] | None = None,
) -> T:
    """Run an SDK call with retries on 408, 409, 429, 5xx, timeouts and dropped connections
    (a refused connection is final: see :func:`refused`).

    ``final`` marks further failures that retrying will not change; they raise
    :class:`FormatRejected` (the caller's cue to ask differently).

    Raises:
        JudgeError: naming the judge and what went wrong, key scrubbed, once retries are spent.
    """

    def retriable(exc: BaseException) -> bool:
        if final is not None and final(exc):
            return False
        if isinstance(exc, sdk.APIStatusError):
            return retriable_status(exc.status_code)
        if isinstance(exc, sdk.APITimeoutError | sdk.APIConnectionError):
            return not refused(exc)
        return False

    try:
        return await call_with_retries(
            call, policy, retriable=retriable, retry_after=retry_after, slot=slot
        )
    except GaveUp as stop:
        text = describe(sdk, stop.last)
        if final is not None and final(stop.last):
            raise judge_error(name, text, secret, FormatRejected) from None
        if stop.why == "deadline" and isinstance(stop.last, AttemptTimeout):
            text = (
                f"timed out after {stop.elapsed_s:.1f} s ({stop.attempts} attempt(s), "
                f"deadline {policy.deadline_s:g} s)"
            )
        elif stop.why == "deadline":
            text += (
                f" (gave up after {stop.attempts} attempt(s) in {stop.elapsed_s:.1f} s: "
                f"deadline {policy.deadline_s:g} s)"
            )
        elif stop.why == "attempts" and stop.attempts > 1:
            text += f" (after {stop.attempts} attempts in {stop.elapsed_s:.1f} s)"
        raise judge_error(name, text, secret) from None
