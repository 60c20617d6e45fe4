"""Every command and suite the README and the documentation site show runs as shown.

Each page runs in a folder of its own holding a copy of ``examples/``, with a SQLite store
there (``CHECKWEIGH_DB``), through the real ``checkweigh`` command in a subprocess. What a
page's blocks mean to this test (an HTML comment on the line just above a block, invisible in
the site):

- a ```` ```bash ```` or ```` ```sh ```` block is run line by line: ``checkweigh ...``
  through the CLI (after any ``NAME=value`` words, set in its environment), expecting exit 0
  unless a comment on the line says ``# exit N``; ``cd DIR``
  moves within the copy for the rest of the block (each block starts where the page's
  commands start), and ``export NAME=value`` sets the variable for the page's later commands
  (``CHECKWEIGH_DB`` and ``CHECKWEIGH_CACHE_DIR`` point into the copy unless a page sets
  them). Any other command fails the test: such a block says ``<!-- not run: REASON -->``.
- a ```` ```yaml ```` block must parse. A suite (``name:``, ``checks:`` and ``rubrics:``) is
  loaded with checkweigh's loader from where it would live, ``<!-- file: PATH -->`` or
  ``<!-- suite in: DIR -->``, and run with ``checkweigh run`` when it names its cases (exit 0,
  or ``<!-- exit: N -->``); a suite with no place to live must say ``<!-- not run: REASON -->``.
  A suite given as a file is loaded once the page's commands have run (they may write its
  cases), and run then unless one of them ran it. A part of a suite shown on its own
  (``checks:``, ``rubrics:``, ``thresholds:``, ``judge:``, ``gates:``, or named checks) is
  loaded in a suite of one case with a rubric weighing its checks (unless it shows its own).
  A monitor (``name:`` and ``suite:``, no ``checks:``) is loaded with ``load_monitor`` from
  ``<!-- file: PATH -->`` or ``<!-- monitor in: DIR -->`` (its suite relative to it), or says
  ``<!-- not run: REASON -->``.
- a block with no language that shows a ``checkweigh`` command fails the test: give it
  ``bash`` (run it) or ``text`` (a synopsis, or a command with its output).
- a ```` ```python ```` block must compile (top-level ``await`` allowed).
- ``<!-- file: PATH -->`` above any block writes it to PATH (from the copy's root) before the
  page's next blocks run (a shell block so marked is a script: written, not run);
  ``<!-- commands run in: DIR -->`` anywhere on a page starts its commands in DIR.

The blocks marked not run are counted and listed by ``test_blocks_not_run_say_why``.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
ENTRY = "from checkweigh.cli import main; main()"
SHELLS = {"bash", "sh"}

_FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
_MARK = re.compile(r"^\s*<!-- ([\w ]+): (.+?) -->\s*$")
_EXIT = re.compile(r"#\s*exit (\d+)\b")
_ASSIGN = re.compile(r"[A-Z_][A-Z0-9_]*=.*")


@dataclass
class Block:
    """A fenced block of a page, with the markers written just above it."""

    page: str
    line: int
    lang: str
    body: str
    marks: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix() if page.is_relative_to(ROOT) else page.name


def blocks(page: Path) -> list[Block]:
    """The page's fenced blocks, in order (an indented block, inside a list, dedented)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opened = _FENCE.match(lines[i])
        if not opened:
            i += 1
            continue
        indent, lang = opened.group(1), opened.group(2)
        marks: dict[str, str] = {}
        j = i - 1
        while j >= 0 and (mark := _MARK.match(lines[j])):
            marks.setdefault(mark.group(1), mark.group(2))
            j -= 1
        body: list[str] = []
        start = i + 1  # the fence's line, counted from 1
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
            i += 1
        found.append(Block(_name(page), start, lang, "\n".join(body) + "\n", marks))
        i += 1
    return found


def page_start(page: Path) -> str:
    """The folder a page's commands start in (``<!-- commands run in: DIR -->``), or ''."""
    found = re.search(r"<!-- commands run in: (.+?) -->", page.read_text(encoding="utf-8"))
    return found.group(1) if found else ""


def commands(block: Block) -> list[tuple[str, int]]:
    """A shell block's commands, continuation lines joined, each with its expected exit code."""
    joined = re.sub(r"\s*\\\n\s*", " ", block.body)
    found = []
    for raw in joined.splitlines():
        line = raw.strip().removeprefix("$ ")
        if not line or line.startswith("#"):
            continue
        expected = _EXIT.search(line)
        found.append((line, int(expected.group(1)) if expected else 0))
    return found


