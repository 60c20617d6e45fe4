"""The run service called directly, as a program or the server would: a RunRequest checked,
run into the store and exported, with the same results as ``checkweigh run``."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from checkweigh.cli import app as cli
from checkweigh.core import CaseState
from checkweigh.errors import InputError
from checkweigh.runs import RunStart
from checkweigh.service import (
    Exports,
    RunRequest,
    Thresholds,
    prepare_run,
    run_prepared,
    run_request,
    write_exports,
)
from checkweigh.store import RunStatus, Store
from support.recorded_suite import make_case, standard_cases, write_suite


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return write_suite(tmp_path / "suite", standard_cases())


def test_a_request_is_run_stored_and_exported(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    request = RunRequest(
        suite=suite,
        db=f"sqlite:///{tmp_path / 'r.db'}",
        repeat=2,
        thresholds=Thresholds(pass_threshold=60.0, cases_threshold=25.0),
        exports=Exports(json_path=out / "r.json", junit=out / "r.xml", markdown=out / "r.md"),
    )
    starts: list[RunStart] = []
    seen: list[str] = []
    report = run_request(
        request,
        on_start=starts.append,
        on_result=lambda r: seen.append(f"{r.case_id}#{r.repeat}"),
    )
    [prepared] = starts
    assert prepared.total == 12  # six cases, twice
    assert prepared.judge is None
    assert (prepared.policy.pass_threshold, prepared.policy.cases_pass_threshold) == (60.0, 25.0)
    assert report.results == []  # read from the store, not kept
    outcome = report.outcome
    assert sorted(seen) == sorted(f"{c['id']}#{k}" for c in standard_cases() for k in (0, 1))
    assert outcome.status is RunStatus.COMPLETE
    assert outcome.summary.executions == outcome.kept == 12

    said: list[str] = []
    write_exports(prepared.store, outcome, request.exports, said.append)
    assert said == [
        f"wrote 12 result(s) to {out / 'r.json'}",
        f"wrote 12 test case(s) to {out / 'r.xml'}",
        f"wrote the Markdown summary to {out / 'r.md'}",
    ]
    data = json.loads((out / "r.json").read_text())
    assert data["run"]["id"] == outcome.run_id
    # the overrides are the run's thresholds: stored in its snapshot and deciding its cases
    assert data["run"]["config"]["thresholds"]["pass_threshold"] == 60.0
    states = {(r["case_id"], r["repeat"]): r["case"]["state"] for r in data["results"]}
    assert states[("ok-1", 1)] == CaseState.PASSED
    assert states[("wrong-time", 0)] == CaseState.FAILED  # a required check failed
    names = [t.get("name", "") for t in ET.parse(out / "r.xml").getroot().iter("testcase")]
    assert sum(any(c["id"] in n for c in standard_cases()) for n in names) == 12
    assert outcome.run_id in (out / "r.md").read_text()
    prepared.store.close()


def test_the_service_and_the_cli_make_the_same_run(suite: Path, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    flags = ["--pass-threshold", "70", "--metrics-threshold", "55", "--repeat", "2"]
    done = CliRunner().invoke(cli, ["run", str(suite), "--db", db, "-q", *flags])
    assert done.exit_code in (0, 1), done.output
    report = run_request(
        RunRequest(
            suite=suite,
            db=db,
            repeat=2,
            thresholds=Thresholds(pass_threshold=70.0, metrics_threshold=55.0),
        )
    )
    ours = report.outcome
    report.store.close()
    with Store(db) as store:
        by_cli, by_service = store.get_run("previous"), store.get_run(ours.run_id)
        assert by_service.summary == by_cli.summary
        assert by_service.config == by_cli.config
        assert [r.to_record() for r in store.iter_results(by_cli.id)] == [
            r.to_record() for r in store.iter_results(by_service.id)
        ]
    assert done.exit_code == (0 if ours.summary.gates_passed else 1)


def test_another_cases_file_is_read_in_the_suites_format(suite: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text(
        "".join(
            json.dumps(make_case(f"late-{i}", participants=["Alice", "Bob"], time="11:00")) + "\n"
            for i in range(3)
        )
    )
    starts: list[RunStart] = []
    request = RunRequest(suite=suite, cases=other, db=f"sqlite:///{tmp_path}/r.db")
    outcome = run_request(request, on_start=starts.append).outcome
    [prepared] = starts
    assert prepared.total == 3
    with prepared.store as store:
        results = list(store.iter_results(outcome.run_id))
    assert [r.case_id for r in results] == ["late-0", "late-1", "late-2"]
    # the wrong time, every one: the required check fails each case
    assert {prepared.policy.state(r)[0] for r in results} == {CaseState.FAILED}


def test_a_request_travels_as_json_and_refuses_what_the_flags_refuse(suite: Path) -> None:
    request = RunRequest(suite=suite, repeat=3, graded_weights=("relevance=2",))
    # a server or a queue can carry it as JSON: the same request comes back
    assert RunRequest.model_validate_json(request.model_dump_json()) == request
    for bad in ({"repeat": 0}, {"repeat": 10_001}, {"concurrency": 2000}, {"colour": "red"}):
        with pytest.raises(ValidationError):
            RunRequest.model_validate({"suite": str(suite), **bad})
    with pytest.raises(ValidationError):
        RunRequest.model_validate({"suite": str(suite), "on_bad_record": "ignore"})


def test_prepare_run_and_run_prepared_warn_and_still_run(suite: Path, tmp_path: Path) -> None:
    request = RunRequest(suite=suite, db=f"sqlite:///{tmp_path / 'r.db'}", repeat=2)
    with pytest.warns(DeprecationWarning, match=r"prepare_run\(\) is deprecated.*run_request"):
        prepared = prepare_run(request)
    assert prepared.total == 12
    with pytest.warns(DeprecationWarning, match=r"run_prepared\(\) is deprecated"):
        outcome = run_prepared(prepared)
    assert outcome.status is RunStatus.COMPLETE
    assert outcome.summary.executions == outcome.kept == 12
    prepared.store.close()


def test_the_request_is_refused_before_the_store_is_opened(suite: Path, tmp_path: Path) -> None:
    db = tmp_path / "never.db"
    with pytest.raises(InputError) as caught:
        run_request(RunRequest(suite=suite, db=f"sqlite:///{db}", executor="nowhere"))
    assert str(caught.value).startswith("--executor: unknown executor 'nowhere'; expected one of")
    assert not db.exists()
