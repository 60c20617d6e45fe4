"""End-to-end fixtures: runs stored by the real CLI, the real ``checkweigh serve`` over them, and
one headless Chromium for the whole session.

The store holds three runs: the scheduling example as it is (the base), the same suite with an
agent that forgets the last person of every group booking (the candidate: a real regression,
significant on 43 paired cases), and a recorded run whose trace carries markup and script.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from checkweigh.store import Store
from checkweigh.testing import Reply, fake_llm_server
from support import browser as chromium
from support.cli_process import ENTRY
from support.recorded_suite import make_case, write_suite

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.remote.webelement import WebElement

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scheduling"
TOKEN = "browser-test-token-0f3c9a"
JUDGE = "openai:gpt-test"
JUDGE_ANSWER = '{"verdict": "yes", "reason": "the reply is short, plain and polite"}'
API_KEY = "sk-proj-browser-test-key-never-shown-7e1d"
"""The judge's API key: no page may ever show it."""

SCRIPT = "<script>window.__pwned=1</script>"
IMG = '<img src=x onerror="window.__pwned=2">'
HOSTILE_ID = '<img src=x onerror="window.__pwned=3">'
"""A case id an attacker chose, shown in the run's table and used in its case page's URL."""
HOSTILE_REPLY = f"Booked Alice and Bob at 10:00. {SCRIPT}"

# The candidate's agent: the example's agent with a regression a real change could make.
REGRESSED_AGENT = '''\
"""The scheduling agent after a bad change: it drops the last person of a group booking."""

from typing import Any

from .agent import run as _run


def run(request: dict[str, Any] | str) -> dict[str, Any]:
    result = _run(request)
    event = result["final_state"]["scheduling_context"]["booked_event"]
    if event is not None and len(event["participants"]) > 1:
        event["participants"] = event["participants"][:-1]
    return result
'''


class Runs(NamedTuple):
    """The stored runs the pages show."""

    url: str
    """The store's SQLAlchemy URL."""
    base: str
    candidate: str
    hostile: str
    folder: Path