def is_suite(data: object) -> bool:
    return isinstance(data, dict) and {"name", "checks", "rubrics"} <= set(data)


def is_monitor(data: object) -> bool:
    return isinstance(data, dict) and {"name", "suite"} <= set(data) and "checks" not in data


ALL = [b for page in PAGES for b in blocks(page)]
NOT_RUN = [b for b in ALL if "not run" in b.marks]


@dataclass
class Copy:
    """A page's working copy: ``examples/`` and a SQLite store, in a folder of its own."""

    root: Path
    start: Path
    cwd: Path
    env: dict[str, str]
    ran: set[Path] = field(default_factory=set)  # the suites a command of the page ran

    def checkweigh(
        self, args: list[str], expected: int, where: str, env: dict[str, str] | None = None
    ) -> None:
        if args[:1] == ["run"] and len(args) > 1:
            self.ran.add((self.cwd / args[1]).resolve())
        proc = subprocess.run(
            [sys.executable, "-c", ENTRY, *args],
            cwd=self.cwd,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == expected, (
            f"{where}: `checkweigh {shlex.join(args)}` exited {proc.returncode}, expected "
            f"{expected}\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
        )


def _copy(tmp_path: Path, page: Path) -> Copy:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {
        **os.environ,
        "CHECKWEIGH_DB": f"sqlite:///{tmp_path / 'docs.db'}",
        "CHECKWEIGH_CACHE_DIR": str(tmp_path / "cache"),
        "COLUMNS": "200",
    }
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CHECKWEIGH_TOKEN"):
        env.pop(key, None)
    start = tmp_path / page_start(page)
    return Copy(tmp_path, start, start, env)


def _shell(copy: Copy, block: Block) -> None:
    copy.cwd = copy.start  # each block starts where the page's commands do
    for line, expected in commands(block):
        args = shlex.split(line, comments=True)
        env = {}
        while len(args) > 1 and _ASSIGN.fullmatch(args[0]):
            name, _, value = args.pop(0).partition("=")
            env[name] = value
        if args[0] == "cd" and len(args) == 2:
            copy.cwd = (copy.cwd / args[1]).resolve()
            assert copy.cwd.is_relative_to(copy.root), f"{block.where}: cd leaves the copy"
        elif args[0] == "export" and len(args) > 1 and all(map(_ASSIGN.fullmatch, args[1:])):
            copy.env.update(dict(arg.partition("=")[::2] for arg in args[1:]))
        elif args[0] == "checkweigh":
            copy.checkweigh(args[1:], expected, block.where, env)
        else:
            pytest.fail(
                f"{block.where}: `{line}` is not a checkweigh command; mark the block "
                "<!-- not run: REASON --> if it cannot run in a test"
            )


def _yaml(copy: Copy, block: Block) -> None:
    try:
        data = yaml.safe_load(block.body)
    except yaml.YAMLError as exc:
        pytest.fail(f"{block.where}: the YAML shown does not parse: {exc}")
    if is_suite(data):
        _suite(copy, block, data)
    elif is_monitor(data):
        _monitor(copy, block, data)
    elif (part := fragment(data)) is not None:
        _fragment(copy, block, part)


SUITE_PARTS = {"checks", "rubrics", "thresholds", "judge", "gates", "repeats"}


def fragment(data: object) -> dict[str, Any] | None:
    """The suite keys a block shows on their own (``checks:``, ``thresholds:``...), or named
    checks shown bare (``name: {type: ...}``), as a part of a suite; None for anything else."""
    if not isinstance(data, dict) or not data:
        return None
    if set(data) <= SUITE_PARTS:
        return dict(data)
    if all(isinstance(v, dict) and "type" in v for v in data.values()):
        return {"checks": data}
    return None


def _fragment(copy: Copy, block: Block, part: dict[str, Any]) -> None:
    """Load a suite made of the part shown, a rubric weighing its checks and one case."""
    checks = part.get("checks") or {"shown": {"type": "length", "path": "input", "min": 0}}
    rubrics = (part.get("thresholds") or {}).get("score_rubrics") or ["shown"]
    suite = {
        "name": "fragment",
        "cases": "fragment-cases.yaml",
        **part,
        "checks": checks,
        "rubrics": part.get("rubrics")
        or {name: {"weights": dict.fromkeys(checks, 1)} for name in rubrics},
    }
    (copy.root / "fragment-cases.yaml").write_text('- {id: c, input: "hi"}\n', encoding="utf-8")
    path = copy.root / f"fragment-{block.line}.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    from checkweigh.suites import load_suite

    try:
        load_suite(path, load_agent=False)
    except Exception as exc:  # noqa: BLE001 -- any failure is the page's, named by its line
        pytest.fail(f"{block.where}: the suite part shown does not load: {exc}")


def _monitor(copy: Copy, block: Block, data: dict[str, Any]) -> None:
    """Load a monitor shown as ``checkweigh serve --monitor`` would (its judge built, not
    called: a placeholder key stands in for a provider's when none is set)."""
    if "file" in block.marks:
        path = copy.root / block.marks["file"]
    elif "monitor in" in block.marks:
        path = copy.root / block.marks["monitor in"] / f"monitor-{block.line}.yaml"
        path.write_text(block.body, encoding="utf-8")
    else:
        pytest.fail(
            f"{block.where}: a monitor with no place to load it from: mark it "
            "<!-- monitor in: DIR -->, <!-- file: PATH --> or <!-- not run: REASON -->"
        )
    import asyncio
    from unittest import mock

    from checkweigh.live import load_monitor

    keys = {k: "sk-docs-placeholder" for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    with mock.patch.dict(os.environ, {**keys, **os.environ}):
        try:
            monitor = load_monitor(path)
        except Exception as exc:  # noqa: BLE001 -- any failure is the page's, named by its line
            pytest.fail(f"{block.where}: the monitor shown does not load: {exc}")
    asyncio.run(monitor.close())
    assert monitor.name == data["name"]


def _suite(copy: Copy, block: Block, data: dict[str, Any]) -> None:
    if "file" in block.marks:
        path = copy.root / block.marks["file"]
    elif "suite in" in block.marks:
        path = copy.root / block.marks["suite in"] / f"shown-{block.line}.yaml"
        path.write_text(block.body, encoding="utf-8")
    else:
        pytest.fail(
            f"{block.where}: a suite with no place to load it from: mark it "
            "<!-- suite in: DIR -->, <!-- file: PATH --> or <!-- not run: REASON -->"
        )
    from checkweigh.suites import load_suite

    suite = load_suite(path)
    assert suite.name == data["name"]
    if data.get("cases") and path.resolve() not in copy.ran:
        expected = int(block.marks.get("exit", "0"))
        copy.checkweigh(["run", str(path)], expected, block.where)


def test_every_command_shown_says_whether_it_runs() -> None:
    unclear = [
        b.where for b in ALL if not b.lang and re.search(r"^(\$ )?checkweigh ", b.body, re.M)
    ]
    assert unclear == [], "give these blocks `bash` (run) or `text` (a synopsis or output)"


@pytest.mark.parametrize("page", PAGES, ids=[_name(p) for p in PAGES])
@pytest.mark.usefixtures("fresh_modules")  # a page's agent module is loaded here: forget it
def test_every_block_of_the_page_runs_as_shown(tmp_path: Path, page: Path) -> None:
    copy = _copy(tmp_path, page)
    later: list[Block] = []
    for block in blocks(page):
        if "not run" in block.marks:
            continue
        if "file" in block.marks:
            target = copy.root / block.marks["file"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.body, encoding="utf-8")
        if block.lang in SHELLS and "file" not in block.marks:  # a script is a file, not commands
            _shell(copy, block)
        elif block.lang == "yaml" and "file" in block.marks:
            later.append(block)  # its cases may be what a later command of the page writes
        elif block.lang == "yaml":
            _yaml(copy, block)
        elif block.lang == "python":
            # shown, not run (it may need a judge or a loop of its own); it must be Python
            compile(block.body, block.where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    copy.cwd = copy.start
    for block in later:
        _yaml(copy, block)


def test_blocks_not_run_say_why(record_property: pytest.RecordProperty) -> None:
    listing = [f"{b.where} ({b.lang}): {b.marks['not run']}" for b in NOT_RUN]
    record_property("not_run", listing)
    print(f"\n{len(NOT_RUN)} block(s) not run, of {len(ALL)}:", *listing, sep="\n  ")
    for block in NOT_RUN:
        assert len(block.marks["not run"].split()) >= 3, f"{block.where}: say why it is not run"
    run = [b for b in ALL if b.lang in SHELLS and "not run" not in b.marks]
    assert len(run) > len(NOT_RUN), "most shell blocks must run"


def test_the_parser_reads_markers_fences_and_exit_codes(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "text\n<!-- not run: needs a real API key -->\n```bash\ncheckweigh run x.yaml --judge "
        "openai:m\n```\n- item\n\n  <!-- file: a/b.yaml -->\n  ```yaml\n  name: n\n  ```\n"
        "```sh\n$ checkweigh show latest \\\n    --json o.json   # exit 1\ncd sub\n```\n",
        encoding="utf-8",
    )
    found = blocks(page)
    assert [(b.lang, b.marks) for b in found] == [
        ("bash", {"not run": "needs a real API key"}),
        ("yaml", {"file": "a/b.yaml"}),
        ("sh", {}),
    ]
    assert found[1].body == "name: n\n"
    assert commands(found[2]) == [
        ("checkweigh show latest --json o.json   # exit 1", 1),
        ("cd sub", 0),
    ]


def test_a_command_that_exits_otherwise_fails_the_page(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```bash\ncheckweigh run missing.yaml\n```\n", encoding="utf-8")
    copy = Copy(tmp_path, tmp_path, tmp_path, {**os.environ, "COLUMNS": "200"})
    with pytest.raises(AssertionError, match=r"page.md:1: `checkweigh run missing.yaml` exited 2"):
        _shell(copy, blocks(page)[0])


def test_a_part_of_a_suite_shown_is_loaded(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```yaml\nchecks:\n  ok: {type: equals, path: input, value: hi}\n```\n"
        "```yaml\nbooked:\n  type: equals\n  pth: final_state.booked\n```\n",
        encoding="utf-8",
    )
    copy = Copy(tmp_path, tmp_path, tmp_path, dict(os.environ))
    good, bad = blocks(page)
    _yaml(copy, good)
    with pytest.raises(
        pytest.fail.Exception, match=r"page.md:5: the suite part shown does not load"
    ):
        _yaml(copy, bad)


def test_a_page_sets_variables_for_one_command_or_the_rest_of_the_page(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```bash\nexport CHECKWEIGH_DB=sqlite:///exported.db\ncheckweigh labels export a.csv\n"
        "CHECKWEIGH_DB=sqlite:///once.db checkweigh labels export b.csv\n"
        "checkweigh labels export c.csv\nNOT_A_COMMAND=1\n```\n",
        encoding="utf-8",
    )
    env = {**os.environ, "CHECKWEIGH_DB": f"sqlite:///{tmp_path / 'page.db'}"}
    copy = Copy(tmp_path, tmp_path, tmp_path, env)
    with pytest.raises(pytest.fail.Exception, match="`NOT_A_COMMAND=1` is not a checkweigh"):
        _shell(copy, blocks(page)[0])
    assert (tmp_path / "exported.db").is_file()
    assert (tmp_path / "once.db").is_file()
    assert not (tmp_path / "page.db").exists()
    assert copy.env["CHECKWEIGH_DB"] == "sqlite:///exported.db"
    assert {p.name for p in tmp_path.glob("*.csv")} == {"a.csv", "b.csv", "c.csv"}


def test_a_monitor_shown_is_loaded_with_its_suite(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(
        "name: s\ncases: c.jsonl\nchecks:\n  ok: {type: equals, path: input, value: hi}\n"
        "rubrics:\n  r: {weights: {ok: 1}}\n",
        encoding="utf-8",
    )
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- monitor in: . -->\n```yaml\nname: prod\nsuite: suite.yaml\nwindow: 15m\n```\n"
        "<!-- monitor in: . -->\n```yaml\nname: prod\nsuite: suite.yaml\nwindow: soon\n```\n"
        "```yaml\nname: prod\nsuite: suite.yaml\n```\n",
        encoding="utf-8",
    )
    copy = Copy(tmp_path, tmp_path, tmp_path, dict(os.environ))
    good, bad, nowhere = blocks(page)
    _yaml(copy, good)
    with pytest.raises(
        pytest.fail.Exception, match=r"page.md:8: the monitor shown does not load: .*window:"
    ):
        _yaml(copy, bad)
    with pytest.raises(pytest.fail.Exception, match="a monitor with no place to load it from"):
        _yaml(copy, nowhere)
