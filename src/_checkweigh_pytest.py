"""The checkweigh pytest plugin, registered through the ``pytest11`` entry point.

It lives outside the ``checkweigh`` package (as Hypothesis keeps ``_hypothesis_pytestplugin``
outside ``hypothesis``) because importing ``checkweigh`` costs most of a second: loading this
module imports nothing but pytest, so test runs that never ask for the fixture pay nothing.
The fixture imports :mod:`checkweigh.testing` the first time a test uses it.

Usage::

    def test_booking(checkweigh):
        suite = checkweigh.suite("suite.yaml")  # relative to this test file's folder
        suite.assert_passes("s01-simple-booking", rubric="completion")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

import pytest

if TYPE_CHECKING:
    from checkweigh.testing import CheckweighFixture, SuiteCache

JUDGE_OPTION = "--checkweigh-judge"


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--checkweigh-judge PROVIDER:MODEL``."""
    group = parser.getgroup("checkweigh", "checkweigh evaluations")
    group.addoption(
        JUDGE_OPTION,
        metavar="PROVIDER:MODEL",
        default=None,
        help="the judge of the checkweigh fixture's judge checks (openai:MODEL, "
        "anthropic:MODEL or ollama:MODEL; keys from the environment). Without it judge "
        "checks are skipped.",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Reject a malformed ``--checkweigh-judge`` before any test runs."""
    spec = config.getoption(JUDGE_OPTION)
    if spec is None:
        return
    from checkweigh.errors import InputError
    from checkweigh.judges import parse_judge

    try:
        parse_judge(spec)
    except InputError as exc:
        raise pytest.UsageError(f"{JUDGE_OPTION}: {exc.message}") from None


def pytest_report_header(config: pytest.Config) -> str | None:
    """Name the judge in the header, so a log says which model judged."""
    spec = config.getoption(JUDGE_OPTION)
    return f"checkweigh judge: {spec}" if spec else None


def _fail(message: str) -> NoReturn:
    __tracebackhide__ = True
    pytest.fail(message, pytrace=False)


@pytest.fixture(scope="session")
def _checkweigh_cache() -> SuiteCache:
    """Suites and cases files parsed once per session (again when a file changes)."""
    from checkweigh.testing import SuiteCache

    return SuiteCache()


@pytest.fixture
def checkweigh(request: pytest.FixtureRequest, _checkweigh_cache: SuiteCache) -> CheckweighFixture:
    """Load checkweigh suites (paths relative to the test file's folder) and assert that
    cases pass: ``checkweigh.suite("suite.yaml").assert_passes(case, rubric="completion")``.

    A failing case fails the test with its id, each rubric's score and outcome, the verdict's
    reason and one line per failed or errored check. Judge checks ask the judge given with
    ``--checkweigh-judge`` (or ``suite(path, judge=...)``) and are skipped without one.
    """
    from checkweigh.testing import CheckweighFixture

    return CheckweighFixture(
        request.path.parent,
        judge=request.config.getoption(JUDGE_OPTION),
        fail=_fail,
        cache=_checkweigh_cache,
    )
