"""The stability simulation's inner loop, a batch of reruns at a time in numpy.

The draws are those of ``random.Random(seed)``, in the same order (numpy's MT19937 started
from its state makes its doubles the same way): a rerun takes one draw per noisy verdict, in
execution order, so a batch of ``B`` reruns is a ``B x draws`` matrix. Each execution's draws
make a base-3 key (keep, flip, tie per noisy check); executions whose stored verdicts and
scores are alike (a *kind*) rerun alike, so the real scoring and pass policy run once per
(kind, key) met, and every other rerun looks its outcome up. The run's sums are added in
execution order, as :class:`CaseTally` adds them, so the simulated gates are those of
rerunning one draw at a time.

numpy is imported here only: the command line's start-up does not load it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..errors import CheckweighError
from ._case_pass import CaseState, CaseVerdict

Outcome = Callable[[int, int], CaseVerdict]
"""(execution, key) -> the verdict of that execution rerun with those draws."""

_BATCH_DRAWS = 1 << 21
"""Draws per batch (16 MB of doubles): small enough to stop promptly between batches."""
_MAX_CODE = 1 << 62
_TABLE_CODES = 1 << 22
"""Up to this many codes (32 MB), a code's outcome is looked up in a table."""


class TooManyNoisyChecks(CheckweighError, ValueError):
    """One case has more noisy verdicts than a rerun's key can hold."""


@dataclass(slots=True)
class Totals:
    """What every rerun of the run came to, and how often each execution ended each way."""

    metrics: list[float | None] = field(default_factory=list)
    """Each rerun's mean case score (None: no case had a score)."""
    rates: list[float] = field(default_factory=list)
    """Each rerun's cases pass rate (percent)."""
    outcomes: list[dict[int, int]] = field(default_factory=list)
    """Per execution: outcome id -> reruns that ended that way."""
    verdicts: list[CaseVerdict] = field(default_factory=list)
    """Outcome id -> its verdict."""


def generator(seed: int) -> np.random.Generator:
    """numpy's generator in the state ``random.Random(seed)`` starts in (the same doubles)."""
    state = random.Random(seed).getstate()[1]
    bits = np.random.MT19937()
    bits.state = {
        "bit_generator": "MT19937",
        "state": {"key": np.array(state[:624], dtype=np.uint32), "pos": state[624]},
    }
    return np.random.Generator(bits)


