"""Judges behind the OpenAI chat-completions API: OpenAI, Azure, vLLM, llama.cpp, LM Studio,
Ollama. Uses the official ``openai`` SDK (install ``checkweigh[openai]``).

The key and base URL come from the SDK's own environment variables (``OPENAI_API_KEY``,
``OPENAI_BASE_URL``) or are passed in; they are never written anywhere.

Structured output is negotiated once per judge and shared by all its calls: ``json_schema``
first, then ``json_object`` with the schema (what llama.cpp's and llama-cpp-python's servers
constrain with a grammar), then a plain prompt that describes the schema. A 400, 422 or 500
whose body names the format moves down the chain at once instead of being retried.
"""

from __future__ import annotations

import json
import time
from typing import Any

import orjson

from .._text import NOT_JSON, json_with_surrogates
from ._batch_api import BatchBackend
from ._model import JudgeError, JudgeReply, JudgeRequest, Message
from ._options import JudgeFormat
from ._pacing import watched
from ._prompt_cache import openai_usage
from ._retry import RetryPolicy, Slot, with_timeout
from ._sdk import (
    BACKSTOP_S,
    FormatRejected,
    check_base_url,
    check_key,
    is_loopback,
    judge_error,
    load_sdk,
    make_client,
    scrub,
    sdk_call,
    token_count,
)

OLLAMA_BASE_URL = "http://localhost:11434/v1"

CHAIN: tuple[JudgeFormat, ...] = ("json_schema", "json_object", "prompt")
"""The structured-output formats, most constrained first."""

_FORMAT_WORDS = ("response_format", "response format", "json_schema", "json_object")
_FORMAT_STATUSES = frozenset({400, 422, 500})


def describe_schema(request: JudgeRequest) -> JudgeRequest:
    """``request`` with its JSON schema spelled out in the system message, for servers that
    get no (or only a loose) schema on the wire."""
    if request.json_schema is None:
        return request
    schema = json.dumps(request.json_schema, separators=(",", ":"))
    note = f"Your reply must be one JSON object that validates against this JSON schema: {schema}"
    messages = list(request.messages)
    if messages and messages[0].role == "system":
        messages[0] = Message(role="system", content=f"{messages[0].content}\n\n{note}")
    else:
        messages.insert(0, Message(role="system", content=note))
    return request.model_copy(update={"messages": tuple(messages)})


