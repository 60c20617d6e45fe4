"""Simulating a stored run's reruns from its judge checks' noise, and the report's JSON."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from .._gc import gc_paused
from ..core import (
    DEFAULT_SIMULATIONS,
    AutoSamples,
    CaseResult,
    CheckNoise,
    PassPolicy,
    RubricError,
    SimulationStopped,
    StabilityReport,
    noise_model,
    parse_samples,
    rubrics_from_snapshot,
    simulate_reruns,
)
from ..errors import InputError
from ..store import RunInfo, Store
from ..suites import BUILTIN_CHECKS

_ASK_EVERY = 500
"""Results read between two looks at ``stop``."""
_RATE_HELP = "RATE from 0 to 0.5 (the chance one judge answer differs from its usual answer)"


def _rate(text: str) -> float | None:
    try:
        rate = float(text)
    except ValueError:
        return None
    return rate if 0.0 <= rate <= 0.5 and not math.isnan(rate) else None


def parse_noise(items: list[str], field: str = "--noise") -> tuple[float | None, dict[str, float]]:
    """``RATE`` (at most once) and ``CHECK=RATE`` items: the rate of every judge check and the
    rates of named checks.

    Raises:
        InputError: an item that is neither, or RATE given twice (named ``field``).
    """
    default: float | None = None
    per_check: dict[str, float] = {}
    for item in items:
        name, sep, value = item.rpartition("=")
        rate = _rate(value if sep else item)
        if rate is None or (sep and not name.strip()):
            raise InputError(
                f"expected RATE or CHECK=RATE with {_RATE_HELP}, got {item!r}", field=field
            )
        if not sep:
            if default is not None:
                raise InputError("RATE for every judge check given twice", field=field)
            default = rate
        else:
            per_check[name.strip()] = rate
    return default, per_check


def _judge_samples(config: Mapping[str, Any]) -> dict[str, int | AutoSamples]:
    """The run's judge checks and the answers each verdict is the majority of (a fixed count,
    or the adaptive rule of ``samples: auto``)."""
    out: dict[str, int | AutoSamples] = {}
    for name, entry in config.get("checks", {}).items():
        spec = entry.get("spec") or {}
        if BUILTIN_CHECKS.needs_judge(spec.get("type")):
            try:
                out[name] = parse_samples(spec.get("samples", 1))
            except ValueError as exc:  # a snapshot edited by hand, or from a newer version
                raise InputError(
                    f"the run's snapshot: {exc}", field=f"checks.{name}.samples"
                ) from None
    return out


def _noise(
    info: RunInfo,
    results: list[CaseResult],
    default: float | None,
    per_check: dict[str, float],
    field: str,
) -> list[CheckNoise]:
    """The noise model, or one line on why there is nothing to simulate."""
    if not results:
        raise InputError(f"run {info.id} stored no results: nothing to simulate", field="RUN")
    judges = _judge_samples(info.config)
    known = list(info.config.get("checks", {}))
    unknown = [name for name in per_check if name not in known]
    if unknown:
        raise InputError(
            f"run {info.id} has no check {', '.join(map(repr, unknown))}; "
            f"its checks: {', '.join(known)}",
            field=field,
        )
    if default is not None and not judges:
        raise InputError(
            f"run {info.id} has no judge checks for RATE to apply to; name a check with CHECK=RATE",
            field=field,
        )
    if not judges and not per_check:
        raise InputError(
            f"run {info.id} has no judge checks and no {field} was given: nothing to simulate "
            f"({field} CHECK=RATE treats a check as noisy)",
            field="RUN",
        )
    model = noise_model(results, judges, default=default, per_check=per_check)
    if all(n.source == "unmeasured" for n in model):
        raise InputError(
            f"run {info.id} stored no repeated judge samples for {', '.join(judges)} "
            f"(samples: k > 1): nothing to measure the noise from; give {field} with {_RATE_HELP}",
            field="RUN",
        )
    return model


def stability_of(
    store: Store,
    ref: str,
    *,
    default: float | None = None,
    per_check: dict[str, float] | None = None,
    simulations: int = DEFAULT_SIMULATIONS,
    seed: int = 0,
    noise_field: str = "--noise",
    stop: Callable[[], bool] | None = None,
) -> tuple[RunInfo, StabilityReport]:
    """Simulate reruns of the stored run ``ref`` from its judge checks' noise.

    Args:
        default: the noise rate of every judge check (None: measured from stored samples).
        per_check: noise rates of named checks.
        noise_field: how the noise option is named in an error (a flag or a query parameter).
        stop: asked while the results are read and between batches of reruns; True ends the
            work with :class:`SimulationStopped` (the server's client left, or it is stopping).

    Raises:
        InputError: an unknown run, or nothing to simulate (and why).
        SimulationStopped: ``stop`` answered True.
    """
    info = store.get_run(ref)
    results: list[CaseResult] = []
    with gc_paused():  # the run's results are read whole (see checkweigh._gc)
        for result in store.iter_results(info.id):
            if len(results) % _ASK_EVERY == 0 and stop is not None and stop():
                raise SimulationStopped(f"stopped after reading {len(results)} results")
            results.append(result)
    model = _noise(info, results, default, dict(per_check or {}), noise_field)
    try:
        rubrics = rubrics_from_snapshot(info.config)
    except RubricError as exc:
        raise InputError(f"the run's snapshot: {exc}", field="rubrics") from None
    policy = PassPolicy.from_snapshot(info.config.get("thresholds"))
    try:
        report = simulate_reruns(
            results, rubrics, policy, model, simulations=simulations, seed=seed, stop=stop
        )
    except ValueError as exc:  # a case with more noisy checks than a rerun's key can hold
        raise InputError(str(exc), field=noise_field) from None
    return info, report


def stability_json(info: RunInfo, report: StabilityReport) -> dict[str, Any]:
    """The report as ``checkweigh stability --json`` writes it and the API answers it."""
    run = info.model_dump(mode="json", include={"id", "suite", "status", "created_at"})
    return {"run": run, "stability": report.model_dump(mode="json")}


def stability_with_noise(
    store: Store,
    ref: str,
    noise: list[str],
    *,
    simulations: int = DEFAULT_SIMULATIONS,
    seed: int = 0,
    field: str = "noise",
    stop: Callable[[], bool] | None = None,
) -> tuple[RunInfo, StabilityReport]:
    """:func:`stability_of` with the noise given as ``RATE`` / ``CHECK=RATE`` items (query
    parameters named ``field``), as the server takes them.

    Raises:
        InputError: a bad item (field ``field``), or a run with nothing to simulate.
    """
    default, per_check = parse_noise(noise, field=field)
    return stability_of(
        store,
        ref,
        default=default,
        per_check=per_check,
        simulations=simulations,
        seed=seed,
        noise_field=field,
        stop=stop,
    )
