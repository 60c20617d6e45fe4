"""``checkweigh compare BASE CANDIDATE``: regressions between two stored runs.

Exit codes: 0 no regression (or one the paired test cannot tell from noise, unless --strict),
1 regression, 2 input error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import orjson
import typer

from ..core import CompareVerdict
from ..errors import InputError
from ..reports import comparison_markdown, json_inert, plain, render_comparison
from ..service import COMPARE_DEFAULTS, compare_stored, compare_thresholds, comparison_json
from ..store import Store, database_file
from ._common import (
    EXIT_GATES_FAILED,
    DbOption,
    app,
    check_writable,
    consoles,
    fail_input,
    warn_abandoned,
)

_RunRef = Annotated[str, typer.Argument(help="Run id, id prefix, latest or previous.")]
_FLAGS = {
    "max_pass_rate_drop": "--max-pass-rate-drop",
    "max_avg_score_drop": "--max-avg-score-drop",
    "max_latency_increase_pct": "--max-latency-increase-pct",
    "min_latency_increase_ms": "--min-latency-increase-ms",
    "case_score_delta": "--case-score-threshold",
    "alpha": "--alpha",
}
_D = COMPARE_DEFAULTS
"""The defaults live with the thresholds, where the API reads them too."""


@app.command()
def compare(
    base: _RunRef,
    candidate: _RunRef,
    db: DbOption = None,
    max_pass_rate_drop: Annotated[
        float,
        typer.Option("--max-pass-rate-drop", help="Points of case pass rate that may be lost."),
    ] = _D.max_pass_rate_drop,
    max_avg_score_drop: Annotated[
        float,
        typer.Option(
            "--max-avg-score-drop", help="Points (0-100) of average score that may be lost."
        ),
    ] = _D.max_avg_score_drop,
    max_latency_increase_pct: Annotated[
        float,
        typer.Option("--max-latency-increase-pct", help="Percent the mean latency may grow."),
    ] = _D.max_latency_increase_pct,
    min_latency_increase_ms: Annotated[
        float,
        typer.Option(
            "--min-latency-increase-ms",
            help="Latency increases smaller than this are jitter, whatever the percentage.",
        ),
    ] = _D.min_latency_increase_ms,
    case_score_threshold: Annotated[
        float,
        typer.Option(
            "--case-score-threshold",
            help="Points a case's score must move, without a pass/fail flip, to count.",
        ),
    ] = _D.case_score_delta,
    alpha: Annotated[
        float, typer.Option("--alpha", help="Significance level of the paired tests.")
    ] = _D.alpha,
    strict: Annotated[
        bool,
        typer.Option("--strict", help="Fail on any exceeded threshold, significant or not."),
    ] = False,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the comparison as JSON here.")
    ] = None,
    markdown: Annotated[
        Path | None, typer.Option("--markdown", help="Write the comparison as Markdown here.")
    ] = None,
) -> None:
    """Compare CANDIDATE with BASE: suite-level thresholds, case flips, per-check changes."""
    out, err = consoles()
    try:
        thresholds = compare_thresholds(
            {
                "max_pass_rate_drop": max_pass_rate_drop,
                "max_avg_score_drop": max_avg_score_drop,
                "max_latency_increase_pct": max_latency_increase_pct,
                "min_latency_increase_ms": min_latency_increase_ms,
                "case_score_delta": case_score_threshold,
                "alpha": alpha,
            },
            _FLAGS,
        )
        for path, flag in ((json_out, "--json"), (markdown, "--markdown")):
            if path is not None:
                check_writable(path, flag, {"the database": database_file(db)})
        compared = compare_stored(Store(db), base, candidate, thresholds, strict=strict)
    except InputError as exc:
        fail_input(err, exc)
    base_run, cand_run, result = compared
    if base_run.suite != cand_run.suite:
        out.print(
            plain(
                f"note: comparing different suites ({base_run.suite} and {cand_run.suite})",
                style="yellow",
            )
        )
    for info in (base_run, cand_run):
        warn_abandoned(err, info)
    render_comparison(out, result, base_run.id, cand_run.id)
    try:
        if json_out is not None:
            data = comparison_json(compared)
            json_out.parent.mkdir(parents=True, exist_ok=True)
            text = orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()
            json_out.write_text(json_inert(text), encoding="utf-8")
            out.print(plain(f"wrote {json_out}"))
        if markdown is not None:
            markdown.parent.mkdir(parents=True, exist_ok=True)
            markdown.write_text(
                comparison_markdown(result, base_run.id, cand_run.id), encoding="utf-8"
            )
            out.print(plain(f"wrote {markdown}"))
    except OSError as exc:
        fail_input(err, InputError(f"cannot write: {exc.strerror or exc}", field="output"))
    raise typer.Exit(EXIT_GATES_FAILED if result.verdict is CompareVerdict.REGRESSION else 0)
