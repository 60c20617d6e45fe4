"""Calls logged with their response (``{request, response}``, as logging proxies write them):
the request's conversation and the response's reply as one record, and an API error told
apart from a reply."""

from __future__ import annotations

from typing import Any

from pydantic_core import to_json


def request_and_response(record: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A call logged as ``{request: {messages, ...}, response: {...}}`` (as logging proxies
    write it) as one conversation object: the request's messages then the response's reply
    (an OpenAI response's first choice, or an Anthropic response message) carrying the
    response's ``model`` and ``usage``; and the error when the response is an API error
    (then there is no reply). Anything else is returned as it is."""
    request, response = record.get("request"), record.get("response")
    if "messages" in record or not isinstance(request, dict):
        return record, None
    merged = {k: v for k, v in record.items() if k not in ("request", "response")}
    merged.update(request_settings(request, response, merged))
    error = api_error(response)
    if error is None and response is None and record.get("error"):
        error = api_error({"error": merged.pop("error")})
    messages = request.get("messages")
    if error is None and isinstance(response, dict) and isinstance(messages, list):
        merged["messages"] = [*messages, *reply_of(response)]
    return merged, error


def request_settings(
    request: dict[str, Any], response: Any, merged: dict[str, Any]
) -> dict[str, Any]:
    """A logged request's keys that the record does not have. The model it asked for is
    the response's to tell (on the reply's steps); without one it is kept as
    ``requested_model`` (in the metadata), never given to an earlier reply."""
    settings = {k: v for k, v in request.items() if k not in merged and k != "model"}
    if "model" in request and not (isinstance(response, dict) and "model" in response):
        settings["requested_model"] = request["model"]
    return settings


def api_error(response: Any) -> str | None:
    """The error a logged API response holds, as one line (``HTTP 429 rate_limit_error:
    ...``): an ``error`` that holds something (OpenAI's and Anthropic's error bodies, a
    failed Responses API response), or an HTTP status of 400 or more; None for a reply."""
    if not isinstance(response, dict):
        return None
    body = response.get("body")
    found = response.get("error")
    if found in (None, False, "", {}) and isinstance(body, dict):
        found = body.get("error")
    status = response.get("status_code", response.get("status"))
    failed = type(status) is int and status >= 400
    if found in (None, False, "", {}) and not failed:
        return None
    head = [f"HTTP {status}"] if failed else []
    message: Any = found
    if isinstance(found, dict):
        kind = found.get("type") or found.get("code")
        if isinstance(kind, str) and kind:
            head.append(kind)
        message = found.get("message")
    text = message if isinstance(message, str) else ""
    if not text and found not in (None, False, "", {}) and not isinstance(found, dict):
        text = found if isinstance(found, str) else to_json(found).decode()
    label = " ".join(head) or "error"
    return " ".join(f"API error ({label}): {text or 'no message'}".split())


def reply_of(response: dict[str, Any]) -> list[Any]:
    """The reply in a response, with the response's ``model`` and ``usage`` (so they go to
    the reply's own steps, once): an OpenAI completion's first choice's message, else the
    response itself when it is a message (Anthropic)."""
    choices = response.get("choices")
    if isinstance(choices, list):
        first = choices[0] if choices else None
        message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):
            return [] if message is None else [message]
        extra = {k: response[k] for k in ("model", "usage") if k in response}
        return [{**message, **extra}]
    return [response] if "role" in response else []


def responses_request_and_response(record: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A call logged as ``{request: {input, instructions, ...}, response: {output, ...}}``
    as one object: the request's input and instructions, the response's output, model and
    usage, the request's other settings (``tools``, ``temperature``...) kept; and the error
    when the response is an API error (a failed response, or an error body)."""
    request, response = record["request"], record.get("response")
    merged = {k: v for k, v in record.items() if k not in ("request", "response")}
    merged.update(request_settings(request, response, merged))
    error = api_error(response)
    if error is None and response is None and record.get("error"):
        error = api_error({"error": merged.pop("error")})
    if error is None and isinstance(response, dict):
        for key in ("output", "model", "usage"):
            if key in response:
                merged[key] = response[key]
    merged.setdefault("input", None)
    return merged, error
