"""The labelling queue: which execution of a judge check a person should label next.

The calibrated pass rate (see ``_calibration``) is a sum over the judge's two verdicts, and each
verdict's share of human yes answers is measured only by labels on that verdict. A label on the
verdict whose share is least certain, weighted by how much of the run it covers, narrows the
calibrated interval most: the rule compares, for one more label on each verdict, the drop in the
rate's posterior variance, (weight) * q (1 - q) * (1 / (L + 2) - 1 / (L + 3)) with q the verdict's
current share (1/2 pseudo-counts) and L its labels, and takes the larger (Neyman allocation,
one label at a time). q (1 - q) is read at its largest within two standard errors of the
estimate: with the plain estimate, a verdict whose first few labels happen to agree gets few
more, its lucky estimate sticks, and the interval covers the true rate less often than it says
(measured: 93.7% instead of 94.6% for random order on an imbalanced run). The choice rests on
the verdicts and the labels already made, never on the answer an unlabelled execution would
get, so the stratified estimator and its posterior apply. Within a verdict the order is a
seeded shuffle of all its executions, the labelled ones left out, so it stays put as labels
come in.
"""

from __future__ import annotations

import random
from collections.abc import Sequence, Set

from ._alignment import Confusion
from ._label_budget import State


def next_stratum(judged_yes: int, judged_no: int, confusion: Confusion) -> bool:
    """The verdict the next label should fall on: True for the judge's yes verdicts.

    A verdict whose executions are all labelled is never chosen; on a tie, yes.

    Raises:
        ValueError: every execution is labelled already.
    """
    pick = State(judged_yes, judged_no, confusion, 1.0).pick(
        confusion.true_yes + confusion.false_yes, confusion.false_no + confusion.true_no
    )
    if pick is None:
        raise ValueError(f"all {judged_yes + judged_no} executions are labelled")
    return pick


def queue_order(
    verdicts: Sequence[bool], labelled: Set[int], confusion: Confusion, *, seed: int = 0
) -> list[int]:
    """The unlabelled executions in the order the labelling queue presents them.

    Args:
        verdicts: Each execution's verdict (True: the judge said yes).
        labelled: Indexes into ``verdicts`` already labelled.
        confusion: Those labels against their verdicts.
        seed: The seed of the order within a verdict.

    Returns:
        Every unlabelled index once: the verdicts picked by :func:`next_stratum` as if each
        presented execution were labelled with the current estimates' answer, and within a
        verdict a seeded random order.
    """
    yes, no = _shuffled(verdicts, labelled, seed)
    state = State(len(yes[0]) + len(yes[1]), len(no[0]) + len(no[1]), confusion, 1.0)
    # the rule counts labels as the confusion does; capacity is what is left unlabelled
    l1, l0 = state.l1, state.l0
    state.n1, state.n0 = l1 + len(yes[1]), l0 + len(no[1])
    order: list[int] = []
    queues = {True: iter(yes[1]), False: iter(no[1])}
    while (pick := state.pick(l1, l0)) is not None:
        order.append(next(queues[pick]))
        l1, l0 = (l1 + 1, l0) if pick else (l1, l0 + 1)
    return order


def random_order(verdicts: Sequence[bool], labelled: Set[int], *, seed: int = 0) -> list[int]:
    """The unlabelled executions in a seeded random order, whatever their verdicts."""
    order = [i for i in range(len(verdicts)) if i not in labelled]
    random.Random(seed).shuffle(order)
    return order


Split = tuple[list[int], list[int]]
"""The labelled and the unlabelled indexes of one verdict."""


def _shuffled(verdicts: Sequence[bool], labelled: Set[int], seed: int) -> tuple[Split, Split]:
    out: dict[bool, Split] = {}
    for verdict in (True, False):
        every = [i for i, v in enumerate(verdicts) if bool(v) is verdict]
        # a string seed: the two verdicts' orders are independent and fixed per seed
        random.Random(f"{seed}:{verdict}").shuffle(every)
        out[verdict] = (
            [i for i in every if i in labelled],
            [i for i in every if i not in labelled],
        )
    return out[True], out[False]
