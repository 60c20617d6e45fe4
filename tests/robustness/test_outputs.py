"""Robustness of the outputs: hostile text from the data stays inert in every output, and every
output counts the same errored executions and paired cases.

Each row of a catalogue is a realistic fault and the exact outcome expected through the real
CLI: the exit code, what is printed or written, and never a traceback.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import cmarkgfm
import pytest
import xmlschema
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.core import CaseResult, PassPolicy, Verdict, VerdictState
from checkweigh.reports import clean, escape_md
from checkweigh.testing import Reply, case_report, fake_llm_server
from support.recorded_suite import make_case, write_suite

runner = CliRunner()


def _cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), env={"COLUMNS": "200", **(env or {})})
    return result.exit_code, result.stdout, result.stderr


# --- errored expected-outcome checks count as errored executions in every output ---------------

OUTCOMES_SUITE = """\
  outcomes:
    type: expected_outcomes
rubrics:
"""
ERRORED_GATE = "gates:\n  - {metric: errored_executions, max: 0}\n"


def _outcome_suite(tmp_path: Path) -> Path:
    """Three cases; only ``needs-judge`` has an expected outcome, judged by the run's judge.
    The thresholds are lenient so that only the errored_executions gate can fail the run."""
    judged = make_case("needs-judge", participants=["Alice", "Bob"], time="10:00")
    judged["ground_truth"]["expected_outcomes"] = ["A meeting is booked at 10:00."]
    cases = [
        make_case("ok-1", participants=["Alice", "Bob"], time="10:00"),
        judged,
        make_case("ok-2", participants=["Bob", "Alice"], time="10:00"),
    ]
    suite = write_suite(
        tmp_path / "s",
        cases,
        thresholds={"metrics_pass_threshold": 0.0, "cases_pass_threshold": 0.0},
    )
    text = suite.read_text().replace("rubrics:\n", OUTCOMES_SUITE, 1)
    suite.write_text(text[: text.index("gates:")] + ERRORED_GATE)
    return suite


@pytest.mark.parametrize(
    ("fault", "flags", "why"),
    [
        # the judge answers junk to the statement and to the repair request
        ("invalid judge answer", [], "invalid judge answer"),
        # --replay with a cold cache: the statement's call is a replay miss
        ("replay miss", ["--replay"], "no cached answer for this call"),
    ],
)
def test_an_errored_expected_outcome_is_an_errored_execution_everywhere(
    tmp_path: Path, fault: str, flags: list[str], why: str
) -> None:
    suite = _outcome_suite(tmp_path)
    db = f"sqlite:///{tmp_path / 'r.db'}"
    files = {ext: tmp_path / "out" / f"report.{ext}" for ext in ("json", "xml", "md")}
    with fake_llm_server([], default=Reply("I think so, yes.")) as server:
        env = {
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "sk-test",
            "CHECKWEIGH_CACHE_DIR": str(tmp_path / "cache"),
            # a terminal, so that the progress bar is drawn (on stderr) with its errored count
            "FORCE_COLOR": "1",
            "TERM": "xterm-256color",
        }
        code, out, err = _cli(
            "run",
            str(suite),
            "--db",
            db,
            "--judge",
            "openai:gpt-test",
            *flags,
            "--json",
            str(files["json"]),
            "--junit",
            str(files["xml"]),
            "--markdown",
            str(files["md"]),
            env=env,
        )
    out, err = SGR.sub("", out), SGR.sub("", err)
    assert code == 1, fault + out + err
    assert "Traceback" not in out + err
    assert "3/3 1 errored" in err  # the progress bar's last frame
    assert "3 execution(s) of 3 case(s); 1 errored" in out
    assert "cases 2 passed, 0 failed, 1 errored of 3" in out
    assert re.search(r"gate FAIL  errored_executions.*\(actual 1\)", out), out
    assert "errored needs-judge#0: errored: outcomes: " in out
    assert why in out
    assert "gates FAILED" in out

    report = json.loads(files["json"].read_text())
    assert report["summary"]["errored_executions"] == 1
    assert report["summary"]["case_gates"]["errored"] == 1
    assert report["run"]["gates_passed"] is False
    states = {r["case_id"]: r["case"]["state"] for r in report["results"]}
    assert states == {"ok-1": "passed", "needs-judge": "errored", "ok-2": "passed"}

    cases = ET.parse(files["xml"]).getroot().find("testsuite")
    assert cases is not None
    assert (cases.get("tests"), cases.get("errors"), cases.get("failures")) == ("3", "1", "0")

    markdown = files["md"].read_text()
    assert markdown.startswith("## checkweigh: bookings ❌ failed")
    assert "3 execution(s) of 3 case(s), 1 errored." in markdown

    # the stored summary says the same to everyone who reads it later
    code, shown, _ = _cli("show", "latest", "--db", db)
    assert code == 1
    assert "3 execution(s) of 3 case(s); 1 errored" in shown


# --- hostile text in every output ------------------------------------------------------------

HOSTILE = [
    # (what it is, the text): each is a case id, the value the agent left in its final state
    # (so it is in the check's reason) and a label's note
    ("rich closing tag (crashed the report)", "[/]"),
    ("rich style markup", "[bold red]x[/]"),
    ("rich link chosen by the data", "[link=https://evil.example]click[/link]"),
    ("OSC: retitle the terminal", "\x1b]0;pwned\x07"),
    ("CSI: clear the screen", "\x1b[2J"),
    ("carriage return over the line", "ok\rFAKE PASS"),
    ("backspaces", "ab\b\bXY"),
    ("C1 CSI", "\x9b31m"),
    ("bidi override", "\u202eevil\u202c"),
    ("bidi isolate", "\u2066isolated\u2069"),
    ("HTML", "<script>alert(1)</script>"),
    ("Markdown link", "](http://evil.example)"),
    ("bare URL", "https://evil.com/login"),
    ("www name", "www.evil.com"),
    ("e-mail and mention", "admin@evil.com @octocat"),
    ("issue reference", "fixes #1"),
]
TIME_CHECK = "time [bold red]x[/] \x1b]0;pwned\x07"
WHO_CHECK = "who \u202eevil\u202c https://evil.com"
WORDS_CHECK = "words [/] <b>"
RUBRIC = "rubric [link=https://evil.example]click[/link] \x1b[2J"
SUITE_NAME = "evil [/] suite \x1b]0;pwned\x07 www.evil.com $\\frac{$"  # "$": matplotlib mathtext
# raw control characters and bidi controls: none may reach a terminal, Markdown or HTML
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
SGR = re.compile("\x1b\\[[0-9;]*m")  # rich's own colours, when the output is a terminal


def _hostile_suite(folder: Path, *, regressed: bool) -> Path:
    """The suite and its cases. The base run books everything right; the candidate leaves the
    hostile text where the time should be, so every case regresses with it in the reason."""
    folder.mkdir(parents=True, exist_ok=True)
    q = json.dumps  # a JSON string is a YAML double-quoted scalar: the escapes are exact
    (folder / "suite.yaml").write_text(
        f"name: {q(SUITE_NAME)}\n"
        "cases: cases.jsonl\n"
        "checks:\n"
        f"  {q(TIME_CHECK)}:\n"
        "    type: equals\n"
        "    path: final_state.booking.time\n"
        "    expected_path: ground_truth.time\n"
        f"  {q(WHO_CHECK)}:\n"
        "    type: set_equals\n"
        "    path: final_state.booking.participants\n"
        "    expected_path: ground_truth.participants\n"
        f"  {q(WORDS_CHECK)}:\n"
        "    type: word_count\n"
        "    path: output\n"
        "    min: 3\n"
        "rubrics:\n"
        f"  {q(RUBRIC)}:\n"
        "    weights:\n"
        f"      {q(TIME_CHECK)}: {{weight: 0.5, required: true}}\n"
        f"      {q(WHO_CHECK)}: 0.3\n"
        f"      {q(WORDS_CHECK)}: 0.2\n"
        "thresholds: {metrics_pass_threshold: 0, cases_pass_threshold: 0}\n"
        "gates:\n"
        f"  - {{rubric: {q(RUBRIC)}, metric: tcr, min: 0.5}}\n"
        "  - {metric: errored_executions, max: 0}\n",
        encoding="utf-8",
    )
    cases = []
    for i, (_, text) in enumerate(HOSTILE):
        case = make_case(
            f"c{i} {text}",
            participants=["Alice", "Bob"],
            time=text if regressed else "10:00",
            reply=f"Booked. {text}" if regressed else "Booked Alice and Bob at 10:00.",
        )
        cases.append(case)
    (folder / "cases.jsonl").write_text(
        "".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8"
    )
    return folder / "suite.yaml"


Outputs = dict[str, tuple[int, str, str]]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Outputs]:
    """Every command run on the hostile runs once; the tests below read what they printed."""
    tmp = tmp_path_factory.mktemp("hostile")
    db = f"sqlite:///{tmp / 'r.db'}"
    out = tmp / "out"
    labels = tmp / "labels.jsonl"
    labels.write_text(
        "".join(
            json.dumps({"case": f"c{i} {text}", "check": TIME_CHECK, "label": "yes", "note": text})
            + "\n"
            for i, (_, text) in enumerate(HOSTILE)
        ),
        encoding="utf-8",
    )
    outputs: Outputs = {}
    base = _hostile_suite(tmp / "base", regressed=False)
    cand = _hostile_suite(tmp / "cand", regressed=True)
    outputs["run (base)"] = _cli("run", str(base), "--db", db, "-q")
    outputs["run"] = _cli(
        "run",
        str(cand),
        "--db",
        db,
        "-q",
        "--json",
        str(out / "run.json"),
        "--junit",
        str(out / "run.xml"),
        "--markdown",
        str(out / "run.md"),
    )
    outputs["show"] = _cli("show", "latest", "--db", db, "--markdown", str(out / "show.md"))
    outputs["runs"] = _cli("runs", "--db", db)
    outputs["compare"] = _cli(
        "compare",
        "previous",
        "latest",
        "--db",
        db,
        "--markdown",
        str(out / "compare.md"),
        "--json",
        str(out / "compare.json"),
    )
    outputs["stability"] = _cli(
        "stability",
        "latest",
        "--db",
        db,
        "--noise",
        f"{TIME_CHECK}=0.2",
        "--sims",
        "300",
        "--html",
        str(out / "stability.html"),
        "--png",
        str(out / "stability.png"),
        "--json",
        str(out / "stability.json"),
    )
    outputs["align"] = _cli(
        "align", "latest", str(labels), "--db", db, "--json", str(out / "align.json")
    )
    # on a terminal rich writes its own colour codes: the data's must still not get through
    colour = {"FORCE_COLOR": "1", "TERM": "xterm-256color"}
    outputs["show (terminal)"] = _cli("show", "latest", "--db", db, env=colour)
    outputs["runs (terminal)"] = _cli("runs", "--db", db, env=colour)
    outputs["compare (terminal)"] = _cli("compare", "previous", "latest", "--db", db, env=colour)
    outputs["align (terminal)"] = _cli("align", "latest", str(labels), "--db", db, env=colour)
    outputs["run with progress (terminal)"] = _cli("run", str(base), "--db", db, env=colour)
    return out, outputs


@pytest.mark.parametrize(
    ("command", "exit_code"),
    [
        ("run (base)", 0),
        ("run", 1),  # the candidate fails its TCR gate
        ("show", 1),
        ("runs", 0),
        ("compare", 1),  # every case regressed
        ("stability", 0),
        ("align", 0),
        ("show (terminal)", 1),
        ("runs (terminal)", 0),
        ("compare (terminal)", 1),
        ("align (terminal)", 0),
    ],
)
def test_hostile_text_is_printed_inert(
    hostile: tuple[Path, Outputs], command: str, exit_code: int
) -> None:
    code, out, err = hostile[1][command]
    assert code == exit_code, out + err
    for stream in (out, err):
        assert "Traceback" not in stream
        bare = SGR.sub("", stream)
        assert not RAW.search(bare), f"{command}: raw {RAW.search(bare)!r} in {bare!r}"
        assert "\x1b]8;" not in stream  # no terminal hyperlink
    if command.startswith("runs"):
        assert "evil [/] suite \\x1b]0;pwned\\x07 www.evil.com $\\frac{$" in SGR.sub("", out)
        return
    text = SGR.sub("", out)
    if command.startswith(("run", "show", "compare")) and command != "run (base)":
        # markup is shown as written, control characters as visible escapes
        assert "c1 [bold red]x[/]" in text
        assert "c2 [link=https://evil.example]click[/link]" in text
        assert "c3 \\x1b]0;pwned\\x07" in text
        assert "c5 ok\\rFAKE PASS" in text
    if command.startswith("align"):
        assert "[link=https://evil.example]click[/link]" in text
        assert "\\u202eevil\\u202c" in text


def test_the_progress_bar_shows_the_suite_name_inert(hostile: tuple[Path, Outputs]) -> None:
    """The bar moves the cursor with its own escape sequences; the data's must not be there."""
    code, out, err = hostile[1]["run with progress (terminal)"]
    assert code == 0, out + err
    # the bar's description
    assert "evil [/] suite \\x1b]0;pwned\\x07 www.evil.com $\\frac{$" in err
    for stream in (out, err):
        assert "\x1b]" not in stream  # no OSC: no title, no hyperlink
        assert "\x1b[2J" not in stream
        assert not re.search("[\x07\x08\x9b\u202a-\u202e\u2066-\u2069]", stream)


