"""Robustness of `checkweigh compare --baseline FILE`: the baseline is a file a CI job downloaded
from an earlier workflow, so it can be anything. Each row is a realistic bad file or flag and the
exact outcome through the real CLI: exit 2, one line naming the file (or flag), the field and
what was expected, no traceback, no report written and the input left as it was.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.store import RunStatus, Store
from support.recorded_suite import make_case, write_suite

runner = CliRunner()
EXPECTED = "expected the file `checkweigh run --json` writes"


def _cli(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), env={"COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


@dataclass(frozen=True)
class Runs:
    """A database holding a base and a candidate run of the same suite, and exports."""

    folder: Path
    db: str
    base: dict[str, Any]
    """The base run's export, parsed."""
    base_text: str
    incomplete: Path
    """The export of a run stopped after 3 of its 12 cases."""
    incomplete_id: str
    other_suite: Path
    """The export of a complete run of another suite."""
    comparison: Path
    """What `compare --json` writes: a comparison, not a run."""


def _export(folder: Path, db: str, name: str, suite_name: str = "bookings") -> Path:
    cases = [
        make_case(f"case-{i:02d}", participants=["Alice", "Bob"], time="10:00") for i in range(12)
    ]
    suite = write_suite(folder / name, cases, thresholds={"cases_pass_threshold": 0.0})
    suite.write_text(suite.read_text().replace("name: bookings", f"name: {suite_name}"))
    export = folder / f"{name}.json"
    code, out, err = _cli("run", str(suite), "--db", db, "-q", "--json", str(export))
    assert code == 0, out + err
    return export


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    folder = tmp_path_factory.mktemp("baseline")
    db = f"sqlite:///{folder / 'r.db'}"
    base = _export(folder, db, "base")
    _export(folder, db, "cand")
    comparison = folder / "comparison.json"
    code, out, _ = _cli("compare", "previous", "latest", "--db", db, "--json", str(comparison))
    assert code == 0, out
    # a run stopped after three cases (Ctrl-C, a full disk): stored incomplete, exported by show
    # (in a database of its own: the candidate stays the latest run of the suite in ``db``)
    stopped_db = f"sqlite:///{folder / 'stopped.db'}"
    with Store(db) as store, Store(stopped_db) as other:
        whole = store.get_run("previous")
        assert whole.summary is not None
        stopped = other.create_run(whole.suite, whole.suite_path, whole.config, whole.repeat)
        other.add_results(stopped, list(store.iter_results(whole.id))[:3])
        other.finish_run(stopped, RunStatus.INCOMPLETE, whole.summary)
    incomplete = folder / "incomplete.json"
    code, out, err = _cli("show", stopped, "--db", stopped_db, "--json", str(incomplete))
    assert code == 1, out + err  # an incomplete run never passes its gates
    other = _export(folder, f"sqlite:///{folder / 'other.db'}", "other", suite_name="billing")
    text = base.read_text()
    return Runs(folder, db, json.loads(text), text, incomplete, stopped, other, comparison)


def _edited(edit: Callable[[dict[str, Any]], object]) -> Callable[[Runs], bytes]:
    def make(runs: Runs) -> bytes:
        data = json.loads(runs.base_text)
        edit(data)
        return json.dumps(data).encode()

    return make


def _set(path: str, value: object) -> Callable[[dict[str, Any]], object]:
    def edit(data: dict[str, Any]) -> None:
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        node: Any = data
        for p in parents:
            node = node[p]
        if value is _DELETE:
            del node[last]
        else:
            node[last] = value

    return edit


_DELETE = object()


