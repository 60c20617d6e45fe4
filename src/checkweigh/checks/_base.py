"""What a check is, how its answer becomes a verdict, and the ``@check`` decorator."""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, runtime_checkable

from .._process import ProcessExit, error_text, shown_value
from .._text import safe_text
from ..core import Case, Condition, Verdict, errored, failed, measured, not_applicable, passed
from ._model import BuiltinCheck
from ._registry import NO_JUDGE_HINT, OVERALL, needs_judge

CheckAnswer: TypeAlias = Verdict | bool | tuple[bool, str]
"""What a check may return: a verdict, a bool, or (bool, reason)."""
Answers: TypeAlias = Verdict | Mapping[str, Verdict]
"""What running a check gives: one verdict, or several named ones (see :data:`OVERALL`)."""

SKIPPED = not_applicable(f"skipped: {NO_JUDGE_HINT}")
"""The verdict of a judge check in a run without a judge."""


@runtime_checkable
class CheckLike(Protocol):
    """Anything with an ``evaluate(case)`` method that answers yes or no."""

    def evaluate(self, case: Case) -> CheckAnswer | Awaitable[CheckAnswer]:
        """Judge one case."""
        ...


def to_verdict(answer: object) -> Verdict:
    """Coerce a check's answer into a verdict; anything unexpected is an errored verdict."""
    if isinstance(answer, Verdict):
        return safe_verdict(answer)
    if isinstance(answer, bool):
        return passed() if answer else failed("check returned False")
    if (
        isinstance(answer, tuple)
        and len(answer) == 2
        and isinstance(answer[0], bool)
        and isinstance(answer[1], str)
    ):
        reason = safe_text(answer[1])
        return passed(reason) if answer[0] else failed(reason or "check returned False")
    return errored(
        f"check returned {type(answer).__name__} {shown_value(answer)}; expected a Verdict, a bool "
        "or (bool, reason)",
        reason="invalid check answer",
    )


def safe_verdict(verdict: Verdict) -> Verdict:
    """``verdict`` with its reason and error made storable (see ``checkweigh._text``): where
    user code's verdicts enter the run."""
    reason, error = verdict.reason, verdict.error
    # a reason that is no string (a user's Verdict(FAILED, 3)) is shown as its repr
    safe_reason = safe_text(reason) if type(reason) is str else shown_value(reason)
    safe_error = (
        error if error is None else safe_text(error) if type(error) is str else shown_value(error)
    )
    if safe_reason is reason and safe_error is error:
        return verdict
    cleaned = Verdict(verdict.state, safe_reason, safe_error)
    return measured(cleaned, verdict.measures) if verdict.measures else cleaned


def _exit_text(exc: BaseException) -> str:
    """A check's BaseException (sys.exit, KeyboardInterrupt, GeneratorExit, its own kind),
    which would otherwise end the run and choose its exit code: an errored verdict."""
    if isinstance(exc, ProcessExit):
        return exc.describe("check")
    if isinstance(exc, SystemExit):
        return f"check called sys.exit({shown_value(exc.code)})"
    return f"check raised {error_text(exc)}"


def _version_of(check: object) -> str:
    version = getattr(check, "version", None)
    if isinstance(version, str):
        return version
    return "1"


def _is_async(check: CheckLike) -> bool:
    if isinstance(check, FunctionCheck):
        return check.is_async
    return inspect.iscoroutinefunction(check.evaluate)


def _skipped(case: Case) -> Verdict:
    return SKIPPED