class OpenAIJudge:
    """A judge served over the chat-completions wire format.

    ``format`` is ``auto`` (negotiated, see the module) or one of ``json_schema``,
    ``json_object``, ``prompt`` (forced). The SDK's own retries are off: ``retry`` governs
    them, so 429s and 5xx wait for ``Retry-After`` or back off with jitter.
    """

    def __init__(
        self,
        model: str,
        *,
        provider: str = "openai",
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        retry: RetryPolicy | None = None,
        structured: bool = True,
        format: JudgeFormat = "auto",
    ) -> None:
        self._openai = load_sdk("openai")
        self._response: Any = load_sdk("httpx").Response  # the SDK's own transport types
        self._client = make_client(
            f"{provider}:{model}",
            self._openai,
            self._openai.AsyncOpenAI,
            self._openai.OpenAIError,
            api_key=api_key,
            base_url=base_url,
            timeout=timeout_s + BACKSTOP_S,
        )
        self._secret: str | None = getattr(self._client, "api_key", None) or api_key
        check_key(f"{provider}:{model}", self._secret, "OPENAI_API_KEY")
        variable = "OLLAMA_BASE_URL" if provider == "ollama" else "OPENAI_BASE_URL"
        check_base_url(f"{provider}:{model}", str(self._client.base_url), variable)
        self._model = model
        self._provider = provider
        self._retry = with_timeout(retry or RetryPolicy(), timeout_s)
        self._asked: JudgeFormat = format if structured else "prompt"
        self._format: JudgeFormat = "json_schema" if self._asked == "auto" else self._asked
        self._settled = self._asked != "auto"
        self._rejected: list[str] = []

    @property
    def name(self) -> str:
        """``provider:model``."""
        return f"{self._provider}:{self._model}"

    @property
    def local(self) -> bool:
        """Whether the server runs on this machine (a loopback base URL)."""
        return is_loopback(str(self._client.base_url))

    @property
    def base_url(self) -> str:
        """Where the calls go."""
        return str(self._client.base_url)

    @property
    def output_format(self) -> JudgeFormat:
        """The structured-output format in use (the negotiated one, once a call succeeded)."""
        return self._format

    def format_note(self) -> str | None:
        """What the run's report says about the output format, once it is known."""
        if self._asked != "auto":
            return f"judge output format: {self._format} (forced)"
        if not self._settled:
            return None
        how = f"the server rejected {', '.join(self._rejected)}" if self._rejected else "accepted"
        return f"judge output format: {self._format} (negotiated: {how})"

    def _params(self, request: JudgeRequest, fmt: JudgeFormat) -> dict[str, Any]:
        if fmt != "json_schema":
            request = describe_schema(request)
        params: dict[str, Any] = {
            "model": self._model,
            "messages": [m.model_dump() for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.json_schema is None:
            return params
        if fmt == "json_schema":
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": request.schema_name,
                    "schema": request.json_schema,
                    "strict": True,
                },
            }
        elif fmt == "json_object":
            params["response_format"] = {"type": "json_object", "schema": request.json_schema}
        return params

    def _names_format(self, exc: BaseException) -> bool:
        """A refusal of the format itself: retrying the same request will not help."""
        if not isinstance(exc, self._openai.APIStatusError):
            return False
        if exc.status_code not in _FORMAT_STATUSES:
            return False
        text = f"{exc.message} {exc.body!r}".lower()
        return any(word in text for word in _FORMAT_WORDS)

    def _move_down(self, rejected: JudgeFormat) -> bool:
        """Step below ``rejected`` (if no other call did already); False at the end of the
        chain or when the format was forced."""
        if self._asked != "auto" or rejected == "prompt":
            return False
        if self._format == rejected:  # calls in flight may all see the same refusal
            self._rejected.append(rejected)
            self._format = CHAIN[CHAIN.index(rejected) + 1]
        return True

    def batch_backend(self) -> BatchBackend | None:
        """This judge's calls through OpenAI's Batch API (half the price, answered within
        24 hours), in the output format in use; None for Ollama, which serves only the
        chat-completions API (another server without a Batch API answers the upload 404)."""
        if self._provider == "ollama":
            return None
        from ._openai_batch import OpenAIBatch  # loaded only when a run asks for batches

        return OpenAIBatch(self)

    async def aclose(self) -> None:
        """Close the HTTP client (its connections belong to the running event loop)."""
        await self._client.close()

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """One answer, with retries; :class:`JudgeError` when it cannot be had."""
        return await self.complete_slotted(request, None)

    async def complete_slotted(self, request: JudgeRequest, slot: Slot | None) -> JudgeReply:
        """:meth:`complete`, holding ``slot`` only while an attempt is in flight."""
        final = self._names_format if request.json_schema is not None else None
        sent: list[JudgeFormat] = []
        started: list[float] = []  # the first attempt's start: waiting for a slot is not latency

        # The SDK's client (base URL, auth, timeouts, error types) posts a plain JSON body
        # and hands back the raw bytes, parsed here: its typed-parameter transform walks
        # every node of the schema and its response models build far more than the four
        # fields a judge reads, and together they cost more CPU than the call's own work.
        async def post() -> bytes:
            # the format is read when the attempt starts (it holds a slot by then), so calls
            # that queued behind the first refusal already ask in the format it settled on
            started.append(time.perf_counter())
            fmt = self._format
            sent.append(fmt)
            body = self._params(request, fmt)
            # the raw response, for its rate-limit headers (seen by an adaptive slot)
            response = await watched(
                slot,
                lambda: self._client.post("/chat/completions", body=body, cast_to=self._response),
                lambda answer: answer.headers,
            )
            raw: bytes = response.content
            return raw

        while True:
            try:
                raw = await sdk_call(
                    self.name,
                    self._openai,
                    post,
                    self._retry,
                    secret=self._secret,
                    slot=slot,
                    final=final,
                )
            except FormatRejected as exc:
                if not self._move_down(sent[-1]):
                    hint = "" if self._asked == "auto" else "; try --judge-format auto"
                    raise JudgeError(f"{exc}{hint}") from None
                continue
            break
        if request.json_schema is not None:
            self._settled = True
        return self._reply(raw, (time.perf_counter() - started[0]) * 1000.0)

    def _reply(self, raw: bytes, elapsed_ms: float) -> JudgeReply:
        try:
            body = _loads(raw)
            message = body["choices"][0]["message"]
            text = message.get("content") or _tool_arguments(message)
            if not isinstance(text, str):
                raise TypeError("content is not a string")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
            raise judge_error(self.name, _unreadable(raw), self._secret) from None
        refusal = message.get("refusal")
        if not text and isinstance(refusal, str) and refusal:
            raise judge_error(self.name, f"the model refused to answer: {refusal}", self._secret)
        # the accounting is read leniently: junk there does not make a valid answer invalid
        usage = body.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        model = body.get("model")
        return JudgeReply(
            text=scrub(text, self._secret),
            model=model if isinstance(model, str) and model else self._model,
            output_tokens=token_count(usage.get("completion_tokens")),
            latency_ms=elapsed_ms,
            **openai_usage(usage),
        )


def _loads(raw: bytes) -> Any:
    """The response's JSON; one orjson refuses for an escaped lone surrogate (``"\\ud800"``,
    valid JSON) is read again, made storable (see ``checkweigh._text``).

    Raises:
        ValueError: the body is not JSON.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        body = json_with_surrogates(raw)
        if body is NOT_JSON:
            raise
        return body


def _tool_arguments(message: dict[str, Any]) -> str:
    """The arguments of the first tool call, for servers that answer a schema with a tool
    call instead of content (they are parsed and validated like content); else ``""``."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list) or not calls or not isinstance(calls[0], dict):
        return ""
    function = calls[0].get("function")
    arguments = function.get("arguments") if isinstance(function, dict) else None
    return arguments if isinstance(arguments, str) else ""


def _unreadable(raw: bytes) -> str:
    """Why a 200 body holds no answer: an error object (a proxy that wraps an upstream error
    in a 200), else the start of the body."""
    try:
        body = orjson.loads(raw)
    except (ValueError, RecursionError):
        body = None
    if isinstance(body, dict) and "choices" not in body and body.get("error"):
        error = body["error"]
        text = error.get("message") if isinstance(error, dict) else None
        return f"the server answered 200 with an error: {str(text or error)[:200]}"
    return f"malformed response: {raw[:200]!r}"
