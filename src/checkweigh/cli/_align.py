"""``checkweigh align``: how well a stored run's verdicts agree with human labels."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import InputError
from ..reports import plain
from ._common import DbOption, app, consoles, fail_input


@app.command("align")
def align_command(
    run_ref: Annotated[
        str, typer.Argument(metavar="RUN", help="Run id, id prefix, latest or previous.")
    ],
    labels_path: Annotated[
        Path | None,
        typer.Argument(
            metavar="[LABELS]",
            help="Human labels: CSV with a header (case, check, label, optional repeat, note, "
            "grade) or JSONL objects with the same keys. Without it, the labels the store holds "
            "for the run's executions (made in the browser, posted to the API or imported).",
            show_default=False,
        ),
    ] = None,
    db: DbOption = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the full alignment report as JSON here.")
    ] = None,
    checks: Annotated[
        list[str] | None,
        typer.Option("--check", help="Only this check (repeatable).", show_default=False),
    ] = None,
) -> None:
    """Compare RUN's verdicts with human LABELS: accuracy, Cohen's kappa, precision and recall
    of yes per check, and the cases where they disagree; for graded metrics, the rank
    correlation with human grades, and yes/no judge checks against graded metrics."""
    if labels_path is None:
        _align_stored(run_ref, db, json_out, checks)
        return
    from ..alignment import (
        check_grades,
        check_roles,
        load_label_file,
        render_alignment,
        write_alignment_json,
    )
    from ..core import align, pair_labels
    from ..store import Store

    out, err = consoles()
    try:
        lines = load_label_file(labels_path)
        labels = [line.label for line in lines]
        if checks:
            labelled = sorted({label.check for label in labels})
            unknown = [name for name in checks if name not in labelled]
            if unknown:
                raise InputError(
                    f"no labels for check {', '.join(map(repr, unknown))} in {labels_path}; "
                    f"labelled checks: {', '.join(labelled)}",
                    field="--check",
                )
            lines = [line for line in lines if line.label.check in checks]
            labels = [line.label for line in lines]
        store = Store(db)
        info = store.get_run(run_ref)
        roles = check_roles(info.config, {label.check for label in labels})
        check_grades(lines, roles, labels_path)
    except InputError as exc:
        fail_input(err, exc)
    report = align(pair_labels(labels, store.iter_results(info.id)), roles)
    render_alignment(
        out,
        report,
        run_id=info.id,
        suite=info.suite,
        labels_path=str(labels_path),
        labels=len(labels),
    )
    if json_out is not None:
        run = info.model_dump(mode="json", include={"id", "suite", "status", "created_at"})
        try:
            write_alignment_json(json_out, report, run=run, labels_path=str(labels_path))
        except OSError as exc:
            fail_input(
                err, InputError(f"cannot write {json_out}: {exc.strerror or exc}", field="--json")
            )
        out.print(plain(f"wrote the alignment report to {json_out}"))


def _align_stored(
    run_ref: str, db: str | None, json_out: Path | None, checks: list[str] | None
) -> None:
    from ..alignment import check_roles, render_alignment, stored_pairs, write_alignment_json
    from ..core import align
    from ..store import Store, read_labels, run_labels

    out, err = consoles()
    try:
        store = Store(db)
        info = store.get_run(run_ref)
        in_run = list((info.config.get("checks") or {}).keys())
        if checks:
            unknown = [name for name in checks if name not in in_run]
            if unknown:
                raise InputError(
                    f"run {info.id} has no check {', '.join(map(repr, unknown))}; its checks: "
                    f"{', '.join(in_run)}",
                    field="--check",
                )
        names = checks or sorted({label.check for label in read_labels(store)} & set(in_run))
        if not names:
            raise InputError(
                f"the store holds no labels of run {info.id}'s checks; label in the browser "
                "(checkweigh serve), or give a LABELS file (or `checkweigh labels import`)",
                field="LABELS",
            )
        labelled = run_labels(store, info.id, names)
    except InputError as exc:
        fail_input(err, exc)
    pairs = stored_pairs(labelled.values())
    report = align(pairs, check_roles(info.config, names))
    source = f"the labels in {store.safe_url}"
    render_alignment(
        out, report, run_id=info.id, suite=info.suite, labels_path=source, labels=len(pairs)
    )
    if json_out is not None:
        run = info.model_dump(mode="json", include={"id", "suite", "status", "created_at"})
        try:
            write_alignment_json(json_out, report, run=run, labels_path=source)
        except OSError as exc:
            fail_input(
                err, InputError(f"cannot write {json_out}: {exc.strerror or exc}", field="--json")
            )
        out.print(plain(f"wrote the alignment report to {json_out}"))
