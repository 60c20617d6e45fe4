"""Judges behind Anthropic's Messages API, with the official ``anthropic`` SDK (install
``checkweigh[anthropic]``). The key comes from ``ANTHROPIC_API_KEY`` (or is passed in) and is
never written anywhere.

Structured output: when the request carries a schema, the answer is asked for as a forced
call of a tool whose input schema is that schema; the tool input is the answer.

Prompt caching: the prompt's shared prefix (the system message and the instructions before
the case) is marked ``cache_control: ephemeral`` (see ``_prompt_cache``).
"""

from __future__ import annotations

import inspect
import json
import time
from typing import Any

from ._batch_api import BatchBackend
from ._model import JudgeReply, JudgeRequest
from ._openai import describe_schema
from ._options import JudgeFormat
from ._pacing import watched
from ._prompt_cache import anthropic_usage, cache_marked
from ._retry import RetryPolicy, Slot, with_timeout
from ._sdk import (
    BACKSTOP_S,
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


class AnthropicJudge:
    """A judge served by the Messages API. SDK retries are off; :class:`RetryPolicy` rules.

    ``format``: ``auto`` and ``json_schema`` ask for the answer as a forced tool call (the
    Messages API's structured output); ``prompt`` describes the schema in the system prompt.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        retry: RetryPolicy | None = None,
        structured: bool = True,
        format: JudgeFormat = "auto",
    ) -> None:
        if format == "json_object":
            raise judge_error(
                f"anthropic:{model}",
                "format json_object is OpenAI's; use auto, json_schema or prompt",
                None,
            )
        self._anthropic = load_sdk("anthropic")
        self._client = make_client(
            f"anthropic:{model}",
            self._anthropic,
            self._anthropic.AsyncAnthropic,
            self._anthropic.AnthropicError,
            api_key=api_key,
            base_url=base_url,
            timeout=timeout_s + BACKSTOP_S,
        )
        token = getattr(self._client, "auth_token", None)
        self._secret: str | None = getattr(self._client, "api_key", None) or token or api_key
        if self._secret is None and getattr(self._client, "credentials", None) is None:
            # the SDK builds a client without any credential and fails on every call instead
            raise judge_error(
                f"anthropic:{model}",
                "no API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)",
                None,
            )
        variable = (
            "ANTHROPIC_API_KEY"
            if getattr(self._client, "api_key", None)
            else ("ANTHROPIC_AUTH_TOKEN")
        )
        check_key(f"anthropic:{model}", self._secret, variable)
        check_base_url(f"anthropic:{model}", str(self._client.base_url), "ANTHROPIC_BASE_URL")
        self._model = model
        self._retry = with_timeout(retry or RetryPolicy(), timeout_s)
        self._structured = structured and format != "prompt"
        self._format: JudgeFormat = "json_schema" if self._structured else "prompt"
        # newer SDKs dropped ``temperature`` from messages.create; send it where it exists
        parameters = inspect.signature(self._client.messages.create).parameters
        self._takes_temperature = "temperature" in parameters

    @property
    def name(self) -> str:
        """``anthropic:model``."""
        return f"anthropic:{self._model}"

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
        """``json_schema`` (a forced tool call) or ``prompt``."""
        return self._format

    def format_note(self) -> str:
        """What the run's report says about the output format."""
        how = "a forced tool call" if self._structured else "the schema in the prompt"
        return f"judge output format: {self._format} ({how})"

    def _params(self, request: JudgeRequest) -> dict[str, Any]:
        if not self._structured:
            request = describe_schema(request)
        system, messages = cache_marked(request)
        params: dict[str, Any] = {
            "model": self._model,
            "max_tokens": request.max_tokens,
            "messages": messages,
        }
        if system:
            params["system"] = system
        if self._takes_temperature:
            params["temperature"] = request.temperature
        if self._structured and request.json_schema is not None:
            params["tools"] = [
                {
                    "name": request.schema_name,
                    "description": "Record the answer.",
                    "input_schema": request.json_schema,
                }
            ]
            params["tool_choice"] = {"type": "tool", "name": request.schema_name}
        return params

    def batch_backend(self) -> BatchBackend:
        """This judge's calls through Anthropic's Message Batches (half the price, answered
        within 24 hours)."""
        from ._anthropic_batch import AnthropicBatch  # loaded only when a run asks for batches

        return AnthropicBatch(self)

    async def aclose(self) -> None:
        """Close the HTTP client (its connections belong to the running event loop)."""
        await self._client.close()

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """One answer, with retries; :class:`JudgeError` when it cannot be had."""
        return await self.complete_slotted(request, None)

    async def complete_slotted(self, request: JudgeRequest, slot: Slot | None) -> JudgeReply:
        """:meth:`complete`, holding ``slot`` only while an attempt is in flight."""
        params = self._params(request)
        started: list[float] = []  # the first attempt's start: waiting for a slot is not latency

        async def create() -> Any:
            started.append(time.perf_counter())
            # the raw response, for its rate-limit headers (seen by an adaptive slot)
            raw = await watched(
                slot,
                lambda: self._client.messages.with_raw_response.create(**params),
                lambda answer: answer.headers,
            )
            return await raw.parse()

        message = await sdk_call(
            self.name, self._anthropic, create, self._retry, secret=self._secret, slot=slot
        )
        return self._reply(message, (time.perf_counter() - started[0]) * 1000.0)

    def _reply(self, message: Any, elapsed: float) -> JudgeReply:
        """The answer a Messages-API response holds (a call's, or a batch item's)."""
        if not isinstance(message, self._anthropic.types.Message):
            # the SDK hands back whatever JSON came (null, a list, a string) unvalidated
            shown = repr(message)[:200]
            raise judge_error(self.name, f"malformed response: {shown}", self._secret)
        text = _answer_text(message.content)
        if message.stop_reason == "refusal":  # what it wrote before stopping is no answer
            said = f": {text[:200]}" if text else ""
            raise judge_error(self.name, f"the model refused to answer{said}", self._secret)
        if text is None:
            raise judge_error(self.name, "the response holds no answer", self._secret)
        # the accounting is read leniently: junk there does not make a valid answer invalid
        usage = getattr(message, "usage", None)
        model = getattr(message, "model", None)
        return JudgeReply(
            text=scrub(text, self._secret),
            model=model if isinstance(model, str) and model else self._model,
            output_tokens=token_count(getattr(usage, "output_tokens", None)),
            latency_ms=elapsed,
            **anthropic_usage(usage),
        )


def _answer_text(blocks: Any) -> str | None:
    """The tool input (as JSON, or as given when it is a string) if the model called the
    answer tool, else the text blocks."""
    texts: list[str] = []
    for block in blocks or ():
        kind = getattr(block, "type", None)
        if kind == "tool_use":
            given = getattr(block, "input", None)
            # some proxies pass the input on as a JSON string: parsed strictly like text
            return given if isinstance(given, str) else json.dumps(given)
        if kind == "text":
            texts.append(getattr(block, "text", ""))
    return "".join(texts) if texts else None
