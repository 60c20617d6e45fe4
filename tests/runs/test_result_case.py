"""``CaseResult.case`` is the evaluated case for every source: a JSONL suite's own cases (kept
as their lines by the engine, parsed on first read), errored recorded runs, repeats, and cases
the caller gives."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import checkweigh as cw
from checkweigh.core import Case, CaseResult
from checkweigh.suites import iter_cases
from support.recorded_suite import make_case, write_suite


def _cases() -> list[dict[str, object]]:
    crashed = make_case("crashed", participants=[], time="", reply="")
    crashed["error"] = "TimeoutError: the agent did not answer in 30s"
    odd = make_case("odd-text", participants=["Alice", "Bob"], time="10:00")
    odd["input"] = {"message": "Book Al\ud800ice", "big": 2**70}  # a lone surrogate escape
    return [
        make_case("ok-1", participants=["Alice", "Bob"], time="10:00"),
        crashed,
        make_case("wrong-time", participants=["Alice", "Bob"], time="11:00"),
        odd,
    ]


def test_a_jsonl_suites_own_cases_are_given_on_every_result(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, _cases())
    by_id = {c.id: c for c in iter_cases(tmp_path / "cases.jsonl")}
    seen: list[CaseResult] = []
    cw.run(str(suite), cw.RunOptions(repeat=2), on_result=seen.append)

    assert sorted((r.case_id, r.repeat) for r in seen) == [
        (i, k) for i in sorted(by_id) for k in (0, 1)
    ]
    for r in seen:
        # evaluated as read: the engine kept the line, and the case is parsed from it
        assert r.body is not None
        case = r.case
        assert isinstance(case, Case)
        assert case == by_id[r.case_id]
        assert r.case is case  # parsed once, then kept
    crashed = next(r for r in seen if r.case_id == "crashed")
    assert crashed.errored
    assert crashed.case is not None
    assert crashed.case.error == "TimeoutError: the agent did not answer in 30s"
    odd = next(r for r in seen if r.case_id == "odd-text")
    assert odd.case is not None
    assert odd.case.input == {"message": "Book Al\\ud800ice", "big": 2**70}
    # a result sent to another process still gives its case
    copied = pickle.loads(pickle.dumps(crashed))
    assert copied == crashed
    assert copied.case == crashed.case


def test_cases_the_caller_gives_are_held_as_given(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, _cases()[:1])
    given = [Case.model_validate(c) for c in _cases()[:3]]
    seen: list[CaseResult] = []
    cw.run(str(suite), cases=given, on_result=seen.append)
    assert [r.case for r in seen] == given
    assert all(r.body is None for r in seen)


def test_a_result_rebuilt_from_its_record_has_no_case_unless_its_body_is_kept() -> None:
    line = json.dumps(make_case("ok-1", participants=["Alice"], time="10:00")).encode()
    result = CaseResult("ok-1", 0, {}, {}, body=line)
    assert result.case == Case.model_validate_json(line)
    assert result._replace(body=None).case is None
