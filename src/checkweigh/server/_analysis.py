"""``/api/runs/compare`` and ``/api/runs/{id}/stability``: what ``checkweigh compare --json``
and ``checkweigh stability --json`` write, from the same builders."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Query
from starlette.requests import Request
from starlette.responses import Response

from ..core import DEFAULT_SIMULATIONS
from ..errors import InputError
from ..service import (
    COMPARE_DEFAULTS,
    comparison_json,
    stability_json,
    stability_with_noise,
)
from ..store import Store
from ._deps import compared, run_of, store_of
from ._errors import from_input_error
from ._off_loop import Stop, off_loop

router = APIRouter(tags=["analysis"])
_JSON = "application/json"
StoreDep = Annotated[Store, Depends(store_of)]
_D = COMPARE_DEFAULTS
_PARAMS = {
    "max_pass_rate_drop": "max_pass_rate_drop",
    "max_avg_score_drop": "max_avg_score_drop",
    "max_latency_increase_pct": "max_latency_increase_pct",
    "min_latency_increase_ms": "min_latency_increase_ms",
    "case_score_delta": "case_score_threshold",
    "alpha": "alpha",
}


def _json(data: dict[str, Any]) -> Response:
    """``data`` (JSON-ready: a model dump) as the answer, encoded by orjson: FastAPI's own
    encoder walks every value of a 10,000-case report in Python (0.5 s for a stability
    report) to find what it already is."""
    return Response(orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS), media_type=_JSON)


@router.get("/runs/compare", response_model=dict[str, Any])
def compare(
    request: Request,
    store: StoreDep,
    base: Annotated[
        str,
        Query(
            description="The base run (id, prefix, latest, previous, or a monitor's window: "
            "monitor:NAME, monitor:NAME@-7d, monitor:NAME@2026-12-02T10:00)."
        ),
    ],
    candidate: Annotated[str, Query(description="The candidate run.")],
    max_pass_rate_drop: Annotated[
        float, Query(description="Points of case pass rate that may be lost.")
    ] = _D.max_pass_rate_drop,
    max_avg_score_drop: Annotated[
        float, Query(description="Points (0-100) of average score that may be lost.")
    ] = _D.max_avg_score_drop,
    max_latency_increase_pct: Annotated[
        float, Query(description="Percent the mean latency may grow.")
    ] = _D.max_latency_increase_pct,
    min_latency_increase_ms: Annotated[
        float, Query(description="Latency increases smaller than this are jitter.")
    ] = _D.min_latency_increase_ms,
    case_score_threshold: Annotated[
        float, Query(description="Points a case's score must move, without a flip, to count.")
    ] = _D.case_score_delta,
    alpha: Annotated[float, Query(description="Significance level of the paired tests.")] = (
        _D.alpha
    ),
    strict: Annotated[
        bool, Query(description="Any exceeded threshold is a regression, significant or not.")
    ] = False,
) -> Response:
    """Compare ``candidate`` with ``base``: ``regression_detected``, the verdict, the flips
    (regressions, improvements), per-check changes and the paired tests' p-values. Two
    monitor windows (``monitor:NAME@-7d``, ``monitor:NAME``: different traces) are compared
    unpaired: ``unpaired`` is true and the tests are Fisher's exact and Welch's t."""
    values = {
        "max_pass_rate_drop": max_pass_rate_drop,
        "max_avg_score_drop": max_avg_score_drop,
        "max_latency_increase_pct": max_latency_increase_pct,
        "min_latency_increase_ms": min_latency_increase_ms,
        "case_score_delta": case_score_threshold,
        "alpha": alpha,
    }
    _, found = compared(request, base, candidate, values, _PARAMS, strict)
    return _json(comparison_json(found.base.id, found.candidate.id, found.result))


@router.get("/runs/{run_id}/stability", response_model=dict[str, Any])
async def stability(
    request: Request,
    store: StoreDep,
    run_id: str,
    noise: Annotated[
        list[str] | None,
        Query(description="RATE for every judge check, or CHECK=RATE (repeatable)."),
    ] = None,
    sims: Annotated[int, Query(ge=1, le=100_000, description="Simulated reruns.")] = (
        DEFAULT_SIMULATIONS
    ),
    seed: Annotated[int, Query(ge=0, le=2**63 - 1, description="Seed of the simulation.")] = 0,
) -> Response:
    """How often a rerun would flip each case's pass/fail and the run's gates, from the
    judge checks' noise (measured from stored samples unless ``noise`` gives it). Computed
    off the event loop; it stops (503) when the client leaves or the server stops."""

    def work(stop: Stop) -> Response:
        info = run_of(store, run_id)
        try:
            info, report = stability_with_noise(
                store, info.id, noise or [], simulations=sims, seed=seed, stop=stop
            )
        except InputError as exc:
            raise from_input_error(exc) from None
        return _json(stability_json(info, report))

    return await off_loop(request, work)
