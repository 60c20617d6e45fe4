"""Ages and durations as people write them: ``30s``, ``15m``, ``1h``, ``7d``."""

from __future__ import annotations

import re

_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)\s*")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(text: object) -> float:
    """``30s``, ``15m``, ``1h``, ``1d``, ``1w`` (or a number of seconds) as seconds above zero.

    Raises:
        ValueError: anything else.
    """
    if isinstance(text, int | float) and not isinstance(text, bool):
        seconds = float(text)
    elif isinstance(text, str) and (m := _DURATION.fullmatch(text)):
        seconds = float(m.group(1)) * _UNITS[m.group(2)]
    else:
        raise ValueError(f"expected a duration such as 30s, 15m, 1h, 1d or 1w, got {text!r}")
    if not seconds > 0:
        raise ValueError(f"expected a duration above zero, got {text!r}")
    return seconds
