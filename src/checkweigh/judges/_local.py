"""Which inference server answers at a loopback base URL, when it is one that decodes one request
at a time (llama-cpp-python, llama.cpp's server, Ollama, LM Studio).

Such a server queues every call beyond its one or two slots, so a judge pool sized for a provider
would only push the queued calls into their timeout. Anything else on this machine (a proxy in
front of a provider, vLLM, a test double) is treated like a provider. The probe is two GETs with
a short timeout, made once when the judge is built and only for a loopback base URL.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.error import URLError
from urllib.parse import urlsplit, urlunsplit
from urllib.request import HTTPRedirectHandler, Request, build_opener

PROBE_TIMEOUT_S = 1.0
"""How long each probe may take: a server on this machine answers in milliseconds."""

_OWNERS = {
    "me": "llama-cpp-python",
    "llamacpp": "llama.cpp server",
    "organization_owner": "LM Studio",
}
"""``owned_by`` of the models an OpenAI-compatible ``GET /models`` lists, by server."""


class _NoRedirect(HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a probe goes nowhere but the loopback address it was given


def _get_json(url: str) -> Any:
    """The JSON body of ``GET url``, or None when there is no such answer."""
    opener = build_opener(_NoRedirect)
    try:
        with opener.open(Request(url, method="GET"), timeout=PROBE_TIMEOUT_S) as response:
            if response.status != 200:
                return None
            return json.loads(response.read(65536))
    except (URLError, OSError, ValueError):  # not there, refused, timed out, not JSON
        return None


def local_server(base_url: str) -> str | None:
    """The name of the single-request inference server at ``base_url``, or None.

    ``base_url`` is the judge's (with ``/v1`` for the OpenAI wire); the caller has checked that
    it is a loopback address.
    """
    listing = _get_json(base_url.rstrip("/") + "/models")
    if isinstance(listing, dict) and isinstance(listing.get("data"), list):
        for model in listing["data"]:
            owner = model.get("owned_by") if isinstance(model, dict) else None
            if isinstance(owner, str) and owner in _OWNERS:
                return _OWNERS[owner]
    parts = urlsplit(base_url)
    version = _get_json(urlunsplit((parts.scheme, parts.netloc, "/api/version", "", "")))
    if isinstance(version, dict) and isinstance(version.get("version"), str):
        return "Ollama"
    return None
