"""Where the server may listen without a token (no FastAPI here: the CLI checks this first)."""

from __future__ import annotations

import ipaddress

TOKEN_ENV = "CHECKWEIGH_TOKEN"
"""The environment variable holding the server's token."""


def is_loopback(host: str) -> bool:
    """Whether listening on ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name other than localhost may resolve to anything
