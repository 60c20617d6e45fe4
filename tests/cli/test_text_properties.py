"""Property: any Python string, lone surrogates included, as an agent's reply, a check's reason
and a case's text goes through a run into the store, every report and the web UI: no crash,
valid output, and the text back as it was (a lone surrogate as its visible escape)."""

from __future__ import annotations

import html
import json
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import quote

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from checkweigh.cli import app as cli
from checkweigh.reports._safe import clean
from checkweigh.server import create_app
from checkweigh.store import Store
from support import cli_process
from support.postgres import fresh_database

AGENT = """\
def run(request):
    text = "".join(map(chr, request["codes"]))  # a raw str, lone surrogates and all
    return {"trace": [{"kind": "assistant", "content": text}], "final_state": {"said": text}}


def echo(case):
    return False, "".join(map(chr, case.input["codes"]))
"""

SUITE = """\
name: any-text
cases: cases.jsonl
target: {agent: "text_agent:run", timeout_s: 10}
checks:
  echo: {type: python, function: "text_agent:echo"}
  said: {type: equals, path: final_state.said, expected_path: input.text}
rubrics:
  completion:
    weights: {echo: 0.5, said: 0.5}
"""

# st.text() leaves out category Cs (surrogates) by default: ask for every category, and
# for surrogates often enough that lone ones and pairs both come up
ANY_CHAR = st.one_of(
    st.characters(exclude_categories=()),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
)
ANY_TEXT = st.text(ANY_CHAR, min_size=1, max_size=12)


