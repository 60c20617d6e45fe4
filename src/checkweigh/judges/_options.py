"""How a run talks to its judge: timeouts, retries, the per-call deadline, the output format
and the concurrency, from the suite's ``judge:`` block and the ``--judge-*`` flags (flags win).

Defaults (documented in the README):

- each attempt may take ``timeout_s`` = 60 s;
- a failed attempt (429, 408, 409, 5xx, timeout, dropped connection) is retried up to
  ``retries`` = 10 times, after ``Retry-After`` / ``retry-after-ms`` when the server sends one,
  else after an exponential backoff from ``backoff_initial_s`` = 0.5 s (doubled each time,
  plus up to as much again of random jitter) capped at ``backoff_max_s`` = 20 s;
- all attempts and waits of one call end within ``deadline_s`` = 120 s, so a hung provider
  costs at most two attempts and holds a concurrency slot only while an attempt is in flight;
- ``concurrency`` = 16 calls in flight, or 2 for a server on this machine.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal, get_args

from ..errors import InputError
from ._retry import RetryPolicy

DEFAULT_CONCURRENCY = 16
"""Judge calls in flight at once, unless told otherwise."""
LOCAL_CONCURRENCY = 2
"""The same for a server on this machine (a loopback base URL, Ollama): such a server decodes
one request at a time, so more calls in flight only queue there and run into the timeout."""

JudgeFormat = Literal["auto", "json_schema", "json_object", "prompt"]
"""How a structured answer is asked for: negotiated (``auto``), or one of the three forced."""

FORMATS: tuple[str, ...] = get_args(JudgeFormat)


@dataclass(frozen=True, slots=True)
class JudgeOptions:
    """The judge's settings for one run (recorded in the run's configuration)."""

    timeout_s: float = 60.0
    """Longest single attempt."""
    retries: int = 10
    """Attempts after the first, for failures that may pass on retry."""
    deadline_s: float = 120.0
    """Longest one call may take, all attempts and waits included."""
    backoff_initial_s: float = 0.5
    """First backoff when the server does not say how long to wait (doubled each time)."""
    backoff_max_s: float = 20.0
    """Longest single wait, also the cap on a server's ``Retry-After``."""
    format: JudgeFormat = "auto"
    """Structured output: ``auto`` negotiates json_schema, then json_object, then prompt."""
    concurrency: int | None = None
    """Judge calls in flight at once (None: 16, or 2 for a server on this machine)."""

    def __post_init__(self) -> None:
        for name in ("timeout_s", "deadline_s", "backoff_max_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name}: expected a number of seconds > 0, got {value!r}")
        if not (math.isfinite(self.backoff_initial_s) and self.backoff_initial_s >= 0):
            raise ValueError(
                f"backoff_initial_s: expected seconds >= 0, got {self.backoff_initial_s!r}"
            )
        # bounded like the suite's judge.retries: a huge count cannot even be recorded
        if not 0 <= self.retries <= 100:
            raise ValueError(
                f"retries: expected a whole number from 0 to 100, got {self.retries!r}"
            )
        if self.concurrency is not None and self.concurrency < 1:
            raise ValueError(f"concurrency: expected a whole number >= 1, got {self.concurrency!r}")
        if self.format not in FORMATS:
            raise ValueError(f"format: expected one of {', '.join(FORMATS)}, got {self.format!r}")

    @classmethod
    def build(cls, suite: Mapping[str, Any] | None = None, **flags: Any) -> JudgeOptions:
        """The suite block's settings overridden by the flags that were given (not None).

        Raises:
            InputError: a flag out of range, naming the flag.
        """
        base = cls(**dict(suite or {}))
        given = {k: v for k, v in flags.items() if v is not None}
        try:
            return replace(base, **given)
        except ValueError as exc:
            name, _, message = str(exc).partition(": ")
            flag = "--judge-" + name.removesuffix("_s").replace("_", "-")
            raise InputError(message, field=flag) from None

    def for_judge(self, judge: object) -> JudgeOptions:
        """These options with the concurrency settled for ``judge`` (``local`` judges, on a
        loopback base URL, get :data:`LOCAL_CONCURRENCY` unless it was given)."""
        if self.concurrency is not None:
            return self
        local = getattr(judge, "local", False) is True
        return replace(self, concurrency=LOCAL_CONCURRENCY if local else DEFAULT_CONCURRENCY)

    @property
    def limit(self) -> int:
        """The concurrency, the remote default when it is not settled yet."""
        return self.concurrency or DEFAULT_CONCURRENCY

    def retry_policy(self) -> RetryPolicy:
        """The retry loop's settings."""
        return RetryPolicy(
            attempts=self.retries + 1,
            initial_s=self.backoff_initial_s,
            max_wait_s=self.backoff_max_s,
            timeout_s=self.timeout_s,
            deadline_s=self.deadline_s,
        )

    def snapshot(self) -> dict[str, Any]:
        """Plain values for the run's stored configuration."""
        return asdict(self)


JUDGE_KEYS: tuple[str, ...] = tuple(f.name for f in fields(JudgeOptions))
"""The keys of a suite's ``judge:`` block."""
