"""Round trips of random valid cases through the cases-file formats."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from checkweigh.core import Case, Step
from checkweigh.suites import count_cases, iter_cases

PROPS = settings(max_examples=60, deadline=None, database=None)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=8,
)
objects = st.dictionaries(st.text(max_size=10), json_values, max_size=4)
timestamps = st.datetimes(
    min_value=datetime(1990, 1, 1),
    max_value=datetime(2090, 1, 1),
    timezones=st.sampled_from([None, UTC, timezone(timedelta(hours=5, minutes=30))]),
)
latencies = st.none() | st.floats(min_value=0, max_value=1e7, allow_nan=False)

steps = st.builds(
    Step,
    kind=st.sampled_from(["user", "assistant", "tool_call", "system", "event"]),
    content=st.none() | st.text(max_size=40),
    name=st.none() | st.sampled_from(["check_availability", "book_meeting", "conflict_detected"]),
    arguments=st.none() | objects,
    result=json_values,
    error=st.none() | st.text(max_size=20),
    timestamp=st.none() | timestamps,
    latency_ms=latencies,
)
cases = st.builds(
    Case,
    id=st.text(min_size=1, max_size=16),
    input=json_values,
    trace=st.lists(steps, max_size=4),
    final_state=objects,
    ground_truth=json_values,
    metadata=objects,
    latency_ms=latencies,
)
case_lists = st.lists(cases, max_size=4, unique_by=lambda c: c.id)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("roundtrip")


@PROPS
@given(case_lists)
def test_jsonl_round_trip(workdir: Path, originals: list[Case]) -> None:
    path = workdir / "cases.jsonl"
    path.write_text("".join(c.model_dump_json() + "\n" for c in originals), encoding="utf-8")
    assert list(iter_cases(path)) == originals
    assert count_cases(path) == len(originals)


@PROPS
@given(case_lists)
def test_yaml_and_json_round_trip(workdir: Path, originals: list[Case]) -> None:
    data = [c.model_dump(mode="json") for c in originals]
    as_yaml = workdir / "cases.yaml"
    as_yaml.write_text(yaml.safe_dump({"cases": data}), encoding="utf-8")
    as_json = workdir / "cases.json"
    as_json.write_text(json.dumps(data), encoding="utf-8")
    assert list(iter_cases(as_yaml)) == originals
    assert list(iter_cases(as_json)) == originals


def test_round_trip_keeps_a_realistic_case(workdir: Path, recorded_cases: list[Any]) -> None:
    originals = [Case.model_validate(c) for c in recorded_cases]
    path = workdir / "recorded.jsonl"
    path.write_text("".join(c.model_dump_json() + "\n" for c in originals), encoding="utf-8")
    assert list(iter_cases(path)) == originals
