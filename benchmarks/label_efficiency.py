"""Labels for a calibrated pass rate within +-5 points: the labelling queue against random order.

Usage: python benchmarks/label_efficiency.py [--seed S] [--seeds K] [--executions N]
           [--pass-rate P] [--sensitivity SE] [--specificity SP] [--half-width H]

Each seed simulates one run: N executions drawn from a population whose true pass rate is P,
answered by a judge with the given sensitivity and specificity (the defaults, 0.8, 0.95 and
0.55, make the judge say yes on 85% of executions: a lenient judge on an imbalanced run). The
truth of the executions is then revealed one label at a time, three ways:

  a. random order, the textbook Rogan-Gladen estimate on the unweighted sensitivity and
     specificity of the labels with its delta-method interval (Rogan and Gladen 1978):
     what a person does by hand with randomly chosen labels;
  b. the same random order, checkweigh's stratified estimator and its Monte Carlo interval;
  c. the labelling queue's order (``next_stratum`` after every label, a random unlabelled
     execution of the verdict it picks), the same estimator.

Two readings of "labels needed", up to a cap of --max-labels:
  - per run, the count from which on the 95% interval's half-width stays at or below H (a
    plug-in interval can be narrow by luck on a handful of labels, so the first time it dips
    under H is no measure; the count is where it stays), then the median over the runs;
  - the count at which the median over the runs of the half-width first reaches H.
Prints one line per seed, both medians for a, b and c, the ratios c/a and c/b, and a JSON
summary.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from collections.abc import Callable, Iterator

import numpy as np

from checkweigh.core import Confusion, calibrate, next_stratum

Z = 1.959964


def textbook_half_width(n1: int, n: int, c: Confusion) -> float:
    """Rogan-Gladen's delta-method half-width on unweighted sensitivity and specificity."""
    positives, negatives = c.true_yes + c.false_no, c.true_no + c.false_yes
    if not positives or not negatives:
        return math.inf
    se, sp, p = c.true_yes / positives, c.true_no / negatives, n1 / n
    youden = se + sp - 1
    if youden <= 0:
        return math.inf
    rate = min(1.0, max(0.0, (p + sp - 1) / youden))
    var = (
        p * (1 - p) / n
        + rate**2 * se * (1 - se) / positives
        + (1 - rate) ** 2 * sp * (1 - sp) / negatives
    ) / youden**2
    return Z * math.sqrt(var)


def our_half_width(n1: int, n: int, c: Confusion) -> float:
    """Half the width of checkweigh's calibrated interval."""
    cal = calibrate("c", n1, n - n1, c)
    assert cal.calibrated_low is not None
    assert cal.calibrated_high is not None
    return (cal.calibrated_high - cal.calibrated_low) / 2


def curve(widths: Iterator[float], cap: int) -> np.ndarray:
    """The half-widths after 1, 2, ... ``cap`` labels (infinite past the run's executions)."""
    out = np.full(cap, math.inf)
    for i, width in zip(range(cap), widths, strict=False):
        out[i] = width
    return out


def stays(widths: np.ndarray, target: float) -> int | None:
    """The label count from which on the half-width stays within ``target`` (None: never)."""
    above = np.flatnonzero(widths > target)
    if not above.size:
        return 1
    last = int(above[-1]) + 1  # labels at the last width above the target
    return last + 1 if last < len(widths) else None


def first(widths: np.ndarray, target: float) -> int | None:
    """The first label count whose half-width is within ``target`` (None: never)."""
    below = np.flatnonzero(widths <= target)
    return int(below[0]) + 1 if below.size else None


def random_labels(
    truth: np.ndarray, judge: np.ndarray, order: np.ndarray, width: Callable[..., float]
) -> Iterator[float]:
    n1, n, c = int(judge.sum()), len(judge), Confusion()
    for i in order:
        c.add(human=bool(truth[i]), judge=bool(judge[i]))
        yield width(n1, n, c)


def queue_labels(truth: np.ndarray, judge: np.ndarray, rng: np.random.Generator) -> Iterator[float]:
    n1, n, c = int(judge.sum()), len(judge), Confusion()
    left = {v: list(rng.permutation(np.flatnonzero(judge == v))) for v in (True, False)}
    while left[True] or left[False]:
        verdict = next_stratum(n1, n - n1, c)
        i = left[verdict].pop()
        c.add(human=bool(truth[i]), judge=verdict)
        yield our_half_width(n1, n, c)


