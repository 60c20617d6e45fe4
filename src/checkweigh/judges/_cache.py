"""An on-disk cache of judge answers, so an unchanged suite re-runs with zero LLM calls.

The key is a hash of the judge's ``provider:model``, the call's parameters, the full prompt
and the request's tags (the formatter's version among them). Entries hold the answer and
its accounting, never a key or a header. Only answers that passed validation are stored
(:meth:`CachedJudge.remember`, called by the checks once an answer parsed): an invalid
answer is never cached, so its errored verdict does not stick on re-runs or in ``--replay``.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from enum import StrEnum
from pathlib import Path

from pydantic import ValidationError

from ..core import CheckJudgeStats, JudgeStats
from ..errors import InputError
from ._exchanges import current_check
from ._metered import OUTSIDE_CHECKS, MeteredJudge, close_judge
from ._model import JudgeError, JudgeModel, JudgeReply, JudgeRequest

CACHE_ENV = "CHECKWEIGH_CACHE_DIR"
DEFAULT_CACHE_DIR = Path(".checkweigh") / "cache"
_KEY_VERSION = "1"


class CacheMode(StrEnum):
    """How a cached judge uses its cache."""

    USE = "use"
    """Answer from the cache when possible; store new answers."""
    BYPASS = "bypass"
    """Neither read nor write the cache (``--no-cache``)."""
    REPLAY = "replay"
    """Answer only from the cache; a miss is an error (``--replay``, for CI)."""


class ReplayMiss(JudgeError):
    """A call that replay mode could not answer from the cache."""


def cache_dir(explicit: str | Path | None = None) -> Path:
    """The cache folder: the argument, else $CHECKWEIGH_CACHE_DIR, else .checkweigh/cache."""
    return Path(explicit or os.environ.get(CACHE_ENV) or DEFAULT_CACHE_DIR)


def cache_key(judge: str, request: JudgeRequest) -> str:
    """The hex digest that identifies one call."""
    payload = {"v": _KEY_VERSION, "judge": judge, "request": request.model_dump(mode="json")}
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


class JudgeCache:
    """Answers stored as one small JSON file each, under ``directory``."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def check_writable(self) -> None:
        """Make sure answers can be stored here, before any call is paid for: a cache folder
        that is a file, lies under one or cannot be written would otherwise turn every valid
        answer into an errored verdict.

        Raises:
            InputError: naming the folder and what is wrong with it.
        """
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            why = exc.strerror or type(exc).__name__
            raise InputError(
                f"cannot write the judge cache at {str(self.directory)!r}: {why} "
                f"(set {CACHE_ENV} to a writable folder, or pass --no-cache)",
                field="cache",
            ) from None

    def get(self, key: str) -> JudgeReply | None:
        """The stored answer, or None (an unreadable entry counts as absent)."""
        try:
            return JudgeReply.model_validate_json(self._path(key).read_bytes())
        except (FileNotFoundError, ValidationError, OSError):
            return None

    def put(self, key: str, reply: JudgeReply) -> None:
        """Store an answer atomically (a reader never sees half a file)."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(reply.model_dump_json(exclude={"cached"}).encode())
        os.replace(tmp, path)


class CachedJudge:
    """A judge in front of a cache. Counts hits, misses and calls for reports."""

    def __init__(self, judge: JudgeModel, cache: JudgeCache, mode: CacheMode = CacheMode.USE):
        if mode is CacheMode.USE:
            cache.check_writable()
        self.judge = judge
        self.cache = cache
        self.mode = mode
        self.hits = 0
        self.hits_by_check: dict[str, int] = {}
        """Cache hits by the check that asked."""
        self.misses = 0
        self.calls = 0
        self.unstored: list[str] = []
        """Why answers could not be stored (a full disk, say): the answers themselves stand."""

    @property
    def name(self) -> str:
        """The wrapped judge's name."""
        return self.judge.name

    def stats(self) -> JudgeStats:
        """Calls, hits and misses (and the wrapped judge's tokens and cost when it counts them)."""
        replay_misses = self.misses if self.mode is CacheMode.REPLAY else 0
        from ._collect import BatchCollector  # it imports this module

        counted = self.judge if isinstance(self.judge, MeteredJudge | BatchCollector) else None
        inner = counted.stats() if counted is not None else None
        if inner is None:
            inner = JudgeStats(judge=self.name, calls=self.calls)
        per_check = dict(inner.per_check)
        for check, hits in self.hits_by_check.items():
            part = per_check.get(check) or CheckJudgeStats(
                cost_usd=None if inner.cost_usd is None else 0.0
            )
            per_check[check] = part.model_copy(update={"cache_hits": hits})
        return inner.model_copy(
            update={
                "cache_hits": self.hits,
                "replay_misses": replay_misses,
                "per_check": dict(sorted(per_check.items())),
            }
        )

    async def aclose(self) -> None:
        """Close the wrapped judge's client, if it has one."""
        await close_judge(self.judge)

    def remember(self, request: JudgeRequest, reply: JudgeReply) -> None:
        """Store ``reply`` as the valid answer to ``request`` (unless the cache is bypassed
        or only read)."""
        if self.mode is not CacheMode.USE:
            return
        try:
            self.cache.put(cache_key(self.judge.name, request), reply)
        except OSError as exc:
            # the answer is valid and paid for: a cache that fills up mid-run must not
            # error its verdict; the report says how many were not stored and why
            self.unstored.append(exc.strerror or type(exc).__name__)

    def cache_note(self) -> str | None:
        """What the report says when answers could not be stored."""
        if not self.unstored:
            return None
        return (
            f"{len(self.unstored)} judge answer(s) could not be stored in the cache at "
            f"{str(self.cache.directory)!r}: {self.unstored[-1]}; the next run asks again"
        )

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """From the cache when allowed and present; else from the judge (stored only once
        the caller found it valid: :meth:`remember`)."""
        if self.mode is CacheMode.BYPASS:
            self.calls += 1
            return await self.judge.complete(request)
        key = cache_key(self.judge.name, request)
        cached = self.cache.get(key)
        if cached is not None:
            self.hits += 1
            check = current_check() or OUTSIDE_CHECKS
            self.hits_by_check[check] = self.hits_by_check.get(check, 0) + 1
            return cached.model_copy(update={"cached": True})
        self.misses += 1
        if self.mode is CacheMode.REPLAY:
            raise ReplayMiss(
                f"{self.name}: no cached answer for this call ({key[:12]}) in replay mode"
            )
        self.calls += 1
        return await self.judge.complete(request)
