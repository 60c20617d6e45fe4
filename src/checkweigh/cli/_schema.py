"""``checkweigh schema case|suite|run-config|result``: the JSON Schema of a case, a suite file,
a stored run's configuration or a stored result record."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import InputError
from ._common import app, consoles, fail_input

_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class SchemaKind(StrEnum):
    """What to describe."""

    case = "case"
    suite = "suite"
    run_config = "run-config"
    result = "result"


def case_schema() -> dict[str, Any]:
    """The JSON Schema of one case (one line of a JSONL cases file, or one item of a YAML or
    JSON list of cases), derived from :class:`~checkweigh.core.Case`."""
    from ..core import Case

    return {"$schema": _DIALECT, **Case.model_json_schema()}


def suite_schema() -> dict[str, Any]:
    """The JSON Schema of a suite file (each check's own fields are not spelled out; its
    ``type`` lists the known types, an installed plugin's included, as examples)."""
    from ..suites import SuiteSpec

    schema = {"$schema": _DIALECT, **_with_shorthands(SuiteSpec.model_json_schema())}
    _name_check_types(schema["properties"]["checks"])
    return schema


def _name_check_types(checks: dict[str, Any]) -> None:
    """Each check's ``type``: the built-in and installed plugins' names as examples (a class
    by dotted path is a type too, so they do not restrict it)."""
    from ..plugins import PluginError
    from ..suites import CHECK_TYPES

    try:
        names = CHECK_TYPES.names()
    except PluginError:  # a plugin claims a built-in's name: `checkweigh plugins` says which
        names = CHECK_TYPES.builtin_names()
    check = checks.get("additionalProperties")
    if isinstance(check, dict):
        check["properties"] = {
            "type": {
                "type": "string",
                "description": "A built-in check type, an installed plugin's, or a class by "
                "dotted path (mypkg.checks.MyCheck).",
                "examples": list(names),
            }
        }


def _with_shorthands(node: Any) -> Any:
    """A rubric weight may be a bare number, which the loader turns into ``{weight: N}``
    before validating, and ``cases:`` a bare path (``{path: ...}``): say so where the schema
    refers to them."""
    if isinstance(node, list):
        return [_with_shorthands(n) for n in node]
    if not isinstance(node, dict):
        return node
    if node.get("$ref") == "#/$defs/WeightSpec":
        return {"anyOf": [{"type": "number", "minimum": 0}, node]}
    if node.get("$ref") == "#/$defs/CasesSpec":
        return {"anyOf": [{"type": "string", "minLength": 1}, node]}
    return {k: _with_shorthands(v) for k, v in node.items()}


@app.command("schema")
def schema_command(
    kind: Annotated[
        SchemaKind,
        typer.Argument(
            metavar="case|suite|run-config|result",
            help="A case (of a cases file), a suite file, a run's stored configuration, or a "
            "stored result record (an item of --json's results).",
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write the schema here instead of printing it."),
    ] = None,
) -> None:
    """Print the JSON Schema of a case, a suite file, or what a run stores (for editors,
    validators and readers of the database or of --json exports)."""
    if kind is SchemaKind.case:
        schema = case_schema()
    elif kind is SchemaKind.suite:
        schema = suite_schema()
    else:
        from ..core import ResultRecord, RunConfig

        model = RunConfig if kind is SchemaKind.run_config else ResultRecord
        schema = {"$schema": _DIALECT, **model.model_json_schema()}
    text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
    if out is None:
        typer.echo(text, nl=False)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        _, err = consoles()
        fail_input(err, InputError(f"cannot write: {exc.strerror or exc}", file=out))
