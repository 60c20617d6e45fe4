"""The blocks of the docs that tests/docs/test_pages.py does not run, listed at the end of
every test session that ran it, so that what is left unchecked stays in view."""

from __future__ import annotations

import pytest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for outcome in ("passed", "failed"):
        for report in terminalreporter.stats.get(outcome, []):
            if not report.nodeid.endswith("test_blocks_not_run_say_why"):
                continue
            listing = dict(report.user_properties).get("not_run", [])
            terminalreporter.write_sep("-", f"docs: {len(listing)} block(s) not run")
            for line in listing:
                terminalreporter.write_line(line)
