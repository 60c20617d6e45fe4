"""``checkweigh stability``: how often a rerun would flip each case's pass/fail and the run's
gates, from the noise of the judge. Informational: exit 0, or 2 for bad input."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from ..core import (
    DEFAULT_SIMULATIONS,
    CaseResult,
    CheckNoise,
    PassPolicy,
    RubricError,
    noise_model,
    rubrics_from_snapshot,
    simulate_reruns,
)
from ..errors import InputError
from ..reports import (
    json_inert,
    plain,
    plots_missing,
    render_stability,
    write_stability_html,
    write_stability_png,
)
from ..store import RunInfo, Store, database_file
from ..suites import BUILTIN_CHECKS
from ._common import DbOption, app, check_writable, consoles, fail_input

_RATE_HELP = "RATE from 0 to 0.5 (the chance one judge answer differs from its usual answer)"


@app.command("stability")
def stability_command(
    run_ref: Annotated[
        str, typer.Argument(metavar="RUN", help="Run id, id prefix, latest or previous.")
    ],
    db: DbOption = None,
    noise: Annotated[
        list[str] | None,
        typer.Option(
            "--noise",
            help="RATE for every judge check, or CHECK=RATE (repeatable): the chance one judge "
            "answer differs from its usual answer. Without it, measured from the stored samples "
            "of checks with samples: k.",
            show_default=False,
        ),
    ] = None,
    sims: Annotated[
        int, typer.Option("--sims", min=1, max=1_000_000, help="Simulated reruns.")
    ] = DEFAULT_SIMULATIONS,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the simulation.")] = 0,
    png: Annotated[
        Path | None, typer.Option("--png", help="Write the score distribution plot here.")
    ] = None,
    html: Annotated[
        Path | None, typer.Option("--html", help="Write the HTML report (with the plot) here.")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the stability report as JSON here.")
    ] = None,
) -> None:
    """Estimate how often a rerun of RUN would flip each case's pass/fail and the run's gates,
    from its judge checks' noise; plot the score spread across simulated reruns."""
    out, err = consoles()
    try:
        default, per_check = _parse_noise(noise or [])
        for path, flag in ((png, "--png"), (html, "--html")):
            if path is not None and (missing := plots_missing()):
                raise InputError(f"{flag} needs the plots extra; {missing}", field=flag)
        for path, flag in ((png, "--png"), (html, "--html"), (json_out, "--json")):
            if path is not None:
                check_writable(path, flag, {"the database": database_file(db)})
        store = Store(db)
        info = store.get_run(run_ref)
        results = list(store.iter_results(info.id))
        model = _noise(info, results, default, per_check)
        rubrics = rubrics_from_snapshot(info.config)
    except RubricError as exc:
        fail_input(err, InputError(f"the run's snapshot: {exc}", field="rubrics"))
    except InputError as exc:
        fail_input(err, exc)
    policy = PassPolicy.from_snapshot(info.config.get("thresholds"))
    report = simulate_reruns(results, rubrics, policy, model, simulations=sims, seed=seed)
    render_stability(out, report, suite=info.suite, run_id=info.id)
    try:
        if png is not None:
            write_stability_png(png, report, title=f"{info.suite} {info.id}")
            out.print(plain(f"wrote the plot to {png}"))
        if html is not None:
            write_stability_html(html, report, suite=info.suite, run_id=info.id)
            out.print(plain(f"wrote the HTML report to {html}"))
        if json_out is not None:
            run = info.model_dump(mode="json", include={"id", "suite", "status", "created_at"})
            data = {"run": run, "stability": report.model_dump(mode="json")}
            json_out.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
            json_out.write_text(json_inert(text), encoding="utf-8")
            out.print(plain(f"wrote the stability report to {json_out}"))
    except OSError as exc:
        where = exc.filename or "an output file"
        fail_input(err, InputError(f"cannot write {where}: {exc.strerror or exc}"))


def _rate(text: str) -> float | None:
    try:
        rate = float(text)
    except ValueError:
        return None
    return rate if 0.0 <= rate <= 0.5 and not math.isnan(rate) else None


def _parse_noise(items: list[str]) -> tuple[float | None, dict[str, float]]:
    """``--noise RATE`` (at most once) and ``--noise CHECK=RATE`` flags."""
    default: float | None = None
    per_check: dict[str, float] = {}
    for item in items:
        name, sep, value = item.rpartition("=")
        rate = _rate(value if sep else item)
        if rate is None or (sep and not name.strip()):
            raise InputError(
                f"expected RATE or CHECK=RATE with {_RATE_HELP}, got {item!r}", field="--noise"
            )
        if not sep:
            if default is not None:
                raise InputError("RATE for every judge check given twice", field="--noise")
            default = rate
        else:
            per_check[name.strip()] = rate
    return default, per_check


def _judge_samples(config: Mapping[str, Any]) -> dict[str, int]:
    """The run's judge checks and the answers each verdict is the majority of."""
    out: dict[str, int] = {}
    for name, entry in config.get("checks", {}).items():
        spec = entry.get("spec") or {}
        if BUILTIN_CHECKS.needs_judge(spec.get("type")):
            out[name] = int(spec.get("samples", 1))
    return out


def _noise(
    info: RunInfo, results: list[CaseResult], default: float | None, per_check: dict[str, float]
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
            field="--noise",
        )
    if default is not None and not judges:
        raise InputError(
            f"run {info.id} has no judge checks for RATE to apply to; name a check with CHECK=RATE",
            field="--noise",
        )
    if not judges and not per_check:
        raise InputError(
            f"run {info.id} has no judge checks and no --noise was given: nothing to simulate "
            "(--noise CHECK=RATE treats a check as noisy)",
            field="RUN",
        )
    model = noise_model(results, judges, default=default, per_check=per_check)
    if all(n.source == "unmeasured" for n in model):
        raise InputError(
            f"run {info.id} stored no repeated judge samples for {', '.join(judges)} "
            f"(samples: k > 1): nothing to measure the noise from; give --noise with {_RATE_HELP}",
            field="RUN",
        )
    return model