HOSTILE_AGENT = """\
def run(request):
    text = request["text"]
    if request["fail"]:
        raise RuntimeError("calendar said " + text)
    return {
        "trace": [
            {"kind": "tool_call", "name": "check_availability"},
            {"kind": "tool_call", "name": "book_meeting"},
            {"kind": "assistant", "content": "Booked. " + text},
        ],
        "final_state": {"booking": {"participants": ["Alice", "Bob"], "time": text}},
    }
"""


def test_a_live_agents_output_and_errors_are_printed_inert(tmp_path: Path) -> None:
    """Agent text reaches the report twice: in a check's reason (the time it booked) and in
    the message of the exception it raised."""
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "hostile_agent.py").write_text(HOSTILE_AGENT)
    cases = [
        {
            "id": f"a{i}",
            "input": {"text": text, "fail": i % 2 == 1},
            "ground_truth": {"participants": ["Alice", "Bob"], "time": "10:00"},
        }
        for i, (_, text) in enumerate(HOSTILE)
    ]
    suite = write_suite(folder, cases)
    suite.write_text(
        suite.read_text().replace(
            "cases: cases.jsonl\n", "cases: cases.jsonl\ntarget:\n  agent: hostile_agent:run\n"
        )
    )
    md = tmp_path / "r.md"
    colour = {"FORCE_COLOR": "1", "TERM": "xterm-256color"}
    db = f"sqlite:///{tmp_path / 'r.db'}"
    code, out, err = _cli("run", str(suite), "--db", db, "-q", "--markdown", str(md), env=colour)
    assert code == 1, out + err  # the agent errors fail the TCR gate
    assert "Traceback" not in out + err
    text = SGR.sub("", out)
    assert not RAW.search(text), RAW.search(text)
    assert not RAW.search(SGR.sub("", err))
    assert "errored a1#0: agent raised RuntimeError: calendar said [bold red]x[/]" in text
    assert "errored a3#0: agent raised RuntimeError: calendar said \\x1b]0;pwned\\x07" in text
    assert "final_state.booking.time is '[link=https://evil.example]click[/link]'" in text
    rendered = _rendered(md.read_text(encoding="utf-8"))
    assert _links_and_tags(rendered) == []
    assert "calendar said [bold red]x[/]" in rendered


