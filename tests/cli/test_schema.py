"""``checkweigh schema case|suite|run-config|result``, and the worked example of docs/cases.md
against them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.core import Case
from checkweigh.suites import iter_cases
from checkweigh.suites._yaml import load_yaml

DOC = Path(__file__).parents[2] / "docs" / "cases.md"
runner = CliRunner()


def _schema(kind: str) -> dict[str, Any]:
    result = runner.invoke(app, ["schema", kind])
    assert result.exit_code == 0, result.output
    schema: dict[str, Any] = json.loads(result.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def _blocks() -> tuple[str, str, str]:
    """The worked example's case list (YAML), its JSONL line and its suite."""
    example = DOC.read_text().split("## A worked example", 1)[1]
    blocks = re.findall(r"```(yaml|json)\n(.*?)```", example, re.DOTALL)
    assert [lang for lang, _ in blocks] == ["yaml", "json", "yaml"]
    return blocks[0][1], blocks[1][1], blocks[2][1]


def test_schema_case_is_the_case_model_and_rejects_what_the_loader_rejects() -> None:
    schema = _schema("case")
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert {k: v for k, v in schema.items() if k != "$schema"} == Case.model_json_schema()
    step = schema["$defs"]["Step"]["properties"]
    assert step["kind"]["enum"] == ["user", "assistant", "tool_call", "system", "event"]
    assert "cost_usd" in step["attributes"]["description"]
    validator = jsonschema.Draft202012Validator(schema)
    good = {"id": "c1", "trace": [{"kind": "tool_call", "name": "book", "arguments": "{}"}]}
    assert not list(validator.iter_errors(good))
    for bad in (
        {"trace": []},  # no id
        {"id": "c1", "trace": [{"kind": "tool", "name": "book"}]},
        {"id": "c1", "trace": [{"kind": "tool_call", "tool_call_id": "x"}]},
        {"id": "c1", "latency_ms": -5},
        {"id": "c1", "score": 1},
    ):
        assert list(validator.iter_errors(bad)), bad


def test_the_worked_example_validates_loads_and_scores(tmp_path: Path) -> None:
    cases_yaml, line, suite = _blocks()
    validator = jsonschema.Draft202012Validator(_schema("case"))
    cases, _ = load_yaml(cases_yaml)
    for raw in [*cases, json.loads(line)]:
        assert not [e.message for e in validator.iter_errors(raw)]
    suite_data, _ = load_yaml(suite)
    assert not [
        e.message for e in jsonschema.Draft202012Validator(_schema("suite")).iter_errors(suite_data)
    ]
    (tmp_path / "cases.yaml").write_text(cases_yaml)
    (tmp_path / "cases.jsonl").write_text(line)
    (case,) = iter_cases(tmp_path / "cases.yaml")
    (short,) = iter_cases(tmp_path / "cases.jsonl")
    cancel = case.trace[6]
    assert cancel.arguments == {"reservation_id": "ZFA04Y"}  # JSON text, parsed
    assert cancel.error is not None
    assert short.trace[1].arguments == cancel.arguments
    assert case.trace[8].parent_id == case.trace[7].id
    (tmp_path / "suite.yaml").write_text(suite)
    result = runner.invoke(
        app, ["run", str(tmp_path / "suite.yaml"), "--db", f"sqlite:///{tmp_path / 'r.db'}"]
    )
    assert result.exit_code == 0, result.output
    claimed = re.search(r"the report ends with\n`(agent: [^`]+)`", DOC.read_text())
    assert claimed is not None
    assert claimed.group(1) in " ".join(result.output.split())


def test_schema_suite_and_the_errors_of_the_command(tmp_path: Path) -> None:
    suite = _schema("suite")
    assert {"name", "cases", "checks", "rubrics"} <= set(suite["required"])
    out = tmp_path / "case.schema.json"
    result = runner.invoke(app, ["schema", "case", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text()) == _schema("case")
    result = runner.invoke(app, ["schema", "cases"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    result = runner.invoke(app, ["schema", "case", "--out", str(tmp_path / "no" / "x.json")])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'no' / 'x.json'}: cannot write: No such file or directory"
    ]


@pytest.mark.parametrize("kind", ["case", "suite"])
def test_the_schema_is_stable_text(kind: str) -> None:
    first = runner.invoke(app, ["schema", kind]).stdout
    assert first == runner.invoke(app, ["schema", kind]).stdout
    assert first.endswith("}\n")


def test_what_a_run_stores_and_exports_fits_the_run_config_and_result_schemas(
    tmp_path: Path,
) -> None:
    # a real run of the worked example, exported with --json: its configuration and every
    # result record fit the published schemas (the record the store writes, without the case
    # verdict and evaluated case that the export adds)
    cases_yaml, _, suite_yaml = _blocks()
    (tmp_path / "cases.yaml").write_text(cases_yaml)
    (tmp_path / "suite.yaml").write_text(suite_yaml.replace("cases.jsonl", "cases.yaml"))
    out = tmp_path / "run.json"
    done = runner.invoke(
        app,
        [
            "run",
            str(tmp_path / "suite.yaml"),
            "--db",
            f"sqlite:///{tmp_path / 'r.db'}",
            "--json",
            str(out),
        ],
    )
    assert done.exit_code in (0, 1), done.output
    exported = json.loads(out.read_text())
    jsonschema.validate(exported["run"]["config"], _schema("run-config"))
    assert exported["run"]["config"]["schema_version"] == 2
    record_schema = _schema("result")
    assert exported["results"]
    for item in exported["results"]:
        record = {k: v for k, v in item.items() if k not in ("case", "evaluated_case")}
        assert record["schema_version"] == 2
        jsonschema.validate(record, record_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**record, "verdicts": {"x": {"state": "maybe"}}}, record_schema)
