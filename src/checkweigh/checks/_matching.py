"""One-to-one pairings: of a trace's calls with the reference's, and of the items of an
argument list compared in any order (``unordered``).

Both are maximum bipartite matchings (Kuhn's augmenting paths), so which of several equal
items pairs with which never changes the answer.
"""

from __future__ import annotations

from typing import Any

from ._argpaths import EVERY, Trie, is_leaf
from ._values import ArgMode, matches


def align(actual: Any, expected: Any, trie: Trie, mode: ArgMode) -> Any:
    """``actual`` with the lists at the paths of ``trie`` reordered so that their items pair
    with ``expected``'s one to one (a maximum matching, items compared by ``mode``). Compared
    position by position afterwards, such a list matches when the two are equal as
    multisets; when they are not, the items left unpaired are where the difference shows."""
    if is_leaf(trie):
        if isinstance(actual, list) and isinstance(expected, list):
            return _paired_order(actual, expected, mode)
        return actual
    if isinstance(actual, dict) and isinstance(expected, dict):
        out = dict(actual)
        for key, sub in trie.items():
            if isinstance(key, str) and key != EVERY and key in actual and key in expected:
                out[key] = align(actual[key], expected[key], sub, mode)
        return out
    if isinstance(actual, list) and isinstance(expected, list):
        every = trie.get(EVERY)
        items = list(actual)
        for i in range(min(len(actual), len(expected))):
            sub = trie.get(i, every)
            if sub is not None:
                items[i] = align(actual[i], expected[i], sub, mode)
        return items
    return actual


def _paired_order(actual: list[Any], expected: list[Any], mode: ArgMode) -> list[Any]:
    """``actual``'s items, each at the position of the expected item it pairs with; the
    unpaired ones fill the other positions in their own order."""
    edges = [[j for j, want in enumerate(expected) if matches(got, want, mode)] for got in actual]
    owner: list[int | None] = [None] * len(expected)
    for i in range(len(actual)):
        augment(i, edges, owner)
    paired = {i for i in owner if i is not None}
    rest = iter([item for i, item in enumerate(actual) if i not in paired])
    out: list[Any] = []
    for holder in owner:
        if holder is not None:
            out.append(actual[holder])
        else:
            spare = next(rest, _NONE)
            if spare is not _NONE:
                out.append(spare)
    out.extend(rest)
    return out


_NONE = object()


def augment(start: int, edges: list[list[int]], owner: list[int | None]) -> bool:
    """Kuhn's augmenting path from actual call ``start`` (``owner[j]``: the actual call
    reference ``j`` is paired with), flipped into ``owner`` when found. A loop with its own
    stack rather than recursion: a log with thousands of calls of one tool makes long paths."""
    seen = [False] * len(owner)
    stack = [[start, 0]]  # an actual call and the next of its edges to try
    taken: list[int] = []  # the reference taken at each frame but the last
    while stack:
        frame = stack[-1]
        i, k = frame
        tries = edges[i]
        while k < len(tries) and seen[tries[k]]:
            k += 1
        if k == len(tries):
            stack.pop()
            if taken:
                taken.pop()
            continue
        j = tries[k]
        frame[1] = k + 1
        seen[j] = True
        taken.append(j)
        holder = owner[j]
        if holder is None:
            for (a, _), b in zip(stack, taken, strict=True):
                owner[b] = a
            return True
        stack.append([holder, 0])
    return False