class Reruns:
    """The executions laid out for batched reruns.

    Args:
        observed: each execution's stored verdict, in run order.
        noisy: each execution's noisy checks, as (flip, flip + tie) chances.
        kinds: each execution's kind (executions of one kind rerun alike), or -1 when it has
            no noisy check.
        outcome: rescores an execution (one of the kind) under a key.
    """

    def __init__(
        self,
        observed: Sequence[CaseVerdict],
        noisy: Sequence[Sequence[tuple[float, float]]],
        kinds: Sequence[int],
        outcome: Outcome,
    ) -> None:
        self.executions = len(observed)
        self.outcome = outcome
        self.movers = np.array([i for i, k in enumerate(kinds) if k >= 0], dtype=np.int64)
        widths = [len(noisy[i]) for i in self.movers]
        self.flip = np.array([f for i in self.movers for f, _ in noisy[i]], dtype=np.float64)
        self.cut = np.array([c for i in self.movers for _, c in noisy[i]], dtype=np.float64)
        # the movers by their number of noisy checks: (which movers, their first draw, width)
        firsts = np.cumsum([0, *widths[:-1]], dtype=np.int64)
        self.groups = [
            (np.flatnonzero(np.array(widths) == w), firsts[np.array(widths) == w], w)
            for w in sorted(set(widths))
        ]
        # a kind's keys take a block of codes: its offset plus the key
        offsets: dict[int, int] = {}
        total = 0
        for i, w in zip(self.movers.tolist(), widths, strict=True):
            if kinds[i] not in offsets:
                offsets[kinds[i]] = total
                total += 3**w
        if total >= _MAX_CODE:
            raise TooManyNoisyChecks(
                f"a case has {max(widths)} noisy checks: too many to simulate together"
            )
        self.offset = np.array([offsets[kinds[i]] for i in self.movers], dtype=np.int64)
        self.example = {offsets[kinds[i]]: i for i in self.movers.tolist()}
        self.block_starts = np.array(sorted(self.example), dtype=np.int64)
        # outcome ids 0..n-1 are the executions' stored verdicts (what a rerun with no flip
        # does); the outcomes of other keys are appended as they are met
        self.verdicts = list(observed)
        self.passed = np.array([v.passed for v in observed], dtype=bool)
        self.counted = np.array([_counted(v) for v in observed], dtype=bool)
        self.score = np.array([v.score_pct if _counted(v) else 0.0 for v in observed])
        self.base = (self.passed.copy(), self.counted.copy(), self.score.copy())
        self.codes, first = np.unique(self.offset, return_index=True)  # key 0 of each kind
        self.ids = self.movers[first]
        # code -> outcome id (-1: not met yet), when the codes are few enough for a table;
        # else the sorted codes are searched
        self.table: npt.NDArray[np.int64] | None = None
        if total <= _TABLE_CODES:
            self.table = np.full(total, -1, dtype=np.int64)
            self.table[self.codes] = self.ids
        self.metrics: list[float | None] = []
        self.rates: list[float] = []
        self.kept = np.zeros(len(self.movers), dtype=np.int64)
        self.moved: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]] = []
        self.done = 0

    def batch_size(self) -> int:
        """Reruns per batch."""
        return max(1, _BATCH_DRAWS // max(1, len(self.flip), self.executions))

    def run(self, draws: np.random.Generator, reruns: int) -> None:
        """Simulate ``reruns`` more reruns with the next draws of ``draws``."""
        n = self.executions
        self.done += reruns
        # the executions with no noisy check count the same in every rerun
        steady = np.ones(n, dtype=bool)
        steady[self.movers] = False
        wins = np.full(reruns, int(self.base[0][steady].sum()), dtype=np.int64)
        scored = np.full(reruns, int(self.base[1][steady].sum()), dtype=np.int64)
        score = np.broadcast_to(self.base[2], (reruns, n)).copy()
        if len(self.movers):
            u = draws.random((reruns, len(self.flip)))
            # per draw: 2 flips the verdict, 1 makes it a tie, 0 keeps it (see _rescore)
            moves = (u < self.cut).view(np.int8) + (u < self.flip).view(np.int8)
            keys = self._keys(moves)
            ids = self._ids(keys + self.offset)
            wins += self.passed[ids].sum(axis=1)
            scored += self.counted[ids].sum(axis=1)
            score[:, self.movers] = self.score[ids]
            self._count(ids, keys)
        # summed in execution order, as CaseTally adds them (a skipped score adds 0.0)
        sums = np.cumsum(score, axis=1)[:, -1] if n else np.zeros(reruns)
        for total, k in zip(sums.tolist(), scored.tolist(), strict=True):
            self.metrics.append(total / k if k else None)
        self.rates.extend(w / n * 100.0 if n else 0.0 for w in wins.tolist())

    def finish(self) -> Totals:
        """What the reruns came to."""
        outcomes: list[dict[int, int]] = [{i: self.done} for i in range(self.executions)]
        for i, k in zip(self.movers.tolist(), self.kept.tolist(), strict=True):
            outcomes[i] = {i: k} if k else {}
        if self.moved:
            pairs = np.concatenate([p for p, _ in self.moved])
            counts = np.concatenate([c for _, c in self.moved])
            pairs, at = np.unique(pairs, return_inverse=True)
            sums = np.bincount(at, weights=counts).astype(np.int64)
            width = len(self.movers)
            for pair, k in zip(pairs.tolist(), sums.tolist(), strict=True):
                outcome, column = divmod(pair, width)
                outcomes[int(self.movers[column])][outcome] = k
        return Totals(self.metrics, self.rates, outcomes, self.verdicts)

    def _keys(self, moves: npt.NDArray[np.int8]) -> npt.NDArray[np.int64]:
        """Each mover's key per rerun: its moves read as base-3 digits, first check first."""
        keys = np.empty((moves.shape[0], len(self.movers)), dtype=np.int64)
        for which, first, width in self.groups:
            key = moves[:, first].astype(np.int64)
            for j in range(1, width):
                key *= 3
                key += moves[:, first + j]
            keys[:, which] = key
        return keys

    def _ids(self, codes: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The outcome id of each code, rescoring the codes not met before."""
        if self.table is not None:  # every code has a slot: one gather
            ids = self.table[codes]
            new = ids < 0
            if new.any():
                self._learn(np.unique(codes[new]))
                ids = self.table[codes]
            return ids
        at = np.minimum(np.searchsorted(self.codes, codes), len(self.codes) - 1)
        new = self.codes[at] != codes
        if new.any():
            self._learn(np.unique(codes[new]))
            at = np.searchsorted(self.codes, codes)
        return self.ids[at]

    def _learn(self, codes: npt.NDArray[np.int64]) -> None:
        """Rescore one execution of each code's kind under the code's key."""
        blocks = self.block_starts[np.searchsorted(self.block_starts, codes, "right") - 1]
        verdicts = [
            self.outcome(self.example[block], code - block)
            for code, block in zip(codes.tolist(), blocks.tolist(), strict=True)
        ]
        first = len(self.verdicts)
        self.verdicts.extend(verdicts)
        self.passed = np.append(self.passed, [v.passed for v in verdicts])
        self.counted = np.append(self.counted, [_counted(v) for v in verdicts])
        self.score = np.append(self.score, [v.score_pct if _counted(v) else 0.0 for v in verdicts])
        ids = np.concatenate([self.ids, np.arange(first, first + len(verdicts))])
        if self.table is not None:
            self.table[codes] = ids[-len(verdicts) :]
        codes = np.concatenate([self.codes, codes])
        order = np.argsort(codes)
        self.codes, self.ids = codes[order], ids[order]

    def _count(self, ids: npt.NDArray[np.int64], keys: npt.NDArray[np.int64]) -> None:
        """Note how each mover's reruns ended; the stored outcome (key 0) is counted apart,
        since most reruns of most executions change nothing."""
        kept = keys == 0
        self.kept += kept.sum(axis=0)
        if kept.all():
            return
        width = len(self.movers)
        moved = ~kept
        column = np.broadcast_to(np.arange(width, dtype=np.int64), ids.shape)[moved]
        self.moved.append(np.unique(ids[moved] * width + column, return_counts=True))


def _counted(verdict: CaseVerdict) -> bool:
    """Whether the verdict's score counts towards the mean (an errored case's does not)."""
    return verdict.score_pct is not None and verdict.state is not CaseState.ERRORED