EVIL = "\x1b]0;pwned\x07[/][link=https://evil.example]x[/link]\u202e"
SHOWN = "\\x1b]0;pwned\\x07[/][link=https://evil.example]x[/link]\\u202e"


def _unknown_key_suite(tmp: Path) -> list[str]:
    suite = write_suite(tmp / "s", [make_case("ok", participants=["Alice"], time="10:00")])
    suite.write_text(suite.read_text() + f"{json.dumps(EVIL)}: 1\n", encoding="utf-8")
    return ["run", str(suite), "--db", f"sqlite:///{tmp / 'r.db'}", "-q"]


MESSAGES = [
    (
        "a suite key that is not known",
        _unknown_key_suite,
        2,
        "unknown key",
    ),
    (
        "a run reference that matches no run",
        lambda tmp: ["show", EVIL, "--db", f"sqlite:///{tmp / 'r.db'}"],
        2,
        "no run '",
    ),
    (
        "a database path with control characters",
        lambda tmp: ["runs", "--db", f"sqlite:///{tmp / EVIL.replace('/', '_')}.db"],
        0,
        "no runs in sqlite:///",  # the URL is shown percent-encoded
    ),
    (
        "compare with a reference that matches no run",
        lambda tmp: ["compare", "latest", EVIL, "--db", f"sqlite:///{tmp / 'r.db'}"],
        2,
        "error: ",
    ),
    (
        "align with a check that has no label",
        lambda tmp: [
            "align",
            "latest",
            str(_labels(tmp)),
            "--check",
            EVIL,
            "--db",
            f"sqlite:///{tmp / 'r.db'}",
        ],
        2,
        f"no labels for check '{SHOWN}'",
    ),
]