@dataclass(frozen=True, slots=True)
class NamedCheck:
    """A check under its suite name, with its ``when`` guard and version.

    :meth:`run` and :meth:`arun` never raise for a failing check: an exception becomes an
    errored verdict carrying its text. Build it with :meth:`of`. A check whose ``evaluate``
    takes a judge (``async evaluate(case, judge)``) is given the run's judge by
    :meth:`with_judge`; without one it answers "skipped".
    """

    name: str
    check: Any
    """The check: anything with ``evaluate(case)``, or ``evaluate(case, judge)``."""
    when: tuple[Condition, ...] = ()
    version: str = "1"
    is_async: bool = False
    fn: Callable[[Case], Any] | None = None
    """The function that judges a case (the check's compiled runner where it has one)."""
    guards: tuple[tuple[Callable[[Any], bool], Verdict], ...] = ()
    """Each ``when`` condition's test, with the not-applicable verdict when it is false."""
    judged: bool = False
    """Whether the check asks a judge (its ``evaluate`` takes one)."""
    prefix: str | None = None
    """What a named verdict's key is prefixed with when recorded (default ``name.``); ``""``
    records the keys as they are, for a check that answers for others and has no verdict of
    its own (batch mode's checklist)."""
    trusted: bool = False
    """Whether its verdicts are checkweigh's own (a built-in check's, quoting text already
    made storable), so the hot path skips :func:`safe_verdict`; user code's are passed
    through it."""

    @classmethod
    def of(
        cls,
        name: str,
        check: Any,
        when: tuple[Condition, ...] = (),
        *,
        judge: object = None,
        prefix: str | None = None,
    ) -> NamedCheck:
        """Wrap ``check``, reading its version and whether it is async; a judge check asks
        ``judge`` (and is skipped when it is None)."""
        guards = tuple((c.test, not_applicable(f"not {c.describe()}")) for c in when)
        version = _version_of(check)
        if needs_judge(type(check)):
            if judge is None:
                return cls(name, check, when, version, False, _skipped, guards, True, prefix)
            evaluate = check.evaluate

            def asks(case: Case) -> Any:
                return evaluate(case, judge)

            is_async = inspect.iscoroutinefunction(evaluate)
            return cls(name, check, when, version, is_async, asks, guards, True, prefix)
        # only our own check types promise a runner(); anything else is used via evaluate
        fn = check.runner() if isinstance(check, BuiltinCheck | FunctionCheck) else check.evaluate
        own = isinstance(check, BuiltinCheck)
        return cls(name, check, when, version, _is_async(check), fn, guards, False, prefix, own)

    def with_judge(self, judge: object) -> NamedCheck:
        """This check asking ``judge`` (itself when it asks no judge)."""
        if not self.judged:
            return self
        return NamedCheck.of(self.name, self.check, self.when, judge=judge, prefix=self.prefix)

    @property
    def has_own_verdict(self) -> bool:
        """Whether a verdict is recorded under the check's own name."""
        return self.prefix != ""

    def recorded_as(self, key: str) -> str:
        """The name a named verdict ``key`` is recorded under (``OVERALL``: the check's own)."""
        if key == OVERALL:
            return self.name
        return (f"{self.name}." if self.prefix is None else self.prefix) + key

    def spread(self, answer: Answers, names: tuple[str, ...]) -> dict[str, Verdict]:
        """The verdicts recorded under ``names`` from ``answer``: a single verdict stands for
        each of them (a skipped or crashed check); a mapping gives each its own."""
        if isinstance(answer, Verdict):
            return dict.fromkeys(names, answer)
        keys = {self.recorded_as(k): v for k, v in answer.items() if isinstance(k, str)}
        return {
            n: to_verdict(keys[n])
            if n in keys
            else errored(f"check {self.name!r} answered no verdict {n!r}", reason="no verdict")
            for n in names
        }

    def _guard(self, case: Case) -> Verdict | None:
        for test, verdict in self.guards:
            if not test(case):
                return verdict
        return None

    def run(self, case: Case) -> Verdict:
        """Evaluate a synchronous check."""
        return self.runner()(case)

    def runner(self) -> Callable[[Case], Verdict]:
        """:meth:`run` as one closure with everything bound: the engine calls it per case."""
        fn = self.fn or self.check.evaluate
        trusted = self.trusted

        def judge(case: Case) -> Verdict:
            try:
                answer = fn(case)
            except Exception as exc:  # noqa: BLE001 - a check's bug is its verdict, not a crash
                return errored(error_text(exc))
            except BaseException as exc:  # noqa: BLE001 - sys.exit() and the like too
                return errored(_exit_text(exc))
            if type(answer) is Verdict:  # the common case, kept cheap
                return answer if trusted else safe_verdict(answer)
            return judge_answer(answer)

        if not self.guards:
            return judge
        if len(self.guards) == 1:  # the usual single guard: one closure, no loop
            ((test, skipped),) = self.guards

            def guarded_once(case: Case) -> Verdict:
                if not test(case):
                    return skipped
                try:
                    answer = fn(case)
                except Exception as exc:  # noqa: BLE001 - as in judge()
                    return errored(error_text(exc))
                except BaseException as exc:  # noqa: BLE001 - as in judge()
                    return errored(_exit_text(exc))
                if type(answer) is Verdict:
                    return answer if trusted else safe_verdict(answer)
                return judge_answer(answer)

            return guarded_once
        guards = self.guards

        def guarded(case: Case) -> Verdict:
            for test, verdict in guards:
                if not test(case):
                    return verdict
            return judge(case)

        return guarded

    async def arun(self, case: Case) -> Verdict:
        """Evaluate a check, awaiting it when it is async (its own verdict, when it answers
        several)."""
        answer = await self.answers(case)
        if isinstance(answer, Verdict):
            return answer
        return self.spread(answer, (self.name,))[self.name]

    async def answers(self, case: Case) -> Answers:
        """Evaluate a check, awaiting it when it is async: its verdict, or its named verdicts
        when it answers a mapping."""
        guarded = self._guard(case)
        if guarded is not None:
            return guarded
        try:
            answer = (self.fn or self.check.evaluate)(case)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as exc:  # noqa: BLE001 - see run()
            return errored(error_text(exc))
        except asyncio.CancelledError:  # the run is being stopped
            raise
        except BaseException as exc:  # noqa: BLE001 - in a task, sys.exit() stops the loop
            return errored(_exit_text(exc))
        if isinstance(answer, Mapping):
            return answer
        return to_verdict(answer)


