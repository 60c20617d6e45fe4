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
- ``concurrency``: adaptive (from 32 up to 256 in flight, paced under the provider's learned
  rate limits: see ``_pacing``), or 2 for a single-request inference server on this machine
  (llama-cpp-python, llama.cpp, Ollama, LM Studio); a given value is a fixed cap;
- ``max_input_tokens``: the model's known input limit, else none (see ``_context``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal, get_args

from ..errors import InputError
from ._retry import RetryPolicy

DEFAULT_CONCURRENCY = 32
"""Judge calls in flight at once, unless told otherwise.

Why 32: a judge call to a provider takes 1-3 s, so 32 in flight is about 640-1,900 requests a
minute, within what a paid tier accepts (OpenAI's usage tier 2: 5,000 requests a minute for its
models; Anthropic's first paid tier: 1,000 a minute, which calls of 2 s or more stay under). Past
a tier's limits, a 429 is retried after the provider's ``Retry-After`` without holding a slot.
16 left a judged run at twice the wall time of 32 with the provider far from its limits."""
LOCAL_CONCURRENCY = 2
"""The same for an inference server on this machine that decodes one request at a time
(llama-cpp-python, llama.cpp's server, Ollama, LM Studio): more calls in flight only queue there
and run into the timeout."""

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
    """Judge calls in flight at once, a fixed cap (None: adaptive, starting at 32, see
    ``_pacing``; or 2 for a local inference server)."""
    max_input_tokens: int | None = None
    """The judge model's input limit in tokens (None: the known default for the model, if
    any): a prompt over it is not sent and its verdict is errored (see ``_context``)."""

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
        if self.max_input_tokens is not None and self.max_input_tokens < 1:
            raise ValueError(
                f"max_input_tokens: expected a whole number >= 1, got {self.max_input_tokens!r}"
            )
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
        """These options with the concurrency settled for ``judge`` (see :meth:`settle`)."""
        return self.settle(judge)[0]

    def settle(self, judge: object) -> tuple[JudgeOptions, str | None]:
        """These options with the concurrency settled for ``judge``, and a note for the report
        when it was lowered: a judge served on this machine by an inference server that decodes
        one request at a time gets :data:`LOCAL_CONCURRENCY` unless the concurrency was given;
        everything else gets :data:`DEFAULT_CONCURRENCY`."""
        if self.concurrency is not None:
            return self, None
        base_url = getattr(judge, "base_url", None)
        server = None
        if getattr(judge, "local", False) is True and isinstance(base_url, str):
            if str(getattr(judge, "name", "")).startswith("ollama:"):
                server = "Ollama"
            else:
                from ._local import local_server  # a probe, only for a loopback base URL

                server = local_server(base_url)
        if server is None:
            return replace(self, concurrency=DEFAULT_CONCURRENCY), None
        note = (
            f"judge concurrency {LOCAL_CONCURRENCY}: {server} on this machine decodes one request"
            " at a time (--judge-concurrency to change)"
        )
        return replace(self, concurrency=LOCAL_CONCURRENCY), note

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
        """Plain values for the run's stored configuration (``max_input_tokens`` only when
        set, so configurations stored before it existed read the same)."""
        values = asdict(self)
        if values["max_input_tokens"] is None:
            del values["max_input_tokens"]
        return values


JUDGE_KEYS: tuple[str, ...] = tuple(f.name for f in fields(JudgeOptions))
"""The keys of a suite's ``judge:`` block."""
