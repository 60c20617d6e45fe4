"""What a run records about its judge: the settings it was built with and the structured
output format it ended up using, found through the cache and metering wrappers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ._options import JudgeOptions


def _layers(judge: object) -> Iterator[object]:
    seen = 0
    while judge is not None and seen < 8:  # wrappers nest a few deep at most
        yield judge
        judge = getattr(judge, "judge", None)
        seen += 1


def judge_settings(judge: object | None) -> dict[str, Any] | None:
    """The judge's :class:`JudgeOptions` as plain values, or None without a judge."""
    if judge is None:
        return None
    for layer in _layers(judge):
        options = getattr(layer, "options", None)
        if isinstance(options, JudgeOptions):
            return options.snapshot()
    return JudgeOptions().snapshot()


def judge_notes(judge: object | None) -> list[str]:
    """Report notes about the judge: the output format in use (once it is known), a concurrency
    lowered for a local server and answers the cache could not store, from whichever layer
    knows them."""
    notes: list[str] = []
    for layer in _layers(judge):
        for name in ("format_note", "concurrency_note", "cache_note", "batch_note"):
            note = getattr(layer, name, None)
            text = note() if callable(note) else None
            if isinstance(text, str):
                notes.append(text)
    return notes