def judge_answer(answer: object) -> Verdict:
    """A non-Verdict answer of a synchronous check, as a verdict."""
    if inspect.isawaitable(answer):
        _close(answer)
        return errored("async check called synchronously; use arun()")
    return to_verdict(answer)


def _close(awaitable: object) -> None:
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()


class FunctionCheck:
    """A plain function (sync or async) made into a check by :func:`check`.

    Call :meth:`bind` to fix keyword arguments given in a suite file.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        version: str = "1",
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        self.version = version
        self.kwargs = dict(kwargs or {})
        self.is_async = inspect.iscoroutinefunction(fn)
        functools.update_wrapper(self, fn)

    def bind(self, **kwargs: Any) -> FunctionCheck:
        """A copy with these keyword arguments fixed; raises TypeError if ``fn`` rejects them."""
        inspect.signature(self.fn).bind(None, **{**self.kwargs, **kwargs})
        return FunctionCheck(
            self.fn, name=self.name, version=self.version, kwargs={**self.kwargs, **kwargs}
        )

    def evaluate(self, case: Case) -> Any:
        """Call the function on the case."""
        return self.fn(case, **self.kwargs)

    def runner(self) -> Callable[[Case], Any]:
        """The function itself when no options are bound (one call less per case)."""
        if not self.kwargs:
            return self.fn
        return functools.partial(self.fn, **self.kwargs)

    def __call__(self, case: Case, **kwargs: Any) -> Any:
        return self.fn(case, **{**self.kwargs, **kwargs})

    def __repr__(self) -> str:
        return f"<check {self.name} v{self.version}>"


def check(
    fn: Callable[..., Any] | None = None, *, name: str | None = None, version: str = "1"
) -> Any:
    """Make a function ``fn(case, **options) -> Verdict | bool | (bool, reason)`` a check.

    Use bare (``@check``) or with options (``@check(version="2")``). The function may be
    ``async``. Bump ``version`` when its logic changes, so stored runs stay comparable.
    """

    def wrap(f: Callable[..., Any]) -> FunctionCheck:
        return FunctionCheck(f, name=name, version=version)

    if fn is not None:
        return wrap(fn)
    return wrap
