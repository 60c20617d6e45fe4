"""The comparison page (thresholds editable in a GET form) and the stability page: what
``checkweigh compare`` and ``checkweigh stability`` report, from the same service calls."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ..core import DEFAULT_SIMULATIONS, CaseChangeKind, Comparison
from ..errors import InputError
from ..reports import explain_comparison
from ..service import (
    COMPARE_DEFAULTS,
    stability_with_noise,
)
from . import _charts
from ._deps import compared, run_of, store_of
from ._errors import bad_parameter, from_input_error
from ._html import render
from ._off_loop import Stop, off_loop
from ._params import flag, number, whole

router = APIRouter(include_in_schema=False)
SHOWN = 200
"""Cases listed per section; the rest are counted."""
THRESHOLDS = {  # query parameter -> CompareThresholds field
    "max_pass_rate_drop": "max_pass_rate_drop",
    "max_avg_score_drop": "max_avg_score_drop",
    "max_latency_increase_pct": "max_latency_increase_pct",
    "min_latency_increase_ms": "min_latency_increase_ms",
    "max_case_score_drop": "case_score_delta",
    "alpha": "alpha",
}
THRESHOLD_HELP = {
    "max_pass_rate_drop": "points of case pass rate the candidate may lose",
    "max_avg_score_drop": "points (0-100) of mean case score it may lose",
    "max_latency_increase_pct": "percent the mean latency may grow",
    "min_latency_increase_ms": "latency increases below this many ms are jitter",
    "max_case_score_drop": "points a case's score must move, without a flip, to count",
    "alpha": "significance level of the paired tests",
}


def _picked(request: Request) -> Response:
    """The runs list's form: two picked runs, the older one the base."""
    store = store_of(request)
    picks = request.query_params.getlist("pick")
    if len(picks) != 2:
        raise bad_parameter("pick", f"expected two runs to compare, got {len(picks)}")
    first, second = sorted(
        (run_of(store, ref) for ref in picks), key=lambda info: (info.created_at, info.id)
    )
    if first.id == second.id:
        raise bad_parameter("pick", f"both refer to run {first.id}")
    return RedirectResponse(
        "/compare?" + urlencode({"base": first.id, "candidate": second.id}), status_code=303
    )


def _sections(cmp: Comparison) -> dict[str, list[Any]]:
    flips = [c for c in (*cmp.regressions, *cmp.improvements) if c.flipped]
    scores = [c for c in (*cmp.regressions, *cmp.improvements) if not c.flipped]
    # the biggest score moves first: a drop of 40 points before a drop of 6
    scores.sort(key=lambda c: -abs((c.candidate_score or 0.0) - (c.base_score or 0.0)))
    flips.sort(key=lambda c: (c.kind is not CaseChangeKind.REGRESSION, c.case_id, c.repeat))
    return {"regressions": cmp.regressions, "flips": flips, "scores": scores}


@router.get("/compare")
def compare_page(request: Request) -> Response:
    """How ``candidate`` compares with ``base``: the verdict, regressions first, flips, score
    changes and per-check changes with their p-values."""
    params = request.query_params
    base, candidate = params.get("base", ""), params.get("candidate", "")
    if not base and not candidate and "pick" in params:
        return _picked(request)
    for name, value in (("base", base), ("candidate", candidate)):
        if not value:
            raise bad_parameter(name, "expected a run id (pick two runs in the runs list)")
    given = {name: number(params, name) for name in THRESHOLDS}
    values = {THRESHOLDS[n]: v for n, v in given.items() if v is not None}
    strict = flag(params, "strict")
    fields = {field: name for name, field in THRESHOLDS.items()}
    thresholds, found = compared(request, base, candidate, values, fields, strict)
    cmp = found.result
    shown = {n: getattr(thresholds, f) for n, f in THRESHOLDS.items()}
    return render(
        request,
        "compare.html",
        base=found.base,
        candidate=found.candidate,
        cmp=cmp,
        reading=explain_comparison(cmp),
        sections=_sections(cmp),
        shown=SHOWN,
        thresholds=shown,
        defaults={n: getattr(COMPARE_DEFAULTS, f) for n, f in THRESHOLDS.items()},
        help=THRESHOLD_HELP,
        strict=strict,
    )


@router.get("/runs/{run_id}/stability")
async def stability_page(request: Request, run_id: str) -> Response:
    """The simulated spread of the run's two pass dimensions, with their pass marks (computed
    off the event loop, and stopped when the client leaves or the server stops)."""
    return await off_loop(request, lambda stop: _stability_page(request, run_id, stop))


def _stability_page(request: Request, run_id: str, stop: Stop) -> Response:
    store = store_of(request)
    info = run_of(store, run_id)
    params = request.query_params
    # repeated, or comma-separated in the page's one field: RATE, CHECK=RATE, ...
    noise = [i.strip() for v in params.getlist("noise") for i in v.split(",") if i.strip()]
    sims = whole(params, "sims", DEFAULT_SIMULATIONS, low=1, high=100_000)
    seed = whole(params, "seed", 0, low=0, high=2**63 - 1)
    try:
        info, report = stability_with_noise(
            store, info.id, noise, simulations=sims, seed=seed, stop=stop
        )
    except InputError as exc:
        if exc.field != "RUN":  # a parameter the user gave
            raise from_input_error(exc) from None
        # nothing to simulate in this run as stored: say why and offer the noise field
        return render(
            request,
            "stability.html",
            info=info,
            report=None,
            why=exc.message,
            noise=noise,
            sims=sims,
            seed=seed,
            charts=[],
            flaky=[],
            flaky_total=0,
        )
    charts = [
        {
            "id": "spread-metrics",
            "title": f"Mean case score (the metrics gate) in {report.simulations} simulated reruns",
            "svg": _charts.spread_chart(report.metrics, "metrics: mean case score"),
        },
        {
            "id": "spread-cases",
            "title": f"Case pass rate (the cases gate) in {report.simulations} simulated reruns",
            "svg": _charts.spread_chart(report.cases_rate, "cases: pass rate"),
        },
    ]
    flaky = [c for c in report.cases if c.flip.p > 0.0]
    return render(
        request,
        "stability.html",
        info=info,
        report=report,
        why=None,
        noise=noise,
        sims=sims,
        seed=seed,
        charts=charts,
        flaky=flaky[:SHOWN],
        flaky_total=len(flaky),
    )
