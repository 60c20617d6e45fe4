"""``checkweigh compare BASE CANDIDATE``: regressions between two runs, stored or exported
(``--baseline`` / ``--candidate`` read the files ``run --json`` writes).

Exit codes: 0 no regression (or one the paired test cannot tell from noise, unless --strict),
1 regression, 2 input error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import orjson
import typer

from ..core import CompareThresholds
from ..errors import InputError, StoreError
from ..reports import json_inert, plain
from ._common import (
    EXIT_GATES_FAILED,
    DbOption,
    app,
    check_writable,
    consoles,
    fail_input,
    warn_abandoned,
)

_BaseRef = Annotated[
    str | None,
    typer.Argument(
        metavar="BASE",
        help="Run id, id prefix, latest or previous (with --baseline: the CANDIDATE).",
        show_default=False,
    ),
]
_CandidateRef = Annotated[
    str | None,
    typer.Argument(
        metavar="CANDIDATE",
        help="Run id, id prefix, latest or previous.",
        show_default=False,
    ),
]

_FLAGS = {
    "max_pass_rate_drop": "--max-pass-rate-drop",
    "max_avg_score_drop": "--max-avg-score-drop",
    "max_latency_increase_pct": "--max-latency-increase-pct",
    "min_latency_increase_ms": "--min-latency-increase-ms",
    "case_score_delta": "--case-score-threshold",
    "alpha": "--alpha",
}
_D = CompareThresholds()
"""The defaults live with the thresholds, where the API reads them too."""


@app.command()
def compare(
    base: _BaseRef = None,
    candidate: _CandidateRef = None,
    db: DbOption = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            help="Read the base run from this export (the file `run --json` writes), e.g. "
            "results.json kept from the main branch.",
            show_default=False,
        ),
    ] = None,
    candidate_file: Annotated[
        Path | None,
        typer.Option(
            "--candidate",
            help="Read the candidate run from this export instead of the database "
            "(default: CANDIDATE, else the latest run of the baseline's suite in --db).",
            show_default=False,
        ),
    ] = None,
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
        typer.Option(
            "--strict",
            help="Fail on any exceeded threshold, significant or not, and on runs judged "
            "differently (another judge, judge mode or check version).",
        ),
    ] = False,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the comparison as JSON here.")
    ] = None,
    markdown: Annotated[
        Path | None,
        typer.Option(
            "--markdown", help="Write the comparison as Markdown (a pull-request comment) here."
        ),
    ] = None,
    server: Annotated[
        str | None,
        typer.Option(
            "--server-url",
            help="Link each case in the Markdown to its page on this checkweigh server.",
            show_default=False,
        ),
    ] = None,
    rejudge_base: Annotated[
        bool,
        typer.Option(
            "--rejudge",
            help="When the runs were judged differently: judge the base run's stored cases "
            "again with the candidate's judge and checks (no agent call; cached answers "
            "reused), store that run, split each change into a judge part and an agent part, "
            "and decide on the agent part.",
        ),
    ] = False,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help="With --rejudge: PROVIDER:MODEL to rejudge with when the candidate's stored "
            "judge cannot serve (API keys from the environment); another judge than the "
            "candidate's leaves the runs judged differently.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Compare CANDIDATE with BASE: suite-level thresholds, case flips, per-check changes.

    Runs come from the database, or from exports: `compare --baseline results.json` compares
    the latest run of the same suite in --db with a run exported on the main branch.
    """
    from ..core import CompareVerdict, calibrated_changes
    from ..reports import comparison_markdown, render_comparison, server_url
    from ..runs import RunStopped
    from ..service import (
        compare_results,
        compare_thresholds,
        comparison_json,
        judged,
        undecided,
    )
    from ..store import database_file
    from ._app import _stopped
    from ._compare_runs import rejudged_base, resolve

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
        if server is not None:
            if markdown is None:
                raise InputError(
                    "links go in the Markdown comment; give --markdown FILE too",
                    field="--server-url",
                )
            server = server_url(server)
        # two exports need no database: its URL is not even resolved (that makes its folder)
        uses_store = baseline is None or candidate_file is None
        inputs = {
            "the database": database_file(db) if uses_store else None,
            "the baseline": baseline,
            "the candidate": candidate_file,
        }
        for path, flag in ((json_out, "--json"), (markdown, "--markdown")):
            if path is not None:
                check_writable(path, flag, inputs)
        if judge is not None and not rejudge_base:
            raise InputError("a judge is chosen for --rejudge: give --rejudge too", field="--judge")
        refs = [r for r in (base, candidate) if r is not None]
        base_run, cand_run = resolve(refs, baseline, candidate_file, db)
        split = None
        if rejudge_base:
            rejudged = rejudged_base(base_run, cand_run, judge, err)
            if rejudged is None:
                out.print(plain("note: the runs were judged alike: --rejudge has nothing to do"))
            else:
                base_run, split = rejudged
        # two monitor windows (different traces) are compared unpaired
        result = compare_results(
            base_run.results,
            cand_run.results,
            policies=(base_run.policy, cand_run.policy),
            configs=(base_run.config, cand_run.config),
            ids=(base_run.id, cand_run.id),
            thresholds=thresholds,
            strict=strict,
        )
        result = judged(result, base_run.config, cand_run.config)
        result = undecided(result, base_run.info, cand_run.info)
        changes = calibrated_changes(base_run.calibration(), cand_run.calibration())
        result = result.model_copy(update={"calibrated": changes, "rejudge": split})
    except InputError as exc:
        fail_input(err, exc)
    except StoreError as exc:
        fail_input(err, InputError(str(exc)))
    except RunStopped as exc:  # the rejudge's run: Ctrl-C, or its store failing
        _stopped(err, exc)
    if base_run.suite != cand_run.suite:
        out.print(
            plain(
                f"note: comparing different suites ({base_run.suite} and {cand_run.suite})",
                style="yellow",
            )
        )
    for side in (base_run, cand_run):
        if side.info is not None:
            warn_abandoned(err, side.info)
    for difference in result.judged_differently:
        err.print(
            plain(
                f"warning: the runs were judged differently ({difference}): a change may be "
                "the judge's, not the agent's",
                style="yellow",
            )
        )
    render_comparison(out, result, base_run.id, cand_run.id)
    try:
        if json_out is not None:
            data = comparison_json(base_run.id, cand_run.id, result)
            json_out.parent.mkdir(parents=True, exist_ok=True)
            text = orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()
            json_out.write_text(json_inert(text), encoding="utf-8")
            out.print(plain(f"wrote {json_out}"))
        if markdown is not None:
            markdown.parent.mkdir(parents=True, exist_ok=True)
            text = comparison_markdown(
                result,
                base_run.id,
                cand_run.id,
                server=server,
                # an export has no page on the server; the candidate is the run CI publishes
                link_base=base_run.file is None,
            )
            markdown.write_text(text, encoding="utf-8")
            out.print(plain(f"wrote {markdown}"))
    except OSError as exc:
        fail_input(err, InputError(f"cannot write: {exc.strerror or exc}", field="output"))
    if strict and result.judged_differently:
        err.print(
            plain(
                "failed: --strict compares only runs judged alike; judge both runs the same "
                "way, or compare without --strict",
                style="red",
            )
        )
        raise typer.Exit(EXIT_GATES_FAILED)
    raise typer.Exit(EXIT_GATES_FAILED if result.verdict is CompareVerdict.REGRESSION else 0)
