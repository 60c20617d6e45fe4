"""One case at a time inside a test: a suite bound to an explicit judge, and assertions that
fail with a readable list of the failed checks (see :func:`case_report`).

The judge is never implicit: without one, judge checks are skipped exactly as ``checkweigh
run`` skips them without ``--judge``, and a failure message says so.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any, NoReturn, TypeAlias, TypeVar

from pydantic import ValidationError

from ..core import Case, CaseResult, CaseVerdict, PassMode, PassPolicy, Rubric
from ..errors import CheckweighError, InputError
from ..judges import (
    CachedJudge,
    JudgeCache,
    JudgeModel,
    JudgeOptions,
    cache_dir,
    close_judge,
    make_judge,
    parse_judge,
)
from ..runs import AgentRun, RunOptions, RunStopped, arun, judge_checks
from ..store import Store
from ..suites import Suite, first_error, load_suite, loc_text
from ._report import case_report
from ._suite_cache import SuiteCache

CaseLike: TypeAlias = Case | Mapping[str, Any] | str
"""A :class:`Case`, a mapping in the cases-file format, or the id of a case in the suite's
cases file."""
RunLike: TypeAlias = AgentRun | Mapping[str, Any]
"""What an agent did: an :class:`AgentRun` or a mapping with ``trace`` and ``final_state``."""
JudgeLike: TypeAlias = JudgeModel | str
"""A judge, or ``PROVIDER:MODEL`` (built for each evaluation, keys from the environment)."""

NO_JUDGE_HINT = (
    "no judge configured: pass judge=PROVIDER:MODEL or a JudgeModel, or run pytest with "
    "--checkweigh-judge PROVIDER:MODEL"
)

_T = TypeVar("_T")


def raise_assertion(message: str) -> NoReturn:
    """Fail with a plain :class:`AssertionError` (the default outside the pytest fixture)."""
    raise AssertionError(message)


def _run_sync(coro: Coroutine[Any, Any, _T], method: str) -> _T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    coro.close()
    raise CheckweighError(
        f"{method}() cannot run inside a running event loop (an async test): "
        f"await a{method}() instead"
    )


def _case_from(raw: Mapping[str, Any]) -> Case:
    try:
        return Case.model_validate(dict(raw))
    except ValidationError as exc:
        loc, message = first_error(exc)
        raise InputError(message, field="case" + ("." + loc_text(loc) if loc else "")) from None


def _with_run(case: Case, run: RunLike) -> Case:
    try:
        ran = run if isinstance(run, AgentRun) else AgentRun.model_validate(dict(run))
    except ValidationError as exc:
        loc, message = first_error(exc)
        raise InputError(message, field="run" + ("." + loc_text(loc) if loc else "")) from None
    return case.model_copy(update={"trace": ran.trace, "final_state": ran.final_state})


class SuiteTester:
    """A loaded suite ready to evaluate single cases in tests.

    Cases are scored by every rubric of the suite, or by the one named ``rubric``; whether a
    case passes is the suite's :class:`~checkweigh.core.PassPolicy` (restricted to that
    rubric's score when one is named). When the suite has an agent ``target``, the agent runs
    on the case's input first, as ``checkweigh run`` does, unless ``run=`` gives what an agent
    did. Each evaluation is one run of :func:`checkweigh.arun` on that one case, stored in
    the tester's in-memory :attr:`store`.

    Args:
        suite: the loaded suite.
        judge: asked by the judge checks; without one they are skipped (not applicable) and
            each rubric is renormalized over the checks that ran. A ``PROVIDER:MODEL`` string
            builds a fresh client for each evaluation (inside its event loop), with answers
            cached in ``.checkweigh/cache`` (or ``$CHECKWEIGH_CACHE_DIR``) as the CLI does.
        fail: called with the report when an assertion fails (the pytest fixture passes one
            that fails the test without a traceback); raises :class:`AssertionError` by default.
        cache: where the cases file is parsed once (the fixture's, shared by a session).
    """

    def __init__(
        self,
        suite: Suite,
        *,
        judge: JudgeLike | None = None,
        fail: Callable[[str], NoReturn] = raise_assertion,
        cache: SuiteCache | None = None,
    ) -> None:
        if isinstance(judge, str):
            parse_judge(judge)  # a malformed string fails here, not at the first judge check
        self.suite = suite
        self.judge = judge
        self._fail = fail
        self._cache = cache or SuiteCache()
        self._store: Store | None = None

    def __repr__(self) -> str:
        judge = self.judge if self.judge is None or isinstance(self.judge, str) else self.judge.name
        return f"SuiteTester({str(self.suite.path)!r}, judge={judge!r})"

    # --- cases and rubrics -------------------------------------------------------------------

    def cases(self) -> list[Case]:
        """The cases of the suite's cases file, in file order."""
        return list(self._cache.cases(self.suite.cases).values())

    def case(self, case_id: str) -> Case:
        """The case with id ``case_id`` in the suite's cases file.

        Raises:
            InputError: no such case.
        """
        __tracebackhide__ = True
        try:
            return self._cache.cases(self.suite.cases)[case_id]
        except KeyError:
            raise InputError(
                f"no case with id {case_id!r}", file=self.suite.cases_path, field="id"
            ) from None

    def rubrics(self, rubric: str | None = None) -> tuple[Rubric, ...]:
        """Every rubric of the suite, or just the one named ``rubric``.

        Raises:
            InputError: the suite has no rubric of that name.
        """
        __tracebackhide__ = True
        if rubric is None:
            return self.suite.rubrics
        for r in self.suite.rubrics:
            if r.name == rubric:
                return (r,)
        names = ", ".join(r.name for r in self.suite.rubrics)
        raise InputError(
            f"unknown rubric {rubric!r}; the suite's rubrics are {names}",
            file=self.suite.path,
            field="rubric",
        )

    def policy(self, rubric: str | None = None) -> PassPolicy:
        """The suite's pass policy; with ``rubric``, a case's score is that rubric's score."""
        self.rubrics(rubric)
        if rubric is None:
            return self.suite.policy
        return dataclasses.replace(self.suite.policy, score_rubrics=(rubric,))

    def judge_checks(self, rubric: str | None = None) -> list[str]:
        """The judge checks that the rubrics (or the one named ``rubric``) use."""
        used = {name for r in self.rubrics(rubric) for name in r.check_names}
        return [name for name in judge_checks(self.suite.checks) if name in used]

    def skipped_judge_checks(self, rubric: str | None = None) -> list[str]:
        """The judge checks the rubrics use that are skipped because no judge was given."""
        return [] if self.judge is not None else self.judge_checks(rubric)

    # --- evaluating ----------------------------------------------------------------------------

    @property
    def store(self) -> Store:
        """The in-memory store every evaluation is run into (opened at the first one): one
        run per evaluated case, holding its result."""
        if self._store is None:
            self._store = Store("sqlite://")
        return self._store

    def _prepare(
        self, case: CaseLike, run: RunLike | None, rubric: str | None
    ) -> tuple[Case, Suite]:
        """The case to run and the suite to run it on: scored by ``rubric`` alone when one is
        named (so the checks of other rubrics are not run), without its agent when ``run``
        gives what the agent did."""
        if isinstance(case, str):
            resolved = self.case(case)
        elif isinstance(case, Case):
            resolved = case
        else:
            resolved = _case_from(case)
        suite = self.suite
        if rubric is not None:
            # the tester decides the verdict; the suite's gates are about whole runs
            suite = dataclasses.replace(
                suite, rubrics=self.rubrics(rubric), policy=self.policy(rubric), gates=()
            )
        if run is not None:
            resolved = _with_run(resolved, run)
            suite = dataclasses.replace(suite, spec=suite.spec.model_copy(update={"target": None}))
        return resolved, suite

    def evaluate(
        self, case: CaseLike, *, rubric: str | None = None, run: RunLike | None = None
    ) -> CaseResult:
        """Score one case (running the suite's agent on it first, if the suite has one).

        The case runs through :func:`checkweigh.arun`, as ``checkweigh run`` runs it, in an
        event loop of its own; inside an async test, await :meth:`aevaluate` instead.

        Raises:
            InputError: an unknown rubric or case id, or a malformed case or run.
        """
        __tracebackhide__ = True
        prepared, suite = self._prepare(case, run, rubric)
        return _run_sync(self._arun(prepared, suite, rubric), "evaluate")

    async def aevaluate(
        self, case: CaseLike, *, rubric: str | None = None, run: RunLike | None = None
    ) -> CaseResult:
        """Score one case in the running event loop (see :meth:`evaluate`)."""
        __tracebackhide__ = True
        prepared, suite = self._prepare(case, run, rubric)
        return await self._arun(prepared, suite, rubric)

    async def _arun(self, case: Case, suite: Suite, rubric: str | None) -> CaseResult:
        judge: JudgeModel | None = None
        if isinstance(self.judge, str):
            if self.judge_checks(rubric):
                block = self.suite.spec.judge.settings() if self.suite.spec.judge else None
                options = JudgeOptions.build(block)  # the suite's judge: block, as in a run
                judge = CachedJudge(
                    make_judge(self.judge, options=options), JudgeCache(cache_dir())
                )
        else:
            judge = self.judge
        try:
            # the judge is given as the caller's: arun never closes it
            report = await arun(
                suite,
                RunOptions(repeat=1),
                cases=[case],
                store=self.store,
                judge=judge,
                keep_results=True,
            )
        except RunStopped as exc:
            if isinstance(exc.cause, Exception):
                raise exc.cause from None  # what stopped the one case, as a test would see it
            raise
        finally:
            if judge is not None and isinstance(self.judge, str):
                await close_judge(judge)  # its connections belong to this event loop
        return report.results[0]

    # --- verdicts and assertions ---------------------------------------------------------------

    def verdict(self, result: CaseResult, *, rubric: str | None = None) -> CaseVerdict:
        """Whether ``result`` passes the suite's policy, with its score and the reason."""
        return self.policy(rubric).decide(result)

    def report(self, result: CaseResult, *, rubric: str | None = None) -> str:
        """The readable report of ``result`` that a failing assertion shows."""
        policy = self.policy(rubric)
        return case_report(
            result,
            policy.decide(result),
            pass_threshold=policy.pass_threshold,
            skipped_judge=self.skipped_judge_checks(rubric),
            judge_hint=NO_JUDGE_HINT,
            pass_rule=policy.describe() if policy.pass_policy is PassMode.ALL_CHECKS else None,
        )

    def check_passes(self, result: CaseResult, *, rubric: str | None = None) -> CaseResult:
        """Return ``result`` if it passes; else fail with its report."""
        __tracebackhide__ = True
        if not self.verdict(result, rubric=rubric).passed:
            self._fail(self.report(result, rubric=rubric))
        return result

    def assert_passes(
        self, case: CaseLike, *, rubric: str | None = None, run: RunLike | None = None
    ) -> CaseResult:
        """Evaluate ``case`` and fail, with the case id, each rubric's score and outcome, the
        verdict's reason and one line per failed or errored check, unless it passes.

        Returns:
            The result, for further asserts.
        """
        __tracebackhide__ = True
        return self.check_passes(self.evaluate(case, rubric=rubric, run=run), rubric=rubric)

    async def aassert_passes(
        self, case: CaseLike, *, rubric: str | None = None, run: RunLike | None = None
    ) -> CaseResult:
        """:meth:`assert_passes` in the running event loop."""
        __tracebackhide__ = True
        result = await self.aevaluate(case, rubric=rubric, run=run)
        return self.check_passes(result, rubric=rubric)


class CheckweighFixture:
    """What the ``checkweigh`` pytest fixture returns.

    Args:
        base_dir: relative suite paths are resolved from here (the test file's folder).
        judge: the default judge of the suites it loads (``--checkweigh-judge``).
        fail: how a failed assertion fails the test.
        cache: the session's parsed suites and cases files.
    """

    def __init__(
        self,
        base_dir: Path,
        *,
        judge: JudgeLike | None = None,
        fail: Callable[[str], NoReturn] = raise_assertion,
        cache: SuiteCache | None = None,
    ) -> None:
        self.base_dir = base_dir
        self.judge = judge
        self._fail = fail
        self._cache = cache or SuiteCache()

    def suite(self, path: str | os.PathLike[str], *, judge: JudgeLike | None = None) -> SuiteTester:
        """Load the suite file at ``path`` (relative to the test file's folder).

        ``judge`` overrides the one given with ``--checkweigh-judge``.

        Raises:
            SuiteError: the file cannot be loaded (one line naming the file, line and field).
        """
        __tracebackhide__ = True
        return SuiteTester(
            self._cache.suite(self.base_dir / path),
            judge=judge if judge is not None else self.judge,
            fail=self._fail,
            cache=self._cache,
        )


def assert_case_passes(
    suite: Suite | str | os.PathLike[str],
    case: CaseLike,
    *,
    rubric: str | None = None,
    run: RunLike | None = None,
    judge: JudgeLike | None = None,
) -> CaseResult:
    """Evaluate ``case`` on ``suite`` (a loaded suite or a suite file's path) and raise
    :class:`AssertionError` with a readable report unless it passes.

    Returns:
        The result, for further asserts.
    """
    __tracebackhide__ = True
    loaded = suite if isinstance(suite, Suite) else load_suite(Path(suite))
    return SuiteTester(loaded, judge=judge).assert_passes(case, rubric=rubric, run=run)