@pytest.mark.parametrize(
    ("fault", "args", "exit_code", "fragment"), MESSAGES, ids=[row[0] for row in MESSAGES]
)
def test_hostile_text_in_messages_is_inert(
    tmp_path: Path, fault: str, args: Any, exit_code: int, fragment: str
) -> None:
    code, out, err = _cli(*args(tmp_path))
    assert code == exit_code, fault + out + err
    assert "Traceback" not in out + err
    assert fragment in (err if exit_code == 2 else out), fault + out + err
    if exit_code == 2:
        assert len(err.strip().splitlines()) == 1, err
    for stream in (out, err):
        assert not RAW.search(stream), (fault, stream)


def _labels(tmp: Path) -> Path:
    path = tmp / "labels.csv"
    path.write_text("case,check,label\nok,time,yes\n", encoding="utf-8")
    return path


def _links_and_tags(html: str) -> list[str]:
    class Tags(HTMLParser):
        found: list[str] = []  # noqa: RUF012 (one parser per call)

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag in ("a", "script", "img", "b") and not (
                tag == "img" and dict(attrs).get("src", "").startswith("data:image/png")
            ):
                self.found.append(tag)

    parser = Tags()
    parser.found = []
    parser.feed(html)
    return parser.found


_MARKDOWN_IT = MarkdownIt("commonmark", {"linkify": True}).enable(["linkify", "table"])


