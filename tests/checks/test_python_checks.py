"""User checks named by dotted path: functions with args, classes with evaluate, and the
errors for paths that do not name a check."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest
from pydantic import ValidationError

from checkweigh.checks import (
    FunctionCheck,
    ImportTargetError,
    NamedCheck,
    PythonCheck,
    load_object,
    resolve_python_check,
)
from checkweigh.core import Case, VerdictState, failed, passed

pytestmark = pytest.mark.usefixtures("fresh_modules")

SCHED_CHECKS = """
from checkweigh.checks import check
from checkweigh.core import failed, passed


@check(version="2")
def duration_between(case, low=15, high=60):
    minutes = case.final_state["booking"]["duration"]
    if low <= minutes <= high:
        return passed(f"{minutes} min")
    return failed(f"{minutes} min outside {low}-{high}")


def plain_title_check(case, title):
    return case.final_state["booking"]["title"] == title, f"title is {title!r}?"


async def async_plain(case):
    return True


class MaxToolCalls:
    version = "5"

    def __init__(self, limit=3):
        self.limit = limit

    def evaluate(self, case):
        n = sum(1 for s in case.trace if s.kind == "tool_call")
        return n <= self.limit, f"{n} tool calls, limit {self.limit}"


class NotACheck:
    def __init__(self, x=1):
        self.x = x


class Ready:
    def evaluate(self, case):
        return True


READY = Ready()
THRESHOLD = 0.75
"""


def _write(folder: Path, name: str, source: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


def _resolve(function: str, folder: Path, **args: object) -> object:
    return resolve_python_check(PythonCheck(function=function, args=args), [folder])


def test_function_with_args(tmp_path: Path, conflict_case: Case) -> None:
    _write(tmp_path, "sched_checks_a", SCHED_CHECKS)
    default = _resolve("sched_checks_a:duration_between", tmp_path)
    narrow = _resolve("sched_checks_a:duration_between", tmp_path, low=45, high=90)
    assert isinstance(narrow, FunctionCheck)
    assert NamedCheck.of("d", default).run(conflict_case) == passed("30 min")
    named = NamedCheck.of("duration", narrow)
    assert named.version == "2"
    assert named.run(conflict_case) == failed("30 min outside 45-90")
    # dotted form works too, and a plain (undecorated) function is wrapped
    title = _resolve("sched_checks_a.plain_title_check", tmp_path, title="Weekly Sync")
    assert NamedCheck.of("title", title).run(conflict_case) == passed("title is 'Weekly Sync'?")
    asynchronous = NamedCheck.of("a", _resolve("sched_checks_a:async_plain", tmp_path))
    assert asynchronous.is_async is True
    assert asyncio.run(asynchronous.arun(conflict_case)) == passed()


def test_class_with_evaluate(tmp_path: Path, conflict_case: Case) -> None:
    _write(tmp_path, "sched_checks_b", SCHED_CHECKS)
    tight = _resolve("sched_checks_b:MaxToolCalls", tmp_path, limit=1)
    loose = _resolve("sched_checks_b:MaxToolCalls", tmp_path)
    assert NamedCheck.of("tight", tight).run(conflict_case) == failed("2 tool calls, limit 1")
    named = NamedCheck.of("loose", loose)
    assert named.version == "5"
    assert named.run(conflict_case) == passed("2 tool calls, limit 3")
    # a ready-made check object
    ready = _resolve("sched_checks_b:READY", tmp_path)
    assert NamedCheck.of("ready", ready).run(conflict_case).state is VerdictState.PASSED


@pytest.mark.parametrize(
    ("function", "args", "message"),
    [
        ("no_such_module_xyz:fn", {}, "cannot import module 'no_such_module_xyz'"),
        ("sched_checks_c:missing_fn", {}, "module 'sched_checks_c' has no attribute 'missing_fn'"),
        ("sched_checks_c:THRESHOLD", {}, "sched_checks_c:THRESHOLD is not a function or a check"),
        ("sched_checks_c:NotACheck", {}, "is a class without an evaluate method"),
        ("sched_checks_c:READY", {"limit": 2}, "is a check object; it takes no args"),
        ("sched_checks_c:duration_between", {"lo": 1}, "does not accept args {'lo': 1}"),
        ("sched_checks_c:plain_title_check", {}, "does not accept args {}"),
        ("sched_checks_c:MaxToolCalls", {"max": 2}, "does not accept args {'max': 2}"),
    ],
)
def test_bad_targets(tmp_path: Path, function: str, args: dict[str, object], message: str) -> None:
    _write(tmp_path, "sched_checks_c", SCHED_CHECKS)
    with pytest.raises(ImportTargetError) as info:
        resolve_python_check(PythonCheck(function=function, args=args), [tmp_path])
    assert message in str(info.value)


@pytest.mark.parametrize("function", ["duration_between", "sched_checks:", ":duration_between"])
def test_malformed_dotted_paths_are_rejected_by_the_spec(function: str) -> None:
    with pytest.raises(ValidationError, match="expected 'module:function'"):
        PythonCheck(function=function)


def test_search_path_is_only_borrowed(tmp_path: Path) -> None:
    _write(tmp_path, "sched_checks_d", SCHED_CHECKS)
    assert load_object("sched_checks_d:THRESHOLD", [tmp_path]) == 0.75
    assert str(tmp_path) not in sys.path


def test_a_module_that_fails_to_import_is_an_import_target_error(tmp_path: Path) -> None:
    _write(tmp_path, "sched_checks_broken", "def duration_between(case:\n    return True\n")
    _write(tmp_path, "sched_checks_needs_key", "raise RuntimeError('set JUDGE_API_KEY')\n")
    with pytest.raises(ImportTargetError, match="sched_checks_broken"):
        resolve_python_check(PythonCheck(function="sched_checks_broken:fn"), [tmp_path])
    with pytest.raises(ImportTargetError, match="JUDGE_API_KEY"):
        resolve_python_check(PythonCheck(function="sched_checks_needs_key:fn"), [tmp_path])
