"""``checkweigh stability``: how often a rerun would flip each case's pass/fail and the run's
gates, from the noise of the judge. Informational: exit 0, or 2 for bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ..core import DEFAULT_SIMULATIONS
from ..errors import InputError
from ..reports import json_inert, plain
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
    from ..reports import plots_missing, render_stability, write_stability_html, write_stability_png
    from ..service import parse_noise, stability_json, stability_of
    from ..store import Store, database_file

    out, err = consoles()
    try:
        default, per_check = parse_noise(noise or [])
        for path, flag in ((png, "--png"), (html, "--html")):
            if path is not None and (missing := plots_missing()):
                raise InputError(f"{flag} needs the plots extra; {missing}", field=flag)
        for path, flag in ((png, "--png"), (html, "--html"), (json_out, "--json")):
            if path is not None:
                check_writable(path, flag, {"the database": database_file(db)})
        info, report = stability_of(
            Store(db), run_ref, default=default, per_check=per_check, simulations=sims, seed=seed
        )
    except InputError as exc:
        fail_input(err, exc)
    render_stability(out, report, suite=info.suite, run_id=info.id)
    try:
        if png is not None:
            write_stability_png(png, report, title=f"{info.suite} {info.id}")
            out.print(plain(f"wrote the plot to {png}"))
        if html is not None:
            write_stability_html(html, report, suite=info.suite, run_id=info.id)
            out.print(plain(f"wrote the HTML report to {html}"))
        if json_out is not None:
            data = stability_json(info, report)
            json_out.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
            json_out.write_text(json_inert(text), encoding="utf-8")
            out.print(plain(f"wrote the stability report to {json_out}"))
    except OSError as exc:
        where = exc.filename or "an output file"
        fail_input(err, InputError(f"cannot write {where}: {exc.strerror or exc}"))
