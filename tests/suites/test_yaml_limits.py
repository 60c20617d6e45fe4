"""The YAML loader's limits (aliases, depth, integer size), merge keys, and where keys sit."""

from __future__ import annotations

import re
import time
import tracemalloc

import pytest
import yaml

from checkweigh.suites._yaml import (
    ALIAS_CAP,
    ALIAS_NODES,
    ALIAS_RATIO,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    YamlSyntaxError,
    load_yaml,
)

BOMB = "".join(
    f"{name}: &{name} [{', '.join([prev] * 9)}]\n"
    for name, prev in zip("abcdefghi", ['"lol"', *("*" + c for c in "abcdefgh")], strict=True)
)


def _error(text: str) -> YamlSyntaxError:
    with pytest.raises(YamlSyntaxError) as info:
        load_yaml(text)
    return info.value


def test_the_billion_laughs_bomb_is_refused_fast_and_flat() -> None:
    assert len(BOMB.encode()) <= 716
    tracemalloc.start()
    start = time.perf_counter()
    try:
        error = _error(BOMB)
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert re.match(r"aliases expand to more than 10\d,\d{3} values; .* alias bomb", str(error))
    assert error.line == 6  # the first line whose aliases go over the limit
    assert elapsed < 0.5
    assert peak < 5 * 2**20


def test_a_suite_with_a_few_anchors_loads_as_written() -> None:
    text = """\
x-path: &booking final_state.booking
x-weights: &strong {weight: 0.4, required: true}
checks:
  correct_time: {type: equals, path: *booking, expected_path: ground_truth.time}
  correct_people: {type: set_equals, path: *booking, expected_path: ground_truth.people}
rubrics:
  completion:
    weights:
      correct_time: *strong
      correct_people: {<<: *strong, weight: 0.6}
"""
    data, lines = load_yaml(text)
    assert data == yaml.safe_load(text)
    weights = data["rubrics"]["completion"]["weights"]
    assert weights["correct_people"] == {"weight": 0.6, "required": True}
    # an explicit key wins over the merged one, and so does its line
    assert lines.line(("rubrics", "completion", "weights", "correct_people", "weight")) == 10
    # a merged key points at the mapping it came from
    assert lines.line(("rubrics", "completion", "weights", "correct_people", "required")) == 2


def test_aliases_may_expand_in_proportion_to_the_document() -> None:
    # 3,000 cases sharing a 40-value default through '<<': 120,000 values via aliases
    defaults = ", ".join(f"k{i}: {i}" for i in range(40))
    text = f"- &d {{id: c0, metadata: {{{defaults}}}}}\n" + "".join(
        f"- {{<<: *d, id: c{i}}}\n" for i in range(1, 3000)
    )
    data, _ = load_yaml(text)
    assert len(data) == 3000
    assert data[-1]["id"] == "c2999"
    assert data[-1]["metadata"]["k39"] == 39


def test_the_alias_budget_is_counted_in_expanded_values() -> None:
    block = "[" + ", ".join(["1"] * 999) + "]"  # 1,000 values with the list itself
    # the document's own values: the mapping, 2 keys, the block and the list of aliases
    own = 1 + 2 + 1000 + 1
    uses = (ALIAS_NODES + ALIAS_RATIO * own) // 1000
    under = f"a: &a {block}\nb: [" + ", ".join(["*a"] * (uses - 10)) + "]\n"
    assert load_yaml(under)[0]["b"][0][0] == 1
    over = f"a: &a {block}\nb: [" + ", ".join(["*a"] * (uses + 20)) + "]\n"
    assert "aliases expand to more than" in str(_error(over))
    assert ALIAS_CAP >= 10 * ALIAS_NODES


@pytest.mark.parametrize("style", ["flow", "block"])
def test_nesting_is_limited(style: str) -> None:
    def nested(depth: int) -> str:
        if style == "flow":
            return "a: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n"
        # the mapping, depth - 2 lists, and the empty (null) item of the innermost one
        return "a:\n" + "".join("  " * i + "-\n" for i in range(1, depth - 1))

    assert load_yaml(nested(MAX_DEPTH))[0] is not None
    error = _error(nested(MAX_DEPTH + 1))
    assert str(error) == "nested more than 100 levels deep; expected a flatter document"
    assert error.line == (1 if style == "flow" else MAX_DEPTH)


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    assert str(_error("a: &x {b: *x}\n")) == "alias *x is used inside its own anchor"


def test_integer_size_is_limited_like_python() -> None:
    assert load_yaml(f"n: {'7' * MAX_INT_DIGITS}")[0]["n"] % 10 == 7
    error = _error(f"a: 1\nn: {'7' * (MAX_INT_DIGITS + 1)}\n")
    assert (str(error), error.line) == ("a number with 4301 digits; expected at most 4300", 2)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("a: 1\nb: 2024-02-30\n", 2, "cannot read '2024-02-30': day is out of range for month"),
        ("a: 1\nb: 2\na: 3\n", 3, "duplicate key 'a'"),
        ("a: ok\nb: x\x07y\n", 2, "unacceptable character #x0007"),
        ("a: [1\n", 2, "expected ',' or ']', but got '<stream end>'"),
        ("a: 1\n---\nb: 2\n", 2, "expected a single document in the stream, but found another"),
        ("? {a: 1}\n: 2\n", 1, "a list or mapping used as a key; expected text keys"),
    ],
)
def test_malformed_documents_name_their_line(text: str, line: int, message: str) -> None:
    error = _error(text)
    assert error.line == line
    assert str(error).startswith(message)


def test_merged_keys_are_not_duplicates_but_written_twice_they_are() -> None:
    data, _ = load_yaml("d: &d {a: 1}\ne: {<<: *d, a: 2}\n")
    assert data["e"] == {"a": 2}
    assert "duplicate key 'a'" in str(_error("e: {a: 1, a: 2}\n"))


def test_keys_that_are_not_text_have_lines() -> None:
    _, lines = load_yaml("checks:\n  x: 1\n  7: 2\n  ~: 3\n")
    assert lines.line(("checks", 7)) == 3
    assert lines.line(("checks", "None")) == 4
