"""The example plugin package's check type, judge provider and report output, installed with
pip into a folder of their own and used from a suite and the real command line, with nothing
of them in checkweigh's source; and what a broken plugin or an unknown name gives."""

from __future__ import annotations

import asyncio
import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.errors import InputError
from checkweigh.judges import JudgeRequest, Message, make_judge
from checkweigh.plugins import PluginError
from checkweigh.suites import load_suite
from support import cli_process
from support.plugin import MODULE, SOURCE
from support.recorded_suite import make_case

SUITE = """\
name: bookings-with-plugins
cases: cases.jsonl
checks:
  names_both:
    type: mentions
    words: [Alice, Bob]
  confirmed:
    type: judge
    question: Does the final answer confirm the booking?
  correct_time:
    type: equals
    path: final_state.booking.time
    expected_path: ground_truth.time
rubrics:
  completion:
    weights:
      names_both: 0.4
      confirmed: 0.3
      correct_time: 0.3
thresholds: {metrics_pass_threshold: 50, cases_pass_threshold: 30}
"""
BUILTIN_ONLY = SUITE.replace(
    "type: mentions\n    words: [Alice, Bob]", "type: word_count\n    path: output\n    min: 3"
)

CASES = [
    make_case(
        "both",
        participants=["Alice", "Bob"],
        time="10:00",
        reply="Booked Alice and Bob on Tuesday.",
    ),
    make_case("alice-only", participants=["Alice"], time="10:00", reply="Booked alice, Tuesday."),
    make_case(
        "late",
        participants=["Alice", "Bob"],
        time="11:00",
        reply="Alice and Bob are booked on Wednesday at 11:00.",
    ),
]


def _suite(folder: Path, text: str = SUITE) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "suite.yaml").write_text(text)
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    return folder / "suite.yaml"


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout + result.stderr


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHECKWEIGH_CACHE_DIR", str(tmp_path / "judge-cache"))


def test_a_suite_names_the_plugins_check_type(use_plugin: Path, tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path / "s"))
    check = suite.checks["names_both"].check
    assert type(check).__module__ == f"{MODULE}.check"
    verdicts = {c["id"]: check.evaluate(_case(c)).state.value for c in CASES}
    # whole words in any case: "alice," counts, and Bob is missing from the second reply
    assert verdicts == {"both": "passed", "alice-only": "failed", "late": "passed"}


def _case(data: dict[str, object]) -> object:
    from checkweigh import Case

    return Case.model_validate(data)


def test_run_uses_the_plugins_check_judge_and_output(use_plugin: Path, tmp_path: Path) -> None:
    suite = _suite(tmp_path / "s")
    out_csv, out_json = tmp_path / "out.csv", tmp_path / "out.json"
    code, text = _cli(
        "run", str(suite), "--db", f"sqlite:///{tmp_path / 'runs.db'}", "-q",
        "--judge", "canned:tuesday", "--output", f"csv={out_csv}", "--json", str(out_json),
    )  # fmt: skip
    assert code == 0, text
    assert f"wrote 3 row(s) to {out_csv}" in text
    results = {r["case_id"]: r for r in json.loads(out_json.read_text())["results"]}
    states = {
        cid: {name: v["state"] for name, v in r["verdicts"].items()} for cid, r in results.items()
    }
    assert states == {
        "both": {"names_both": "passed", "confirmed": "passed", "correct_time": "passed"},
        "alice-only": {"names_both": "failed", "confirmed": "passed", "correct_time": "passed"},
        "late": {"names_both": "passed", "confirmed": "failed", "correct_time": "failed"},
    }
    assert results["late"]["verdicts"]["confirmed"]["reason"] == (
        "canned: 'tuesday' does not occur in the prompt"
    )
    with out_csv.open(newline="") as f:
        rows = list(csv.DictReader(f))
    # the CSV's rows are the JSON's case verdicts, one per execution, in the run's order
    assert [r["case_id"] for r in rows] == ["both", "alice-only", "late"]
    for row in rows:
        case = results[row["case_id"]]["case"]
        assert row["repeat"] == "0"
        assert row["state"] == case["state"]
        assert float(row["score_pct"]) == pytest.approx(case["score_pct"], abs=0.05)
    assert [r["state"] for r in rows] == ["passed", "failed", "failed"]