def expected(text: str) -> str:
    """The text as stored: a high then a low surrogate is its character, a lone one its escape
    (written here independently of checkweigh._text)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        code = ord(text[i])
        after = ord(text[i + 1]) if i + 1 < len(text) else 0
        if 0xD800 <= code <= 0xDBFF and 0xDC00 <= after <= 0xDFFF:
            out.append(chr(0x10000 + ((code - 0xD800) << 10) + (after - 0xDC00)))
            i += 2
            continue
        out.append(f"\\u{code:04x}" if 0xD800 <= code <= 0xDFFF else text[i])
        i += 1
    return "".join(out)


def _write(folder: Path, text: str) -> None:
    (folder / "text_agent.py").write_text(AGENT)
    (folder / "suite.yaml").write_text(SUITE)
    case = {"id": _id(text), "input": {"text": text, "codes": [ord(c) for c in text]}}
    # json.dumps writes lone surrogates as \ud800 escapes (ensure_ascii)
    (folder / "cases.jsonl").write_text(json.dumps(case) + "\n")


def _id(text: str) -> str:
    return f"case-{text}"


def _check_outputs(folder: Path, text: str) -> None:
    want = expected(text)
    results = json.loads((folder / "o.json").read_text(encoding="utf-8"))["results"]
    (result,) = results
    assert result["case_id"] == expected(_id(text))
    assert result["verdicts"]["echo"]["reason"] == want
    assert result["verdicts"]["said"]["state"] == "passed"
    case = result["evaluated_case"]
    assert case["input"]["text"] == want
    assert case["trace"][0]["content"] == want
    root = ET.parse(folder / "o.xml").getroot()
    junit = [*root.itertext(), *(v for e in root.iter() for v in e.attrib.values())]
    assert any(clean(want, lines=True) in part for part in junit), junit
    assert "any-text" in (folder / "o.md").read_text(encoding="utf-8")


def _check_pages(store: Store, text: str) -> None:
    run_id = store.get_run("latest").id
    with TestClient(create_app(store)) as client:
        run_page = client.get(f"/runs/{run_id}")
        assert run_page.status_code == 200
        assert _shown(html.unescape(run_page.text), expected(_id(text)))
        case_id = quote(expected(_id(text)), safe="")
        case_page = client.get(f"/runs/{run_id}/cases/{case_id}?repeat=0")
        assert case_page.status_code == 200
        assert _shown(html.unescape(case_page.text), expected(text))
        api = client.get(f"/api/runs/{run_id}/results")
        assert api.status_code == 200
        (item,) = api.json()["items"]
        assert item["case_id"] == expected(_id(text))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=ANY_TEXT)
@example(text="\ud800")  # the testers' lone surrogate
@example(text="\udc80 and a pair \ud83d\ude00 \ud83d")  # a pair is its character
@example(text="line\nbreak")  # a case id holding a newline opens its page
def test_any_text_goes_through_a_sqlite_run_every_report_and_the_ui(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _write(folder, text)
        db = f"sqlite:///{folder / 'r.db'}"
        outputs = ["--json", "o.json", "--json-cases", "--junit", "o.xml", "--markdown", "o.md"]
        done = CliRunner().invoke(
            cli, ["run", str(folder / "suite.yaml"), "--db", db, *[_in(folder, o) for o in outputs]]
        )
        assert done.exit_code == 1, done.output  # the echo check fails: a gate fails
        assert clean(expected(text)) in done.output  # the console report
        _check_outputs(folder, text)
        _check_other_reports(folder, db, text)
        with Store(db) as store:
            (stored,) = list(store.iter_results(store.get_run("latest").id))
            assert stored.verdicts["echo"].reason == expected(text)
            _check_pages(store, text)


def _check_other_reports(folder: Path, db: str, text: str) -> None:
    """``show``, ``compare`` (stored runs, and run exports) and ``stability`` on the run."""
    invoke = CliRunner().invoke
    want_id = expected(_id(text))
    rerun = invoke(cli, ["run", str(folder / "suite.yaml"), "--db", db, "-q"])
    assert rerun.exit_code == 1, rerun.output
    shown = invoke(cli, ["show", "latest", "--db", db, "--json", str(folder / "s.json")])
    assert shown.exit_code == 1, shown.output
    assert clean(expected(text)) in shown.output
    (again,) = json.loads((folder / "s.json").read_text(encoding="utf-8"))["results"]
    assert again["verdicts"]["echo"]["reason"] == expected(text)
    for runs in (
        ["previous", "latest", "--db", db],
        ["--baseline", str(folder / "o.json"), "--candidate", str(folder / "s.json")],
    ):
        compared = invoke(
            cli,
            [
                "compare",
                *runs,
                "--json",
                str(folder / "c.json"),
                "--markdown",
                str(folder / "c.md"),
            ],
        )
        assert compared.exit_code == 0, compared.output  # the same answers: no regression
        assert json.loads((folder / "c.json").read_text(encoding="utf-8"))
        assert (folder / "c.md").read_text(encoding="utf-8")
    stable = invoke(
        cli,
        [
            "stability", "latest", "--db", db, "--noise", "echo=0.2", "--sims", "50",
            "--json", str(folder / "st.json"), "--html", str(folder / "st.html"),
        ],
    )  # fmt: skip
    assert stable.exit_code in (0, 1), stable.output
    report = json.loads((folder / "st.json").read_text(encoding="utf-8"))
    assert want_id in _strings(report)
    assert _shown(html.unescape((folder / "st.html").read_text(encoding="utf-8")), want_id)


def _shown(page: str, want: str) -> bool:
    """Whether a page shows ``want``: as text (HTML-escaped, or with control characters
    escaped as on the console) or inside the JSON of a final state."""
    forms = (want, clean(want), json.dumps(want, ensure_ascii=False)[1:-1], json.dumps(want)[1:-1])
    return any(form in page for form in forms)


def _strings(value: object) -> set[str]:
    """Every string in a parsed JSON value, keys too."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return {*value, *(s for v in value.values() for s in _strings(v))}
    if isinstance(value, list):
        return {s for v in value for s in _strings(v)}
    return set()


def _in(folder: Path, option: str) -> str:
    return str(folder / option) if "." in option else option


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=ANY_TEXT)
def test_any_text_goes_through_a_postgresql_run(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp, fresh_database() as url:
        folder = Path(tmp)
        _write(folder, text)
        outputs = ["--json", "o.json", "--json-cases", "--junit", "o.xml", "--markdown", "o.md"]
        done = cli_process.run(["run", "suite.yaml", "--db", url, *outputs], folder)
        assert done.code == 1, done.out + done.err
        _check_outputs(folder, text)
        with Store(url) as store:
            (stored,) = list(store.iter_results(store.get_run("latest").id))
            assert stored.verdicts["echo"].reason == expected(text)
            _check_pages(store, text)