def _run_suite(suite: Path, db: str, cwd: Path, *args: str, env: dict[str, str]) -> str:
    """``checkweigh run SUITE`` in a process of its own; the id of the run it stored."""
    done = subprocess.run(
        [sys.executable, "-c", ENTRY, "run", str(suite), "--db", db, "-q", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )
    # 1: a gate failed, and the run is stored all the same
    assert done.returncode in (0, 1), done.stdout + done.stderr
    with Store(db) as store:
        return store.get_run("latest").id


def _hostile_cases() -> list[dict[str, Any]]:
    """A recorded case whose every text field carries markup, and one whose id does."""
    case = make_case("xss-trace", participants=["Alice", "Bob"], time="10:00")
    case["input"] = {"message": f"Book Alice and Bob at 10 {IMG}"}
    case["trace"] = [
        {"kind": "user", "content": f"Book Alice and Bob at 10 {IMG}"},
        {
            "kind": "tool_call",
            "name": "check_availability",
            "arguments": {"people": ["Alice", "Bob"], "note": IMG},
            "result": {"free": True, "comment": SCRIPT},
            "latency_ms": 40.0,
        },
        {
            "kind": "tool_call",
            "name": "book_meeting",
            "arguments": {"title": SCRIPT},
            "error": f"calendar said: {IMG}",
            "latency_ms": 55.0,
        },
        {"kind": "tool_call", "name": "book_meeting", "arguments": {}, "latency_ms": 41.0},
        {"kind": "assistant", "content": HOSTILE_REPLY, "latency_ms": 300.0},
    ]
    by_id = make_case(HOSTILE_ID, participants=["Alice"], time="10:00", reply=SCRIPT)
    return [case, by_id]


def store_runs(folder: Path) -> Runs:
    """The three runs, made by the real CLI into a SQLite store under ``folder``; the two
    scheduling runs judge their tone check with a scripted OpenAI-compatible server."""
    db = f"sqlite:///{folder / 'runs.db'}"
    regressed = folder / "regressed"
    shutil.copytree(EXAMPLE, regressed, ignore=shutil.ignore_patterns("__pycache__"))
    (regressed / "scheduling_agent" / "regressed.py").write_text(REGRESSED_AGENT)
    suite = regressed / "suite.yaml"
    text = suite.read_text()
    assert "agent: scheduling_agent.agent:run" in text
    suite.write_text(text.replace("scheduling_agent.agent:run", "scheduling_agent.regressed:run"))
    with fake_llm_server([], default=Reply(JUDGE_ANSWER)) as judge:
        env = {
            "OPENAI_API_KEY": API_KEY,
            "OPENAI_BASE_URL": judge.base_url,
            "CHECKWEIGH_CACHE_DIR": str(folder / "judge-cache"),
        }
        judged = ("--judge", JUDGE, "--judge-prices", "0.15,0.6")
        base = _run_suite(EXAMPLE / "suite.yaml", db, folder, *judged, env=env)
        candidate = _run_suite(suite, db, folder, *judged, env=env)
    hostile = _run_suite(write_suite(folder / "hostile", _hostile_cases()), db, folder, env={})
    return Runs(db, base, candidate, hostile, folder)


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return store_runs(tmp_path_factory.mktemp("browser-runs"))


class Served(NamedTuple):
    """A running ``checkweigh serve``."""

    url: str
    """``http://127.0.0.1:PORT``."""
    proc: subprocess.Popen[str]


@contextmanager
def serving(db: str, cwd: Path, token: str | None = None, *extra: str) -> Iterator[Served]:
    """``checkweigh serve --port 0`` on 127.0.0.1 over ``db`` (with ``extra`` options),
    answering; stopped afterwards."""
    env = {k: v for k, v in os.environ.items() if k not in ("CHECKWEIGH_TOKEN", "CHECKWEIGH_DB")}
    if token is not None:
        env["CHECKWEIGH_TOKEN"] = token
    proc = subprocess.Popen(
        [sys.executable, "-c", ENTRY, "serve", "--db", db, "--port", "0", *extra],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"on (http://127\.0\.0\.1:\d+) ", line)
        assert found, f"checkweigh serve did not start: {line}"
        url = found.group(1)
        # the socket is listening before that line is printed: the first request waits in its
        # backlog until uvicorn accepts it, so no polling is needed
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        httpx.get(f"{url}/api/runs", headers=headers, timeout=10).raise_for_status()
        yield Served(url, proc)
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


@pytest.fixture(scope="session")
def server(runs: Runs) -> Iterator[Served]:
    with serving(runs.url, runs.folder) as served:
        yield served


@pytest.fixture(scope="session")
def token_server(runs: Runs) -> Iterator[Served]:
    with serving(runs.url, runs.folder, token=TOKEN) as served:
        yield served


@pytest.fixture(scope="session")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    chromium.require_browser()
    started = chromium.start_chromium(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield started
    finally:
        started.quit()


@dataclass
class Page:
    """The browser pointed at one server, with explicit waits and screenshots."""

    driver: WebDriver
    base_url: str
    shots: Path
    name: str
    # Chromium asks every page without an icon of its own (a JSON answer) for /favicon.ico
    allowed_console: list[str] = field(default_factory=lambda: ["/favicon.ico "])
    """Fragments of console errors that are expected (a test adds the ones it causes)."""

    def open(self, path: str, expect: str | None = None) -> None:
        """Load ``path`` of the server; with ``expect``, that CSS selector must be on it.

        ``get`` returns once the page has loaded, and the pages are drawn by the server, so
        what is not there now never comes (a page drawn by script waits with ``wait_for``).
        """
        self.driver.get(self.base_url + path)
        if expect is not None and not self.all(expect):
            raise AssertionError(f"no {expect} on {self.driver.current_url}")

    def wait_for(self, css: str) -> WebElement:
        """The first element matching ``css``, once it is there."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.driver, chromium.WAIT).until(
            ec.presence_of_element_located((By.CSS_SELECTOR, css)),
            message=f"no {css} on {self.driver.current_url}",
        )

    def wait_until_path(self, path: str) -> None:
        """Wait until the browser is on ``path`` (after a click or a submit)."""
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(self.driver, chromium.WAIT).until(
            lambda d: urlsplit(d.current_url).path == path,
            message=f"never reached {path}",
        )

    def wait_for_query(self, name: str, value: str) -> None:
        """Wait until the page's query has ``name=value`` (after a form was submitted)."""
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(self.driver, chromium.WAIT).until(
            lambda d: value in parse_qs(urlsplit(d.current_url).query).get(name, []),
            message=f"the query never had {name}={value}",
        )

    def choose(self, css: str, value: str) -> None:
        """Pick the option with ``value`` in the ``<select>`` matching ``css``."""
        from selenium.webdriver.support.ui import Select

        Select(self.one(css)).select_by_value(value)

    def all(self, css: str) -> list[WebElement]:
        """Every element matching ``css`` now."""
        from selenium.webdriver.common.by import By

        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def one(self, css: str) -> WebElement:
        """The one element matching ``css`` now."""
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.CSS_SELECTOR, css)

    @property
    def path(self) -> str:
        return urlsplit(self.driver.current_url).path

    @property
    def query(self) -> str:
        return urlsplit(self.driver.current_url).query

    def screenshot(self, label: str = "") -> Path:
        """The whole page as ``<test>[-label].png`` in the screenshot folder."""
        name = re.sub(r"[^A-Za-z0-9_.-]+", "-", self.name + (f"-{label}" if label else ""))
        return chromium.save_full_page(self.driver, self.shots / f"{name}.png")

    def console_errors(self) -> list[str]:
        """Severe console messages since the last call (the log is emptied by reading it)."""
        logs: list[dict[str, Any]] = self.driver.get_log("browser")  # type: ignore[no-untyped-call]
        return [str(entry["message"]) for entry in logs if entry["level"] == "SEVERE"]

    def foreign_resources(self) -> list[str]:
        """Resources the current page loaded from anywhere but the server (a CDN, say)."""
        names: list[str] = self.driver.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)"
        )
        return [name for name in names if not name.startswith(self.base_url + "/")]


@pytest.fixture
def page(
    driver: WebDriver, server: Served, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Page]:
    """The browser on the shared server; afterwards a screenshot of where the test ended, and
    a check that the page loaded nothing from elsewhere and logged no error it did not expect."""
    driver.delete_all_cookies()
    driver.get_log("browser")  # type: ignore[no-untyped-call]  # forget earlier tests' messages
    shots = chromium.screenshot_dir(tmp_path / "screenshots")
    opened = Page(driver, server.url, shots, request.node.name)
    yield opened
    opened.screenshot()
    assert opened.foreign_resources() == []
    unexpected = [
        message
        for message in opened.console_errors()
        if not any(fragment in message for fragment in opened.allowed_console)
    ]
    assert unexpected == []
    driver.delete_all_cookies()