def _github(text: str) -> str:
    """GitHub's own renderer: cmark-gfm with its autolink, table and tag-filter extensions."""
    return str(cmarkgfm.github_flavored_markdown_to_html(text))


# two renderers that autolink: linkify-it (bare domains too) and GitHub's cmark-gfm
RENDERERS = {"markdown-it + linkify": _MARKDOWN_IT.render, "GitHub (cmark-gfm)": _github}


def _rendered(text: str) -> str:
    """``text`` rendered by each renderer; the tests ask the same of both."""
    return "\n".join(render(text) for render in RENDERERS.values())


@pytest.mark.parametrize("name", ["run.md", "show.md", "compare.md"])
def test_hostile_text_in_markdown_renders_as_text_without_links(
    hostile: tuple[Path, Outputs], name: str
) -> None:
    text = (hostile[0] / name).read_text(encoding="utf-8")
    assert not RAW.search(text), RAW.search(text)
    html = _rendered(text)
    assert _links_and_tags(html) == []
    assert "<table>" in html  # the tables are intact: no "|" from the data broke them
    assert "[bold red]x[/]" in html  # the text is there, only inert
    assert "\\x1b]0;pwned\\x07" in html


def test_hostile_text_in_the_stability_page_is_escaped(hostile: tuple[Path, Outputs]) -> None:
    html = (hostile[0] / "stability.html").read_text(encoding="utf-8")
    assert not RAW.search(html), RAW.search(html)
    assert _links_and_tags(html) == []
    assert "time [bold red]x[/] \\x1b]0;pwned\\x07" in html
    assert "&lt;script&gt;" in html or "c10" not in html


