"""Judges behind the OpenAI chat-completions API: OpenAI, Azure, vLLM, llama.cpp, LM Studio,
Ollama. Uses the official ``openai`` SDK (install ``checkweigh[openai]``).

The key and base URL come from the SDK's own environment variables (``OPENAI_API_KEY``,
``OPENAI_BASE_URL``) or are passed in; they are never written anywhere.
"""

from __future__ import annotations

import time
from typing import Any

import orjson

from ._model import JudgeError, JudgeReply, JudgeRequest
from ._retry import RetryPolicy
from ._sdk import load_sdk, make_client, sdk_call

OLLAMA_BASE_URL = "http://localhost:11434/v1"


class OpenAIJudge:
    """A judge served over the chat-completions wire format.

    ``structured`` asks for ``response_format: json_schema`` when the request carries a
    schema; turn it off for servers that do not support it (the answer is still parsed
    strictly). The SDK's own retries are off: :class:`RetryPolicy` governs them, so 429s
    and 5xx wait for ``Retry-After`` or back off with jitter.
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
    ) -> None:
        self._openai = load_sdk("openai")
        self._client = make_client(
            f"{provider}:{model}",
            self._openai,
            self._openai.AsyncOpenAI,
            self._openai.OpenAIError,
            api_key=api_key,
            base_url=base_url,
            timeout=timeout_s,
        )
        self._model = model
        self._provider = provider
        self._retry = retry or RetryPolicy()
        self._structured = structured

    @property
    def name(self) -> str:
        """``provider:model``."""
        return f"{self._provider}:{self._model}"

    def _params(self, request: JudgeRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self._model,
            "messages": [m.model_dump() for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if self._structured and request.json_schema is not None:
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": request.schema_name,
                    "schema": request.json_schema,
                    "strict": True,
                },
            }
        return params

    async def aclose(self) -> None:
        """Close the HTTP client (its connections belong to the running event loop)."""
        await self._client.close()

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """One answer, with retries; :class:`JudgeError` when it cannot be had."""
        params = self._params(request)
        start = time.perf_counter()
        # The SDK's client (base URL, auth, timeouts, error types) posts a plain JSON body
        # and hands back the raw bytes, parsed here: its typed-parameter transform walks
        # every node of the schema and its response models build far more than the four
        # fields a judge reads, and together they cost more CPU than the call's own work.
        raw: bytes = await sdk_call(
            self.name,
            self._openai,
            lambda: self._client.post("/chat/completions", body=params, cast_to=bytes),
            self._retry,
        )
        elapsed = (time.perf_counter() - start) * 1000.0
        try:
            body = orjson.loads(raw)
            message = body["choices"][0]["message"]
            usage = body.get("usage") or {}
            text = message.get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise JudgeError(f"{self.name}: malformed response: {raw[:200]!r}") from None
        return JudgeReply(
            text=text,
            model=body.get("model") or self._model,
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
            latency_ms=elapsed,
        )
