"""What an agent wrote stays text in the browser, the Content-Security-Policy refuses inline
script, a server that others could reach needs a token, and the token lives in a cookie that
page script cannot read."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from urllib.parse import quote

import pytest

from browser.conftest import (
    HOSTILE_ID,
    HOSTILE_REPLY,
    IMG,
    SCRIPT,
    TOKEN,
    Page,
    Runs,
    Served,
)
from support.cli_process import run

_NOTHING_RAN = """
return {
    pwned: typeof window.__pwned,
    inline_scripts: document.querySelectorAll('script:not([src])').length,
    handlers: document.querySelectorAll('[onerror], [onload], [onclick]').length,
};
"""
_CLEAN = {"pwned": "undefined", "inline_scripts": 0, "handlers": 0}


def test_markup_in_a_trace_is_shown_as_text_and_never_runs(page: Page, runs: Runs) -> None:
    page.open(f"/runs/{runs.hostile}/cases/xss-trace?repeat=0", expect="#conversation")
    assert page.driver.execute_script(_NOTHING_RAN) == _CLEAN
    turns = page.all("#conversation .turn")
    roles = [turn.get_attribute("data-role") for turn in turns]
    assert roles == ["user", "tool", "tool", "tool", "assistant"]
    # every piece of markup is on the page as the characters the agent wrote
    assert IMG in turns[0].text
    # a tool's arguments and result are shown as JSON: the markup as a JSON string
    assert json.dumps(IMG) in turns[1].text
    assert json.dumps(SCRIPT) in turns[1].text
    assert json.dumps(SCRIPT) in turns[2].text
    assert HOSTILE_REPLY in turns[4].text
    errors = page.all("#conversation .error")
    assert any(f"calendar said: {IMG}" in error.text for error in errors)


def test_a_hostile_case_id_is_text_in_the_table_and_its_link_opens_its_page(
    page: Page, runs: Runs
) -> None:
    page.open(f"/runs/{runs.hostile}", expect="#cases")
    assert page.driver.execute_script(_NOTHING_RAN) == _CLEAN
    row = page.one(f"#cases tr[data-case-id='{HOSTILE_ID}']")
    assert HOSTILE_ID in row.text
    row.find_element("css selector", "a.case-link").click()
    page.wait_until_path(f"/runs/{runs.hostile}/cases/{quote(HOSTILE_ID, safe='')}")
    page.wait_for("#checklist")
    assert page.driver.execute_script(_NOTHING_RAN) == _CLEAN
    assert HOSTILE_ID in page.one("body").text


def test_the_content_security_policy_refuses_an_inline_script(page: Page, runs: Runs) -> None:
    # escaping keeps agent text out of the markup; the policy is the second wall, should a
    # template ever let some through: a script element made in the page must not run
    page.open(f"/runs/{runs.hostile}", expect="#cases")
    outcome = page.driver.execute_script(
        "const s = document.createElement('script');"
        "s.textContent = 'window.__pwned = 4';"
        "document.body.appendChild(s);"
        "return typeof window.__pwned;"
    )
    assert outcome == "undefined"
    refused = [m for m in page.console_errors() if "Content Security Policy" in m]
    assert refused, "no CSP refusal in the browser's console"
    assert "script-src 'self'" in refused[0]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_server_on_every_address_without_a_token_exits_2_before_listening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CHECKWEIGH_TOKEN", raising=False)
    port = _free_port()
    db = tmp_path / "runs.db"
    done = run(
        ["serve", "--host", "0.0.0.0", "--port", str(port), "--db", f"sqlite:///{db}"], tmp_path
    )
    assert done.code == 2
    assert done.err.strip() == (
        "error: --host: listening on 0.0.0.0 needs a token: set CHECKWEIGH_TOKEN (clients then "
        "send Authorization: Bearer <token>), or listen on 127.0.0.1"
    )
    assert done.out == ""
    assert not db.exists()  # refused before opening anything
    with socket.socket() as client, pytest.raises(ConnectionRefusedError):
        client.connect(("127.0.0.1", port))  # it never listened


def test_a_token_server_asks_for_the_token_once_and_keeps_it_from_scripts(
    page: Page, token_server: Served, runs: Runs
) -> None:
    page.base_url = token_server.url
    page.open("/runs", expect="#login-form")
    assert page.path == "/login"
    assert page.all("#runs") == []
    page.screenshot("asked")

    page.one("#login-form input[name=token]").send_keys("not-the-token")
    page.one("#login-button").click()
    page.wait_for("#login-error")
    assert page.path == "/login"
    assert page.driver.get_cookie("checkweigh_session") is None
    page.allowed_console.append("/login - Failed to load resource")  # the 401 of that try
    page.screenshot("wrong")

    page.one("#login-form input[name=token]").send_keys(TOKEN)
    page.one("#login-button").click()
    page.wait_until_path("/runs")
    page.wait_for("#runs")
    shown = {row.get_attribute("data-run-id") for row in page.all("#runs tr[data-run-id]")}
    assert shown == {runs.base, runs.candidate, runs.hostile}
    cookie = page.driver.get_cookie("checkweigh_session")
    assert cookie is not None
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Strict", "/")
    assert "checkweigh_session" not in page.driver.execute_script("return document.cookie")
    assert TOKEN not in page.driver.page_source

    assert TOKEN not in cookie["value"]  # a session id stands for the token

    # the cookie opens the other pages too, without asking again
    page.open(f"/runs/{runs.base}", expect="#gates")
    assert page.path == f"/runs/{runs.base}"

    # signing out ends the session: the pages ask for the token again
    page.one("#sign-out-button").click()
    page.wait_until_path("/login")
    page.wait_for("#login-form")
    assert page.driver.get_cookie("checkweigh_session") is None
    assert page.all("#sign-out") == []
    page.open("/runs", expect="#login-form")
    assert page.path == "/login"
