"""Bad run requests given to the run service directly (as a program or a server would): each
fails in ``run_request`` (the engine's checks) with the one line ``checkweigh run`` prints
for the same flags, and nothing is stored (the database is not even created)."""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from checkweigh.errors import InputError, StoreError
from checkweigh.service import Exports, JudgeRequest, RunRequest, Thresholds, run_request
from support.recorded_suite import standard_cases, write_suite


@dataclass(frozen=True)
class Bad:
    """A request made in a folder holding ``suite/suite.yaml`` (its cases beside it), and the
    line it must fail with (``{dir}`` is the folder)."""

    id: str
    request: Callable[[Path], dict[str, Any]]
    line: str


def _judge(**fields: Any) -> Callable[[Path], dict[str, Any]]:
    return lambda _: {"judge": JudgeRequest(**fields)}


ROWS = [
    Bad(
        "prices without a comma",
        _judge(spec="openai:gpt-4o-mini", prices="0.15"),
        "--judge-prices: expected INPUT,OUTPUT[,CACHED_INPUT[,CACHE_WRITE]] USD per million "
        "tokens, e.g. 0.15,0.6; got '0.15'",
    ),
    Bad(
        "a NaN price",
        _judge(spec="openai:gpt-4o-mini", prices="nan,0.6"),
        "--judge-prices: prices must be finite and >= 0, got 'nan,0.6'",
    ),
    Bad(
        "a negative price",
        _judge(spec="openai:gpt-4o-mini", prices="0.15,-1"),
        "--judge-prices: prices must be finite and >= 0, got '0.15,-1'",
    ),
    Bad(
        "replay without a judge",
        _judge(replay=True),
        "--replay and --no-cache apply to a judge: give --judge too",
    ),
    Bad(
        "both cache modes",
        _judge(spec="openai:gpt-4o-mini", replay=True, no_cache=True),
        "--replay reads only the cache and --no-cache bypasses it: pick one",
    ),
    Bad(
        "a judge spec without its provider",
        _judge(spec="gpt-4o-mini"),
        "--judge: expected PROVIDER:MODEL with PROVIDER one of openai, anthropic, ollama, "
        "got 'gpt-4o-mini'",
    ),
    Bad(
        "a negative judge timeout",
        _judge(spec="openai:gpt-4o-mini", timeout_s=-1.0),
        "--judge-timeout: expected a number of seconds > 0, got -1.0",
    ),
    Bad(
        "a graded weight without its metric",
        lambda _: {"graded_weights": ("=2",)},
        "--graded-weight: expected METRIC=WEIGHT, got '=2'",
    ),
    Bad(
        "a graded weight for a suite with no graded check",
        lambda _: {"graded_weights": ("relevance=2",)},
        "--graded-weight: the suite has no graded check (type: graded)",
    ),
    Bad(
        "a pass threshold over 100",
        lambda _: {"thresholds": Thresholds(pass_threshold=101.0)},
        "--pass-threshold: expected a percentage from 0 to 100, got 101",
    ),
    Bad(
        "a judge made, then a pass threshold over 100",
        lambda _: {
            "judge": JudgeRequest(spec="openai:gpt-4o-mini", prices="0.15,0.6"),
            "thresholds": Thresholds(pass_threshold=250.0),
        },
        "--pass-threshold: expected a percentage from 0 to 100, got 250",
    ),
    Bad(
        "a NaN metrics threshold",
        lambda _: {"thresholds": Thresholds(metrics_threshold=float("nan"))},
        "--metrics-threshold: expected a percentage from 0 to 100, got nan",
    ),
    Bad(
        "a negative cases threshold",
        lambda _: {"thresholds": Thresholds(cases_threshold=-5.0)},
        "--cases-threshold: expected a percentage from 0 to 100, got -5",
    ),
    Bad(
        "an in-memory database",
        lambda _: {"db": "sqlite://"},
        "--db: 'sqlite://' is an in-memory database: the run would be lost when the command "
        "ends; give a file, e.g. sqlite:///results.db",
    ),
    Bad(
        "the JSON export over the suite",
        lambda d: {"exports": Exports(json_path=d / "suite" / "suite.yaml")},
        "--json: cannot write {dir}/suite/suite.yaml: it is the suite; give another file name",
    ),
    Bad(
        "the JUnit export over the cases file",
        lambda d: {"exports": Exports(junit=d / "suite" / "cases.jsonl")},
        "--junit: cannot write {dir}/suite/cases.jsonl: it is the cases file; give another "
        "file name",
    ),
    Bad(
        "the Markdown export under a file",
        lambda d: {"exports": Exports(markdown=d / "suite" / "suite.yaml" / "r.md")},
        "--markdown: cannot write {dir}/suite/suite.yaml/r.md: {dir}/suite/suite.yaml is a "
        "file, not a folder",
    ),
    Bad(
        "the JSON export as a folder",
        lambda d: {"exports": Exports(json_path=d / "suite")},
        "--json: cannot write {dir}/suite: it is a folder",
    ),
    Bad(
        "an empty cases file",
        lambda d: {"cases": _write(d / "empty.jsonl", "")},
        "{dir}/empty.jsonl: the cases file holds no cases",
    ),
    Bad(
        "a cases file that is not JSON lines",
        lambda d: {"cases": _write(d / "bad.jsonl", '{"id": "a", "input": "x"}\nnot json\n')},
        "{dir}/bad.jsonl:2: invalid JSON: expected ident at column 2",
    ),
    Bad(
        "skip for a checkweigh cases file",
        lambda _: {"on_bad_record": "skip"},
        "--on-bad-record: skipping bad records applies to imported logs; this suite reads a "
        "checkweigh cases file (give the suite's cases a format, e.g. cases: {{path: ..., "
        "format: openai}})",
    ),
    Bad(
        "a database under a file",
        lambda d: {"db": f"sqlite:///{d}/suite/suite.yaml/r.db"},
        "--db: cannot create database {dir}/suite/suite.yaml/r.db: {dir}/suite/suite.yaml is a "
        "file, not a folder",
    ),
    Bad(
        "a missing suite",
        lambda d: {"suite": d / "nowhere.yaml"},
        "{dir}/nowhere.yaml: suite file not found",
    ),
]


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_a_bad_request_fails_in_one_line_and_stores_nothing(
    row: Bad, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a judge can be made (never called): the rows after it reach their own check
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    suite = write_suite(tmp_path / "suite", standard_cases())
    db = tmp_path / "r.db"
    fields = {"suite": suite, "db": f"sqlite:///{db}", **row.request(tmp_path)}
    with pytest.raises(InputError) as caught:
        run_request(RunRequest(**fields))
    assert caught.value.one_line() == row.line.format(dir=tmp_path)
    assert not db.exists()
    gc.collect()  # a judge client made before the error leaves nothing open (a warning fails)


def test_a_file_that_is_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", standard_cases())
    db = tmp_path / "r.db"
    db.write_bytes(b"these are someone's notes, not a database\n" * 200)
    with pytest.raises(StoreError, match=r"^cannot open database sqlite:///.*r\.db: "):
        run_request(RunRequest(suite=suite, db=f"sqlite:///{db}"))
    assert db.read_bytes().startswith(b"these are someone's notes")  # left as it was


def test_the_json_export_of_a_good_request_holds_every_result(tmp_path: Path) -> None:
    # the control: the same folder and suite, a good request, runs and is exported whole
    from checkweigh.service import write_exports

    suite = write_suite(tmp_path / "suite", standard_cases())
    request = RunRequest(
        suite=suite,
        db=f"sqlite:///{tmp_path / 'r.db'}",
        exports=Exports(json_path=tmp_path / "r.json"),
    )
    report = run_request(request)
    write_exports(report.store, report.outcome, request.exports, lambda _: None)
    report.store.close()
    assert len(json.loads((tmp_path / "r.json").read_text())["results"]) == 6