# (what the file is, its bytes made from the good export, the message after "error: FILE")
FILES: list[tuple[str, Callable[[Runs], bytes], str]] = [
    (
        "the suite file by mistake",
        lambda r: b"name: bookings\ncases: cases.jsonl\n",
        f":1: not JSON (invalid literal, expected 'null'); {EXPECTED}",
    ),
    (
        "an empty artifact",
        lambda r: b"",
        f":1: not JSON (Input is a zero-length, empty document); {EXPECTED}",
    ),
    (
        "a download cut in the middle",
        lambda r: r.base_text[: r.base_text.index("\n") // 2].encode(),
        f":1: not JSON (unexpected end of data); {EXPECTED}",
    ),
    (
        "the gzipped artifact",
        lambda r: gzip.compress(r.base_text.encode()),
        f":1: not JSON (binary, not UTF-8 text); {EXPECTED}",
    ),
    (
        "a JSON list of results",
        lambda r: json.dumps(json.loads(r.base_text)["results"]).encode(),
        f": a JSON list, not a run export; {EXPECTED}",
    ),
    (
        "the comparison written by compare --json",
        lambda r: r.comparison.read_bytes(),
        f": a comparison (compare --json), not a run export; {EXPECTED}",
    ),
    (
        "an export without its results",
        _edited(_set("results", _DELETE)),
        f": results: missing; {EXPECTED}",
    ),
    ("a run without an id", _edited(_set("run.id", _DELETE)), ": run.id: Field required"),
    (
        "a run id made of markup",
        _edited(_set("run.id", "x`<script>`")),
        ": run.id: expected a run id of letters, digits, '.', '_' and '-'",
    ),
    (
        "a status that is not text",
        _edited(_set("run.status", 3)),
        ": run.status: Input should be a valid string",
    ),
    (
        "an abandoned run",
        _edited(_set("run.abandoned", True)),
        ": run.status: run {base} is "
        "abandoned; expected the export of a complete run (its gates were measured on part of "
        "the cases)",
    ),
    (
        "the export of a run stopped after 3 cases",
        lambda r: r.incomplete.read_bytes(),
        ": run.status: run {incomplete} is incomplete; expected the export of a complete run (its "
        "gates were measured on part of the cases)",
    ),
    (
        "results dropped by a hand edit",
        _edited(lambda d: d.update(results=d["results"][:5])),
        ": results: the run stored 12 execution(s) but the file holds 5; expected the whole export",
    ),
    (
        "a result listed twice",
        _edited(lambda d: d["results"].__setitem__(1, d["results"][0])),
        ": results[1]: case 'case-00' repeat 0 appears twice",
    ),
    (
        "a verdict state from another tool",
        _edited(_set("results.2.verdicts.correct_time.state", "maybe")),
        ": results[2].verdicts.correct_time.state: Invalid enum value 'maybe'; expected one "
        "of 'passed', 'failed', 'not_applicable', 'errored'",
    ),
    (
        "a score written as text",
        _edited(_set("results.0.scores.completion.score", "high")),
        ": results[0].scores.completion.score: Expected `float | null`, got `str`",
    ),
    (
        "a result without its case id",
        _edited(_set("results.4.case_id", _DELETE)),
        ": results[4].case_id: Field required",
    ),
    (
        "a latency that is not a number",
        _edited(_set("results.3.latency_ms", [380])),
        ": results[3].latency_ms: Expected `float | null`, got `array`",
    ),
    (
        "a pass threshold out of range",
        _edited(_set("run.config.thresholds.pass_threshold", 150)),
        ": run.config.thresholds: pass_threshold must be a number from 0 to 100, got 150.0",
    ),
    (
        "a pass policy from a newer version",
        _edited(_set("run.config.thresholds.pass_policy", "majority")),
        ": run.config.thresholds: 'majority' is not a valid PassMode",
    ),
    (
        "rubrics as a mapping",
        _edited(_set("run.config.rubrics", {"completion": {}})),
        ": run.config.rubrics: Input should be a valid list",
    ),
    (
        "a run of another suite",
        lambda r: r.other_suite.read_bytes(),
        ": run.suite: a run of suite 'billing'; expected a run of 'bookings', the suite of run "
        "{cand} it is compared with",
    ),
]


def _check_one_line(code: int, out: str, err: str, expected: str) -> None:
    assert code == 2, out + err
    assert "Traceback" not in out + err
    assert err.strip().splitlines() == [expected]


@pytest.mark.parametrize(("what", "content", "message"), FILES, ids=[f[0] for f in FILES])
def test_a_bad_baseline_is_one_line_and_exit_2(
    runs: Runs,
    tmp_path: Path,
    what: str,
    content: Callable[[Runs], bytes],
    message: str,
) -> None:
    baseline = tmp_path / "results.json"
    baseline.write_bytes(content(runs))
    before = baseline.read_bytes()
    out_md = tmp_path / "pr.md"
    cand = Store(runs.db).get_run("latest").id
    code, out, err = _cli(
        "compare", "--baseline", str(baseline), cand, "--db", runs.db, "--markdown", str(out_md)
    )
    text = message.format(base=runs.base["run"]["id"], incomplete=runs.incomplete_id, cand=cand)
    _check_one_line(code, out, err, f"error: {baseline}{text}")
    assert not out_md.exists()
    assert baseline.read_bytes() == before
    # the same file given as the candidate is named the same way
    if what != "a run of another suite":
        code, out, err = _cli(
            "compare", "--baseline", str(runs.folder / "base.json"), "--candidate", str(baseline)
        )
        _check_one_line(code, out, err, f"error: {baseline}{text}")


# (what is wrong, the arguments after "compare" (GOOD: the good export, DB: the database,
# MISSING: a path that does not exist), the whole error line)
FLAGS: list[tuple[str, list[str], str]] = [
    (
        "the baseline path is wrong",
        ["--baseline", "MISSING", "--db", "DB"],
        "error: MISSING: cannot read: No such file or directory",
    ),
    (
        "the baseline is a folder",
        ["--baseline", "FOLDER", "--db", "DB"],
        f"error: FOLDER: is a folder; {EXPECTED}",
    ),
    (
        "two runs besides --baseline",
        ["--baseline", "GOOD", "latest", "previous", "--db", "DB"],
        "error: CANDIDATE: expected 1 run id(s) with --baseline, got 2: latest previous",
    ),
    (
        "a run besides both files",
        ["--baseline", "GOOD", "--candidate", "GOOD", "latest"],
        "error: CANDIDATE: expected 0 run id(s) with --baseline and --candidate, got 1: latest",
    ),
    (
        "nothing to compare",
        ["--db", "DB"],
        "error: BASE: missing: give a run id, or --baseline FILE",
    ),
    (
        "one stored run alone",
        ["latest", "--db", "DB"],
        "error: CANDIDATE: missing argument; give a run id, or --candidate FILE",
    ),
    (
        "a database without the suite",
        ["--baseline", "GOOD", "--db", "EMPTY"],
        "error: CANDIDATE: no run of suite 'bookings' (the baseline's) in sqlite:///EMPTY_FILE; "
        "give the CANDIDATE run id or --candidate FILE",
    ),
    (
        "the same export twice",
        ["--baseline", "GOOD", "--candidate", "GOOD"],
        "error: CANDIDATE: both refer to run GOOD_ID",
    ),
    (
        "the JSON output over the baseline",
        ["--baseline", "GOOD", "--db", "DB", "--json", "GOOD"],
        "error: --json: cannot write GOOD: it is the baseline; give another file name",
    ),
    (
        "an FTP server URL",
        [
            "--baseline",
            "GOOD",
            "--db",
            "DB",
            "--markdown",
            "MD",
            "--server-url",
            "ftp://checkweigh.example.com",
        ],
        "error: --server-url: expected an http:// or https:// URL such as "
        "https://checkweigh.example.com, got 'ftp://checkweigh.example.com'",
    ),
    (
        "a javascript: URL",
        [
            "--baseline",
            "GOOD",
            "--db",
            "DB",
            "--markdown",
            "MD",
            "--server-url",
            "javascript:alert(1)",
        ],
        "error: --server-url: expected an http:// or https:// URL such as "
        "https://checkweigh.example.com, got 'javascript:alert(1)'",
    ),
    (
        "a URL that closes the link",
        [
            "--baseline",
            "GOOD",
            "--db",
            "DB",
            "--markdown",
            "MD",
            "--server-url",
            "https://x.example.com/a) [y](http://z",
        ],
        "error: --server-url: expected an http:// or https:// URL such as "
        "https://checkweigh.example.com, got 'https://x.example.com/a) [y](http://z'",
    ),
    (
        "a URL without a host",
        ["--baseline", "GOOD", "--db", "DB", "--markdown", "MD", "--server-url", "https:///runs"],
        "error: --server-url: expected an http:// or https:// URL such as "
        "https://checkweigh.example.com, got 'https:///runs'",
    ),
    (
        "a URL with a password",
        [
            "--baseline",
            "GOOD",
            "--db",
            "DB",
            "--markdown",
            "MD",
            "--server-url",
            "https://ci:s3cret@checkweigh.example.com",
        ],
        "error: --server-url: the URL carries a user name or password; give the server's "
        "address only",
    ),
    (
        "a URL with a query",
        [
            "--baseline",
            "GOOD",
            "--db",
            "DB",
            "--markdown",
            "MD",
            "--server-url",
            "https://checkweigh.example.com/?team=a",
        ],
        "error: --server-url: expected an http:// or https:// URL such as "
        "https://checkweigh.example.com without a query or fragment, got "
        "'https://checkweigh.example.com/?team=a'",
    ),
    (
        "a server URL without --markdown",
        ["--baseline", "GOOD", "--db", "DB", "--server-url", "https://checkweigh.example.com"],
        "error: --server-url: links go in the Markdown comment; give --markdown FILE too",
    ),
]


@pytest.mark.parametrize(("what", "args", "message"), FLAGS, ids=[f[0] for f in FLAGS])
def test_a_bad_flag_is_one_line_and_exit_2(
    runs: Runs, tmp_path: Path, what: str, args: list[str], message: str
) -> None:
    (tmp_path / "folder").mkdir()
    empty = tmp_path / "empty.db"
    Store(f"sqlite:///{empty}").close()
    names = {
        "GOOD_ID": runs.base["run"]["id"],
        "GOOD": str(runs.folder / "base.json"),
        "DB": runs.db,
        "EMPTY_FILE": str(empty),
        "EMPTY": f"sqlite:///{empty}",
        "MISSING": str(tmp_path / "results.json"),
        "FOLDER": str(tmp_path / "folder"),
        "MD": str(tmp_path / "pr.md"),
    }

    def named(text: str) -> str:
        for key, value in names.items():  # longer keys first where one starts another
            text = text.replace(key, value)
        return text

    before = (runs.folder / "base.json").read_bytes()
    code, out, err = _cli("compare", *[named(a) for a in args])
    _check_one_line(code, out, err, named(message))
    assert "s3cret" not in out + err
    assert not (tmp_path / "pr.md").exists()
    assert (runs.folder / "base.json").read_bytes() == before