def one_seed(a: argparse.Namespace, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.random(a.executions) < a.pass_rate
    judge = np.where(
        truth,
        rng.random(a.executions) < a.sensitivity,
        rng.random(a.executions) >= a.specificity,
    )
    order = rng.permutation(a.executions)
    cap = a.max_labels
    return [
        curve(random_labels(truth, judge, order, textbook_half_width), cap),
        curve(random_labels(truth, judge, order, our_half_width), cap),
        curve(queue_labels(truth, judge, rng), cap),
    ]


def _median(values: list[int | None]) -> float:
    return statistics.median(math.inf if v is None else v for v in values)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--seed", type=int, default=0, help="the first seed")
    p.add_argument("--seeds", type=int, default=9, help="simulated runs (one per seed)")
    p.add_argument("--executions", type=int, default=2000)
    p.add_argument("--pass-rate", type=float, default=0.8, help="the true pass rate")
    p.add_argument("--sensitivity", type=float, default=0.95)
    p.add_argument("--specificity", type=float, default=0.55)
    p.add_argument("--half-width", type=float, default=0.05)
    p.add_argument("--max-labels", type=int, default=1500)
    a = p.parse_args()
    says_yes = a.pass_rate * a.sensitivity + (1 - a.pass_rate) * (1 - a.specificity)
    print(
        f"{a.executions} executions, true pass rate {a.pass_rate}, judge sensitivity "
        f"{a.sensitivity} specificity {a.specificity} (says yes on {says_yes:.0%}); labels "
        f"until the 95% interval stays within +-{a.half_width} (cap {a.max_labels})"
    )
    start = time.perf_counter()
    curves = []
    for seed in range(a.seed, a.seed + a.seeds):
        curves.append(one_seed(a, seed))
        row = [stays(c, a.half_width) for c in curves[-1]]
        print(f"seed {seed}: labels until it stays within: a {row[0]}  b {row[1]}  c {row[2]}")
    per_run = [_median([stays(c[k], a.half_width) for c in curves]) for k in range(3)]
    typical = [
        first(np.median(np.stack([c[k] for c in curves]), axis=0), a.half_width) for k in range(3)
    ]
    names = (
        "a. random + textbook Rogan-Gladen",
        "b. random + stratified estimator ",
        "c. queue + stratified estimator  ",
    )
    print("labels needed         median over runs | where the median width reaches it")
    for name, m, t in zip(names, per_run, typical, strict=True):
        print(f"{name}  {m:>6g} | {t}")
    ratios = {
        "c_over_a": _ratio(per_run[2], per_run[0]),
        "c_over_b": _ratio(per_run[2], per_run[1]),
        "median_width_c_over_a": _ratio(typical[2], typical[0]),
        "median_width_c_over_b": _ratio(typical[2], typical[1]),
    }
    print(
        "ratios (median over runs): "
        f"c/a {_text(per_run[2], per_run[0], a.max_labels)}, "
        f"c/b {_text(per_run[2], per_run[1], a.max_labels)}; (median width): "
        f"c/a {_text(typical[2], typical[0], a.max_labels)}, "
        f"c/b {_text(typical[2], typical[1], a.max_labels)} (goal: queue <= 0.5 x random)"
    )
    print(f"{time.perf_counter() - start:.0f} s")
    summary = {
        "seeds": [a.seed, a.seed + a.seeds - 1],
        "stays": {k: [stays(c[i], a.half_width) for c in curves] for i, k in enumerate("abc")},
        "median_over_runs": dict(zip("abc", per_run, strict=True)),
        "median_width_reaches": dict(zip("abc", typical, strict=True)),
        **ratios,
    }
    print(json.dumps(summary))


def _ratio(top: float | None, bottom: float | None) -> float | None:
    """top / bottom; None when either is past the cap (the JSON's null)."""
    if top is None or bottom is None or math.isinf(top) or math.isinf(bottom):
        return None
    return top / bottom


def _text(top: float | None, bottom: float | None, cap: int) -> str:
    ratio = _ratio(top, bottom)
    if ratio is not None:
        return f"{ratio:.2f}"
    if top is not None and not math.isinf(top):
        return f"< {top / cap:.2f} (the denominator is past the {cap}-label cap)"
    return "n/a (past the cap)"


if __name__ == "__main__":
    main()
