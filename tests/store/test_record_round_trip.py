"""Any result the engine can make is stored and read back as it was, on SQLite and
PostgreSQL: through the typed record (``ResultRecord``) both ways, with its case and its judge
exchanges beside it. Text no UTF-8 encoder takes (a lone surrogate from user code) comes back
as its visible escape, as everywhere else."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkweigh._text import safe_text
from checkweigh.core import (
    Case,
    CaseResult,
    CaseUsage,
    EvaluationResult,
    ExchangeMessage,
    JudgeExchange,
    OutcomeClass,
    ResultRecord,
    ScoreStatus,
    Verdict,
    VerdictState,
    measured,
)
from checkweigh.store import Store, result_detail

# names and ids reach SQL columns of their own, where the text boundary has already made them
# storable; reasons, errors and the agent's error are any Python text
plain = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
names = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=8)
# st.text() leaves surrogates out, and even with them a lone one is rare: some are given
anything = st.text(st.characters(exclude_categories=[]), max_size=40) | st.sampled_from(
    ["Booked Al\ud800ice at 10:00", "\udc80", "tab\tNUL\x00end", "\ud83d\ude00 paired"]
)
finite = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def verdicts(draw: st.DrawFn) -> Verdict:
    v = Verdict(
        draw(st.sampled_from(VerdictState)),
        draw(anything),
        draw(st.none() | anything),
    )
    if draw(st.booleans()):
        return measured(v, draw(st.dictionaries(plain, finite, min_size=1, max_size=3)))
    return v


@st.composite
def scores(draw: st.DrawFn, rubric: str, checks: list[str]) -> EvaluationResult:
    some = st.lists(st.sampled_from(checks), unique=True).map(tuple) if checks else st.just(())
    return EvaluationResult(
        rubric,
        draw(st.sampled_from(ScoreStatus)),
        draw(st.none() | st.floats(0.0, 1.0)),
        draw(st.none() | st.sampled_from(OutcomeClass)),
        {},  # attached on reading, from the run's rubrics
        draw(some),
        draw(some),
        draw(some),
        draw(st.integers(-1, 9)),
    )


exchanges = st.builds(
    JudgeExchange,
    check=names,
    model=plain,
    messages=st.lists(
        st.builds(ExchangeMessage, role=st.sampled_from(["system", "user"]), content=plain),
        max_size=2,
    ).map(tuple),
    reply=plain,
    input_tokens=st.integers(0, 10**6),
    output_tokens=st.integers(0, 10**6),
    latency_ms=st.floats(0, 1e6),
    cached=st.booleans(),
    error=st.none() | plain,
)


@st.composite
def runs(draw: st.DrawFn) -> tuple[dict[str, list[str]], list[CaseResult]]:
    checks = draw(st.lists(names, unique=True, max_size=5))
    rubrics = draw(
        st.dictionaries(
            names,
            st.lists(st.sampled_from(checks), unique=True) if checks else st.just([]),
            max_size=3,
        )
    )
    results = []
    for position, case_id in enumerate(draw(st.lists(names, min_size=1, max_size=4, unique=True))):
        for repeat in range(draw(st.integers(1, 2))):
            given = draw(st.fixed_dictionaries({c: verdicts() for c in checks}))
            errored = draw(st.none() | anything)
            results.append(
                CaseResult(
                    case_id,
                    repeat,
                    {} if errored is not None else given,
                    {r: draw(scores(r, cs)) for r, cs in rubrics.items()},
                    draw(st.none() | st.floats(0, 1e9)),
                    errored,
                    position,
                    draw(
                        st.none()
                        | st.builds(
                            CaseUsage,
                            st.none() | st.integers(0, 10**20),
                            st.none() | st.integers(0, 10**20),
                            st.none() | st.floats(0, 1e6),
                        )
                    ),
                    Case(id=case_id, input=draw(plain)) if draw(st.booleans()) else None,
                    None,
                    tuple(draw(st.lists(exchanges, max_size=2))),
                )
            )
    return rubrics, results


def _safe(v: Verdict) -> tuple[Any, ...]:
    error = None if v.error is None else safe_text(v.error)
    return (v.state, safe_text(v.reason), error, v.measures)


def _tokens(count: int | None) -> int | None:
    return count if count is not None and count < 2**63 else None


def _same(read: CaseResult, wrote: CaseResult, rubrics: dict[str, list[str]]) -> None:
    assert (read.case_id, read.repeat, read.position) == (
        wrote.case_id,
        wrote.repeat,
        wrote.position,
    )
    assert read.latency_ms == wrote.latency_ms
    assert read.agent_error == (None if wrote.agent_error is None else safe_text(wrote.agent_error))
    # a token count past what JSON readers take as an integer is unknown
    assert read.usage == (
        None
        if wrote.usage is None
        else wrote.usage._replace(
            input_tokens=_tokens(wrote.usage.input_tokens),
            output_tokens=_tokens(wrote.usage.output_tokens),
        )
    )
    assert {n: _safe(v) for n, v in read.verdicts.items()} == {
        n: _safe(v) for n, v in wrote.verdicts.items()
    }
    assert read.results.keys() == wrote.results.keys()
    for name, got in read.results.items():
        want = wrote.results[name]
        assert got._replace(details={}) == want
        # a rubric's details are its own checks' verdicts (every verdict for one with none)
        own = rubrics[name] or list(read.verdicts)
        assert list(got.details) == [c for c in own if c in read.verdicts]
    if read.latency_ms is not None:
        assert math.isfinite(read.latency_ms)


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(runs())
def test_any_result_is_read_back_as_it_was_written(
    store: Store, run: tuple[dict[str, list[str]], list[CaseResult]]
) -> None:
    rubrics, results = run
    config = {
        "rubrics": [{"name": r, "weights": dict.fromkeys(cs, 1)} for r, cs in rubrics.items()]
    }
    run_id = store.create_run("prop", "suite.yaml", config, repeat=2)
    store.add_results(run_id, results)

    stored = list(store.iter_results(run_id))
    assert len(stored) == len(results)
    for read, wrote in zip(stored, results, strict=True):
        _same(read, wrote, rubrics)
        # the record read back is the record written (text made storable)
        assert ResultRecord.of(read) == ResultRecord.read(ResultRecord.of(wrote).to_json())
        detail = result_detail(store, store.get_run(run_id), wrote.case_id, wrote.repeat)
        assert detail is not None
        _same(detail.result, wrote, rubrics)
        assert detail.case == wrote.case
        assert detail.exchanges == wrote.exchanges
