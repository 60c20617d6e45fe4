"""What the official provider SDKs have in common: their error classes (``APIStatusError``,
``APITimeoutError``, ``APIConnectionError``) and how a call is retried and reported."""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Any, TypeVar

from ._model import JudgeError
from ._retry import RetryPolicy, call_with_retries

T = TypeVar("T")


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
    """
    factory = getattr(sdk, "DefaultAioHttpClient", None)
    if factory is None:
        return None
    try:
        return factory()
    except RuntimeError:  # the SDK's stand-in when aiohttp is missing
        return None


def make_client(
    name: str,
    sdk: ModuleType,
    factory: Callable[..., T],
    base_error: type[Exception],
    **options: Any,
) -> T:
    """An async SDK client with the SDK's own retries off (ours apply), on the aiohttp
    transport where available."""
    http_client = aiohttp_client(sdk)
    if http_client is not None:
        options["http_client"] = http_client
    try:
        return factory(max_retries=0, **options)
    except base_error as exc:  # e.g. no key in the environment
        raise JudgeError(f"{name}: {exc}") from None


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


async def sdk_call(
    name: str, sdk: ModuleType, call: Callable[[], Awaitable[T]], policy: RetryPolicy
) -> T:
    """Run an SDK call with retries on 429, 5xx, timeouts and dropped connections.

    Raises:
        JudgeError: naming the judge and what went wrong, once retries are spent.
    """

    def retriable(exc: BaseException) -> bool:
        if isinstance(exc, sdk.APIStatusError):
            status: int = exc.status_code
            return status == 429 or status >= 500
        return isinstance(exc, sdk.APITimeoutError | sdk.APIConnectionError)

    try:
        return await call_with_retries(call, policy, retriable=retriable, retry_after=_retry_after)
    except sdk.APIStatusError as exc:
        raise JudgeError(f"{name}: HTTP {exc.status_code}: {exc.message}") from None
    except sdk.APITimeoutError:
        raise JudgeError(f"{name}: timed out") from None
    except sdk.APIError as exc:
        raise JudgeError(f"{name}: {type(exc).__name__}: {exc}") from None
    except ValueError as exc:  # a body that is not JSON (a proxy's error page, say)
        raise JudgeError(f"{name}: malformed response: {exc}") from None