def test_hostile_text_in_junit_and_json_is_kept_as_data(hostile: tuple[Path, Outputs]) -> None:
    out = hostile[0]
    schema = xmlschema.XMLSchema(Path(__file__).parents[1] / "support" / "junit.xsd")
    schema.validate(str(out / "run.xml"))
    cases = ET.parse(out / "run.xml").getroot().find("testsuite")
    assert cases is not None
    names = [tc.get("name", "") for tc in cases.findall("testcase")]
    assert names[3] == "c3 \\x1b]0;pwned\\x07"
    assert names[10] == "c10 <script>alert(1)</script>"  # XML escapes it; CI pages show text
    assert not any(RAW.search(n) for n in names)
    # JSON is data: the exact text survives, its control characters written as \u escapes
    ids = [f"c{i} {t}" for i, (_, t) in enumerate(HOSTILE)]
    documents = {}
    for name in ("run.json", "compare.json", "stability.json", "align.json"):
        text = (out / name).read_text(encoding="utf-8")
        assert not RAW.search(text), (name, RAW.search(text))
        documents[name] = json.loads(text)
    assert [r["case_id"] for r in documents["run.json"]["results"]] == ids
    assert documents["run.json"]["run"]["suite"] == SUITE_NAME
    assert documents["compare.json"]["paired"] == len(HOSTILE)
    assert sorted(c["case_id"] for c in documents["compare.json"]["regressions"]) == sorted(ids)
    assert documents["stability.json"]["run"]["suite"] == SUITE_NAME
    (check,) = documents["align.json"]["checks"]
    assert check["check"] == TIME_CHECK
    assert {d["note"] for d in check["disagreements"]} == {t for _, t in HOSTILE}


@pytest.mark.parametrize(("what", "text"), HOSTILE)
def test_each_hostile_text_is_inert_in_markdown_and_on_the_console(what: str, text: str) -> None:
    md = escape_md(f"reason: {text}")
    assert not RAW.search(md), what
    assert _links_and_tags(_rendered(f"| a |\n| --- |\n| {md} |\n")) == [], what
    shown = clean(text)
    assert not RAW.search(shown), what
    assert "\n" not in clean(f"{text}\nforged line"), what


@pytest.mark.parametrize(
    ("text", "written"),
    [
        # what GitHub or linkify-it would link, and how the Markdown report spells it
        ("https://evil.com/x", "https&#58;/&#47;evil&#46;com/x"),
        ("see www.evil.com", "see www&#46;evil&#46;com"),
        ("admin@evil.com", "admin@&#8203;evil&#46;com"),
        ("ping @octocat", "ping @&#8203;octocat"),
        ("closes #12", "closes #&#8203;12"),
        ("//localhost:8080/x", "/&#47;localhost&#58;8080/x"),
        ("javascript:alert(1)", "javascript&#58;alert(1)"),
        ("[x](http://evil)", "\\[x\\](http&#58;/&#47;evil)"),
        ("<https://evil.com>", "&lt;https&#58;/&#47;evil&#46;com&gt;"),
        ("$\\href{http://evil}{x}$", "\\$\\\\href{http&#58;/&#47;evil}{x}\\$"),
        # ordinary text is left alone
        ("time: 10:00, score 60.5", "time: 10:00, score 60.5"),
    ],
)
def test_markdown_spells_links_so_that_nothing_links_them(text: str, written: str) -> None:
    assert escape_md(text) == written
    assert _links_and_tags(_rendered(escape_md(text))) == []


def test_a_test_failure_report_shows_hostile_text_escaped() -> None:
    result = CaseResult(
        case_id="c \x1b]0;pwned\x07 [/]",
        repeat=0,
        verdicts={"time \u202e": Verdict(VerdictState.FAILED, "saw \x1b[2J\rFAKE")},
        results={},
    )
    report = case_report(result, PassPolicy().decide(result), pass_threshold=75)
    assert not RAW.search(report)
    assert "\\x1b]0;pwned\\x07 [/]" in report
    assert "- time \\u202e: saw \\x1b[2J FAKE" in report
