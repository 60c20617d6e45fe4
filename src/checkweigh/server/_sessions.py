"""Signed-in browsers and clients that keep guessing: both kept in memory, by this process,
on an injectable clock (a test moves time without sleeping)."""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

Clock = Callable[[], float]
"""Seconds from any fixed point (``time.monotonic``)."""

SESSION_HOURS = 12
"""How long a sign-in lasts, at most: a cookie found on a machine later opens nothing."""


class Sessions:
    """Random session ids, each standing for one sign-in, until it is signed out or expires.

    The browser's cookie holds the id, never the token: a copied cookie stops working at sign
    out (or a restart), and the token itself is never stored by the browser.
    """

    def __init__(
        self,
        clock: Clock = time.monotonic,
        lifetime: float = SESSION_HOURS * 3600,
        most: int = 1000,
    ) -> None:
        self._clock = clock
        self._lifetime = lifetime
        self._most = most
        self._started: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()  # sync routes run on worker threads

    def start(self) -> str:
        """A new session's id (256 random bits); the oldest session ends past ``most``."""
        session = secrets.token_urlsafe(32)
        with self._lock:
            self._started[session] = self._clock()
            while len(self._started) > self._most:
                self._started.popitem(last=False)
        return session

    def valid(self, session: str | None) -> bool:
        """Whether ``session`` is a sign-in that has not ended."""
        if not session:
            return False
        with self._lock:
            started = self._started.get(session)
            if started is None:
                return False
            if self._clock() - started > self._lifetime:
                del self._started[session]
                return False
            return True

    def end(self, session: str | None) -> None:
        """Sign ``session`` out (nothing when there is no such session)."""
        if session:
            with self._lock:
                self._started.pop(session, None)


class Throttle:
    """How long a client must wait before its token is checked again: free for the first
    ``free`` wrong tries, then ``first`` seconds, doubling with every wrong try up to ``most``;
    a right one forgets the client. While it waits nothing it sends is checked, so guessing
    learns nothing faster than the delay allows."""

    def __init__(
        self,
        clock: Clock = time.monotonic,
        free: int = 5,
        first: float = 1.0,
        most: float = 300.0,
        clients: int = 10_000,
    ) -> None:
        self._clock = clock
        self._free = free
        self._first = first
        self._most = most
        self._clients = clients
        # client -> (wrong tries, until when it waits)
        self._wrong: OrderedDict[str, tuple[int, float]] = OrderedDict()
        self._lock = threading.Lock()

    def wait(self, client: str) -> float:
        """Seconds before ``client``'s next try is checked (0 when it may try now)."""
        with self._lock:
            entry = self._wrong.get(client)
        return 0.0 if entry is None else max(0.0, entry[1] - self._clock())

    def failed(self, client: str) -> None:
        """One more wrong token from ``client``."""
        with self._lock:
            tries = self._wrong.pop(client, (0, 0.0))[0] + 1
            over = tries - self._free
            delay = 0.0 if over <= 0 else min(self._most, self._first * 2 ** min(over - 1, 32))
            self._wrong[client] = (tries, self._clock() + delay)
            while len(self._wrong) > self._clients:
                self._wrong.popitem(last=False)  # the longest quiet: a guesser keeps its place

    def succeeded(self, client: str) -> None:
        """``client`` gave the token: its wrong tries are forgotten."""
        with self._lock:
            self._wrong.pop(client, None)
