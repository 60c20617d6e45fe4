"""``checkweigh labels import|export``: people's labels between files and the store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import InputError
from ..reports import plain
from ._common import DbOption, _OneLineUsage, app, consoles, fail_input

labels_app = typer.Typer(
    name="labels",
    help="People's yes/no labels on checks, kept in the store: import and export them.",
    no_args_is_help=True,
    cls=_OneLineUsage,
)
app.add_typer(labels_app)


@labels_app.command("import")
def import_command(
    path: Annotated[
        Path,
        typer.Argument(
            metavar="FILE",
            help="Labels: CSV with a header (case, check, label, optional repeat, note, "
            "reviewer) or JSONL objects with the same keys; an export of `labels export`.",
            show_default=False,
        ),
    ],
    run_ref: Annotated[
        str | None,
        typer.Option(
            "--run",
            help="The run the labels were made on (id, id prefix, latest or previous): each "
            "label is bound to the evidence its judge saw there. Not needed for an export.",
            show_default=False,
        ),
    ] = None,
    reviewer: Annotated[
        str, typer.Option("--reviewer", help="Who labelled, for lines that do not say.")
    ] = "",
    db: DbOption = None,
) -> None:
    """Keep the labels of FILE in the store, where `align`, calibrated pass rates and gates
    read them. Nothing is stored unless every line is valid."""
    from ..alignment import labels_of_file, load_label_file, refuse_grades
    from ..store import Store, add_labels

    out, err = consoles()
    try:
        lines = load_label_file(path)
        refuse_grades(lines, path)
        store = Store(db)
        labels = labels_of_file(store, lines, path, run=run_ref, reviewer=reviewer.strip())
        written = add_labels(store, labels)
    except InputError as exc:
        fail_input(err, exc)
    out.print(plain(f"stored {written} label(s) from {len(lines)} line(s) of {path}"))


@labels_app.command("export")
def export_command(
    path: Annotated[
        Path,
        typer.Argument(
            metavar="FILE",
            help="Where to write: .csv or .jsonl (with fingerprints, reviewer, run and time).",
            show_default=False,
        ),
    ],
    checks: Annotated[
        list[str] | None,
        typer.Option("--check", help="Only this check (repeatable).", show_default=False),
    ] = None,
    db: DbOption = None,
) -> None:
    """Write the store's labels to FILE, to keep them beside the suite or import them into
    another store (`labels import FILE`)."""
    from ..alignment import export_text
    from ..store import Store, read_labels

    out, err = consoles()
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".ndjson"):
        fail_input(
            err,
            InputError(
                f"expected a .csv or .jsonl file, got {path.suffix or 'no extension'}", field="FILE"
            ),
        )
    try:
        store = Store(db)
        labels = read_labels(store, checks=checks)
        if checks:
            missing = sorted(set(checks) - {label.check for label in labels})
            if missing:
                raise InputError(
                    f"the store holds no labels of {', '.join(map(repr, missing))}",
                    field="--check",
                )
        text = export_text(labels, suffix)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write {path}: {exc.strerror or exc}", field="FILE") from None
    except InputError as exc:
        fail_input(err, exc)
    out.print(plain(f"wrote {len(labels)} label(s) to {path}"))
