"""The real local OpenAI-compatible server that `scripts/with_llama.sh` starts for `make test`.

CI installs it (scripts/setup_llama.sh) and sets CHECKWEIGH_REQUIRE_LLAMA=1, so there the
tests that need it fail without it; elsewhere they skip with the reason.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import pytest

URL_ENV = "CHECKWEIGH_TEST_LLAMA_URL"
REQUIRE_ENV = "CHECKWEIGH_REQUIRE_LLAMA"


def llama_url() -> str:
    """The server's base URL (``http://127.0.0.1:PORT/v1``); skips or fails without one."""
    url = os.environ.get(URL_ENV)
    if not url:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 but {URL_ENV} is not set: no llama server to test")
        pytest.skip(
            f"no local llama server: {URL_ENV} is not set (scripts/setup_llama.sh installs one, "
            "`make test` starts it)"
        )
    host = urlsplit(url).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        pytest.fail(f"{URL_ENV} must name a server on loopback, not {host!r}")
    return url
