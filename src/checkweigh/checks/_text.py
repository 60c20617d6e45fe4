"""Text normalisation shared by the checks that compare text (one helper, no copies)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any, Literal

Normalization = Literal["case", "whitespace", "thousands_separators", "punctuation"]
"""What a text comparison may ignore:

- ``case``: upper and lower case (Unicode case folding);
- ``whitespace``: runs of spaces, tabs and newlines count as one space, and the ends are trimmed;
- ``thousands_separators``: a comma (or no-break space) between digit groups, so
  ``"1,234,567"`` reads as ``"1234567"``; ``"3,5"`` and ``"1,23"`` are left alone;
- ``punctuation``: punctuation characters (Unicode category P: ``.,;:!?'"()-`` and the like)
  are dropped, so ``"L8QF2."`` reads as ``"L8QF2"``; currency and other symbols stay.
"""

# the separator first, then the digit before it: far fewer positions to test than a leading
# lookbehind, which runs at every character
_THOUSANDS = re.compile(r"[,\u00a0\u202f](?<=\d.)(?=\d{3}(?!\d))")
# applied in this order: separators before punctuation (a dropped comma would glue the groups
# either way, but a dropped comma between words should not touch numbers first)
_ORDER: tuple[Normalization, ...] = ("thousands_separators", "punctuation", "case", "whitespace")


def _strip_punctuation(text: str) -> str:
    return "".join(c for c in text if not unicodedata.category(c).startswith("P"))


def _drop_thousands_separators(text: str) -> str:
    # most texts hold no separator at all: three substring tests cost less than the search
    if "," not in text and "\u00a0" not in text and "\u202f" not in text:
        return text
    return _THOUSANDS.sub("", text)


def _squeeze_whitespace(text: str) -> str:
    return " ".join(text.split())


_STEPS: dict[Normalization, Callable[[str], str]] = {
    "thousands_separators": _drop_thousands_separators,
    "punctuation": _strip_punctuation,
    "case": str.casefold,
    "whitespace": _squeeze_whitespace,
}


def normalizer(options: Iterable[Normalization]) -> Callable[[str], str] | None:
    """One function applying ``options`` in a fixed order, or None when there is nothing to do."""
    chosen = set(options)
    steps = [_STEPS[name] for name in _ORDER if name in chosen]
    if not steps:
        return None
    if len(steps) == 1:
        return steps[0]
    if len(steps) == 2:  # the usual pair, without a loop: this runs for every text compared
        first, second = steps
        return lambda text: second(first(text))

    def normalize(text: str) -> str:
        for step in steps:
            text = step(text)
        return text

    return normalize


def as_text(value: Any) -> str | None:
    """An expected value as the text to look for: strings as they are, numbers as they are
    usually written (``1234``, ``30`` for ``30.0``, ``12.5``), booleans as ``true`` /
    ``false``; None for anything else (objects and lists are not text)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return None


def normalized(value: Any, normalize: Callable[[str], str] | None) -> Any:
    """``value`` normalised when it is text (other values are returned as they are)."""
    if normalize is not None and isinstance(value, str):
        return normalize(value)
    return value