def test_show_writes_a_stored_run_through_the_plugins_output(
    use_plugin: Path, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    code, text = _cli("run", str(_suite(tmp_path / "s")), "--db", db, "-q", "--judge", "canned:any")
    assert code == 0, text
    out_csv = tmp_path / "again.csv"
    code, text = _cli("show", "latest", "--db", db, "--output", f"csv={out_csv}")
    assert code == 0, text
    rows = list(csv.DictReader(out_csv.read_text().splitlines()))
    assert [(r["case_id"], r["state"]) for r in rows] == [
        ("both", "passed"),
        ("alice-only", "failed"),
        ("late", "failed"),
    ]


def test_an_unknown_output_or_check_type_lists_the_known_ones(
    use_plugin: Path, tmp_path: Path
) -> None:
    suite = _suite(tmp_path / "s")
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    code, text = _cli("run", str(suite), "--db", db, "-q", "--output", "xlsx=out.xlsx")
    assert code == 2
    assert "--output: unknown output 'xlsx'; expected one of json, junit, markdown, csv" in text
    assert not (tmp_path / "runs.db").exists()  # refused before the run, not after it
    code, text = _cli("run", str(suite), "--db", db, "-q", "--output", "csv")
    assert code == 2
    assert "--output: expected NAME=PATH with NAME one of json, junit, markdown, csv" in text
    # the writability checks of the built-in flags apply to a plugin's output too
    code, text = _cli("run", str(suite), "--db", db, "-q", "--output", f"csv={tmp_path}")
    assert code == 2
    assert f"--output: cannot write {tmp_path}: it is a folder" in text
    broken = _suite(tmp_path / "t", SUITE.replace("type: mentions", "type: mention"))
    code, text = _cli("run", str(broken), "--db", db, "-q")
    assert code == 2
    assert "suite.yaml:5: checks.names_both.type: unknown check type 'mention'" in text
    assert text.rstrip().endswith("'goal_accuracy', 'graded', 'mentions'")


def test_checkweigh_plugins_lists_each_kind_and_where_it_comes_from(use_plugin: Path) -> None:
    code, text = _cli("plugins")
    assert code == 0, text
    lines = [" ".join(line.split()) for line in text.splitlines()]
    origin = "checkweigh-example-plugin 1.0.0: checkweigh_example_plugin"
    for kind, name, where in (
        ("checks", "mentions", "check:Mentions"),
        ("providers", "canned", "provider:CannedJudge"),
        ("outputs", "csv", "output:CsvOutput"),
    ):
        assert f"{kind} (checkweigh.{kind})" in lines
        assert f"{name} {origin}.{where}" in lines
    for builtin in ("equals", "openai", "junit"):
        assert f"{builtin} built-in" in lines


def _dist(root: Path, name: str, group: str, entries: dict[str, str]) -> Path:
    """A distribution on ``root`` declaring ``entries`` in ``group`` (as pip leaves one)."""
    info = root / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    body = "".join(f"{k} = {v}\n" for k, v in entries.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{body}")
    return root


@pytest.fixture
def broken_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package whose entries point at a module that does not exist, one per kind here."""
    root = tmp_path / "broken-site"
    for group, name in (("checks", "shouting"), ("providers", "bedrock"), ("outputs", "xlsx")):
        _dist(root / group, f"acme_{group}", f"checkweigh.{group}", {name: "acme_gone.mod:Thing"})
        monkeypatch.syspath_prepend(str(root / group))
    path = ":".join(str(root / g) for g in ("checks", "providers", "outputs"))
    monkeypatch.setenv("PYTHONPATH", f"{path}:{Path(__file__).parents[2] / 'src'}")
    return root


def test_a_broken_plugin_is_one_line_naming_it(broken_plugins: Path, tmp_path: Path) -> None:
    suite = _suite(tmp_path / "s", SUITE.replace("type: mentions", "type: shouting"))
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    for args, expected in (
        (
            ["run", str(suite), "--db", db, "-q"],
            "suite.yaml:5: checks.names_both.type: entry point shouting = acme_gone.mod:Thing "
            "of acme_checks (group checkweigh.checks) failed to load: ModuleNotFoundError",
        ),
        (
            [
                "run",
                str(_suite(tmp_path / "t", BUILTIN_ONLY)),
                "--db",
                db,
                "-q",
                "--judge",
                "bedrock:claude",
            ],
            "error: entry point bedrock = acme_gone.mod:Thing of acme_providers "
            "(group checkweigh.providers) failed to load: ModuleNotFoundError",
        ),
        (
            [
                "run",
                str(_suite(tmp_path / "u", BUILTIN_ONLY)),
                "--db",
                db,
                "-q",
                "--output",
                "xlsx=o.xlsx",
            ],
            "error: entry point xlsx = acme_gone.mod:Thing of acme_outputs "
            "(group checkweigh.outputs) failed to load: ModuleNotFoundError",
        ),
    ):
        done = cli_process.run(args, tmp_path)
        assert done.code == 2, done.err
        assert "Traceback" not in done.err + done.out
        lines = done.err.strip().splitlines()
        assert len(lines) == 1, done.err
        assert expected in lines[0]
    listing = cli_process.run(["plugins"], tmp_path)
    assert listing.code == 0, listing.err
    listed = [" ".join(line.split()) for line in listing.out.splitlines()]
    assert (
        "bedrock acme_providers 1.0: acme_gone.mod:Thing error: entry point bedrock = "
        "acme_gone.mod:Thing of acme_providers (group checkweigh.providers) failed to load: "
        "ModuleNotFoundError: No module named 'acme_gone'"
    ) in listed
    assert "3 broken plugin(s)" in listing.err
    assert cli_process.run(["plugins", "--strict"], tmp_path).code == 2


def test_a_check_plugin_must_register_its_class_under_its_type(
    use_plugin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _dist(
        tmp_path / "site", "acme_names", "checkweigh.checks", {"names": f"{MODULE}.check:Mentions"}
    )
    monkeypatch.syspath_prepend(str(root))
    suite = _suite(tmp_path / "s", SUITE.replace("type: mentions", "type: names"))
    code, text = _cli("run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}", "-q")
    assert code == 2
    assert (
        "suite.yaml:5: checks.names_both.type: check type plugin 'names' (checkweigh.checks) "
        f"is {MODULE}.check.Mentions, whose type is 'mentions'"
    ) in text


PROBE = """\
import json, sys
from checkweigh.cli._app import _main
sys.argv = ["checkweigh", *sys.argv[1:]]
code = _main()
print(json.dumps({"code": code, "plugin": any(m.startswith(MODULE) for m in sys.modules)}))
"""


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["show", "--help"]])
def test_help_imports_no_plugin(use_plugin: Path, tmp_path: Path, args: list[str]) -> None:
    code = PROBE.replace("MODULE", repr(MODULE))
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert last == {"code": 0, "plugin": False}
    # the plugin is importable there: a command that names it does load it
    check = subprocess.run(
        [sys.executable, "-c", f"import {MODULE}.output"], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr


def test_make_judge_builds_a_plugins_judge_and_names_a_broken_provider(
    use_plugin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = make_judge("canned:yes", offline=True)
    assert judge.name == "canned:yes"
    asked = JudgeRequest(messages=(Message(role="user", content="Is the booking confirmed?"),))
    reply = asyncio.run(judge.complete(asked))
    assert json.loads(reply.text) == {"verdict": "yes", "reason": "canned: always yes"}
    with pytest.raises(InputError) as err:
        make_judge("bedrock:claude")
    assert err.value.one_line() == (
        "--judge: expected PROVIDER:MODEL with PROVIDER one of openai, anthropic, ollama, "
        "canned, got 'bedrock:claude'"
    )
    # a provider that builds something else than a judge, or fails to build one
    entries = {"sliced": "builtins:slice", "twofold": "builtins:divmod"}
    monkeypatch.syspath_prepend(
        str(_dist(tmp_path / "site", "acme", "checkweigh.providers", entries))
    )
    with pytest.raises(PluginError, match="judge provider 'sliced' built a slice, not a judge"):
        make_judge("sliced:x")
    with pytest.raises(PluginError) as failed:
        make_judge("twofold:x")
    assert str(failed.value).startswith(
        "judge provider 'twofold' (acme 1.0: builtins:divmod) failed to build the judge of 'x': "
        "TypeError:"
    )


ENTRY_NAMES = {"check": "mentions", "provider": "canned", "output": "csv"}


@pytest.mark.parametrize("module", list(ENTRY_NAMES))
def test_the_plugin_page_shows_the_example_plugins_code(module: str) -> None:
    """The "Writing a plugin" page's examples are the files the tests above install and run."""
    root = Path(__file__).parents[2]
    page = (root / "docs" / "plugins" / "index.md").read_text()
    source = (SOURCE / "src" / MODULE / f"{module}.py").read_text()
    assert f"```python\n{source.rstrip()}\n```" in page
    entry = f"{ENTRY_NAMES[module]} = "
    assert entry in (SOURCE / "pyproject.toml").read_text()
    assert entry in page


def test_worker_processes_find_the_plugins_too(use_plugin: Path, tmp_path: Path) -> None:
    """``--workers`` evaluates in other processes: they load the plugin's check type and
    judge provider from the same entry points."""
    suite = _suite(tmp_path / "s")
    out_csv = tmp_path / "out.csv"
    args = ["run", str(suite), "--db", f"sqlite:///{tmp_path / 'runs.db'}", "-q", "--workers", "2"]
    done = cli_process.run(
        [*args, "--judge", "canned:tuesday", "--output", f"csv={out_csv}"], tmp_path, timeout=120
    )
    assert done.code == 0, done.err
    assert out_csv.read_text().splitlines() == [
        "case_id,repeat,state,score_pct",
        "both,0,passed,100.0",
        "alice-only,0,failed,60.0",
        "late,0,failed,40.0",
    ]


def test_output_reaches_the_builtins_as_their_own_flags_do(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    code, text = _cli("run", str(_suite(tmp_path / "s", BUILTIN_ONLY)), "--db", db, "-q")
    assert code == 0, text
    flags, named = tmp_path / "flags", tmp_path / "named"
    flags.mkdir()
    named.mkdir()
    code, text = _cli(
        "show", "latest", "--db", db, "--json-cases", "--json", str(flags / "r.json"),
        "--junit", str(flags / "r.xml"), "--markdown", str(flags / "r.md"),
    )  # fmt: skip
    assert code == 0, text
    code, text = _cli(
        "show", "latest", "--db", db, "--json-cases", "--output", f"json={named / 'r.json'}",
        "--output", f"junit={named / 'r.xml'}", "--output", f"markdown={named / 'r.md'}",
    )  # fmt: skip
    assert code == 0, text
    assert f"wrote 3 result(s) to {named / 'r.json'}" in text
    for name in ("r.json", "r.xml", "r.md"):
        assert (named / name).read_bytes() == (flags / name).read_bytes(), name
    results = json.loads((named / "r.json").read_text())["results"]
    assert [r["evaluated_case"]["id"] for r in results] == ["both", "alice-only", "late"]


def test_the_suite_schema_names_the_plugins_check_type(use_plugin: Path, tmp_path: Path) -> None:
    code, text = _cli("schema", "suite", "--out", str(tmp_path / "suite.json"))
    assert code == 0, text
    schema = json.loads((tmp_path / "suite.json").read_text())
    kind = schema["properties"]["checks"]["additionalProperties"]["properties"]["type"]
    assert kind["examples"][:2] == ["equals", "one_of"]
    assert "mentions" in kind["examples"]
