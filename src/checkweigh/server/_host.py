"""Where the server may listen without a token, and which names it answers to (no FastAPI
here: the CLI checks these first)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

TOKEN_ENV = "CHECKWEIGH_TOKEN"
"""The environment variable holding the server's token."""
MIN_TOKEN = 16
"""The fewest characters a token may have: a shorter one is guessed too soon."""


def is_loopback(host: str) -> bool:
    """Whether listening on ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name other than localhost may resolve to anything


def host_name(header: str) -> str:
    """The name in a ``Host`` header, without its port, lower case, brackets and a final dot
    dropped: ``[::1]:8000`` is ``::1``, ``LocalHost.:80`` is ``localhost``."""
    value = header.strip().lower()
    if value.startswith("["):  # an IPv6 literal: its colons are not the port's
        name = value[1:].partition("]")[0]
    else:
        name = value.rpartition(":")[0] if value.count(":") == 1 else value
    return name.rstrip(".")


class AllowedHosts:
    """The names a request's ``Host`` may carry: loopback ones always, and the given ones.

    A page on another site cannot read this server's answers, unless its name is made to
    resolve to 127.0.0.1 (DNS rebinding): its requests then arrive with that name as their
    ``Host``, which this refuses.
    """

    def __init__(self, names: Iterable[str] = ()) -> None:
        self.names = frozenset(host_name(n) for n in names if host_name(n))

    def allows(self, header: str | None) -> bool:
        """Whether a request whose ``Host`` header is ``header`` is answered."""
        if header is None:
            return False
        name = host_name(header)
        return name in self.names or name == "localhost" or is_loopback(name)
