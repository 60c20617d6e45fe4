"""Fixtures for the CLI tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.recorded_suite import standard_cases, write_suite


@pytest.fixture
def suite_path(tmp_path: Path) -> Path:
    return write_suite(tmp_path / "suite", standard_cases())


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports are asserted on unwrapped lines."""
    monkeypatch.setenv("COLUMNS", "200")
