"""An HTTP call's tries, for its messages, and where a URL sends its headers."""

from __future__ import annotations

import itertools
from urllib.parse import urlsplit

from ._reply import visible
from ._timing import note_progress

_DEFAULT_PORTS = {"http": 80, "https": 443}


class Tries:
    """The failed tries of one call, for its message (``after 4 tries; earlier: 429 x3
    (Retry-After 2s)``) and, should its time limit cut it, for that one."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []

    @property
    def count(self) -> int:
        """Tries that failed and were tried again."""
        return len(self.seen)

    def add(self, what: str, retry_after: str | None = None) -> None:
        """A try that failed with ``what`` (a status, ``connection refused``) and is retried."""
        detail = None
        if retry_after is not None and retry_after.strip():
            after = visible(retry_after, 40)
            detail = f"Retry-After {after}{'s' if _seconds(after) else ''}"
        self.seen.append((what, detail))
        note_progress("http", f"earlier: {self.summary()}")

    def summary(self) -> str:
        """The failed tries, runs of the same grouped: ``429 x3 (Retry-After 2s), 503``."""
        parts = []
        for (what, detail), run in itertools.groupby(self.seen):
            n = len(list(run))
            parts.append(f"{what}{f' x{n}' if n > 1 else ''}{f' ({detail})' if detail else ''}")
        return ", ".join(parts)

    def said(self, text: str) -> str:
        """``text``, the message of the last try, with the tries before it."""
        if not self.seen:
            return text
        return f"{text} (after {self.count + 1} tries; earlier: {self.summary()})"


def _seconds(text: str) -> bool:
    return text.replace(".", "", 1).isdigit()


def origin(url: str) -> tuple[str, str, int | None]:
    """A URL's scheme, host and port (the default port of its scheme when it gives none):
    where it is sent, and so what may see its headers."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return ("", url, None)
    scheme = parts.scheme.lower()
    return (scheme, (parts.hostname or "").lower(), port or _DEFAULT_PORTS.get(scheme))


def origin_text(where: tuple[str, str, int | None]) -> str:
    scheme, host, port = where
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}" + (
        f":{port}" if port and port != _DEFAULT_PORTS.get(scheme) else ""
    )
