"""Field paths with ``[*]`` and filters: parsing, resolving on a recorded conversation, errors,
and plain paths unchanged (property tests against the general lookup)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkweigh.core import Case, Condition, ConditionOp, FieldPath, PathSyntaxError
from checkweigh.core._case import Step
from checkweigh.core._path_select import Each, FilterTest, fan_out
from checkweigh.core._paths import MISSING, _compile_any, _fan_out, _walk
from support.airline_traces import CANCEL_RUN, cancel_run


@pytest.fixture
def case() -> Case:
    return Case.model_validate(cancel_run())


def values(text: str, root: Any) -> Any:
    return FieldPath.parse(text).get(root, None)


def test_parse_wildcards_and_filters() -> None:
    assert FieldPath.parse("trace[*].content").parts == ("trace", Each(), "content")
    path = FieldPath.parse("trace[kind=assistant].content")
    assert path.many
    assert path.parts == (
        "trace",
        Each((FilterTest(("kind",), "assistant", False, False, "assistant"),)),
        "content",
    )
    nested = FieldPath.parse("trace[arguments.reservation_id=NO6JO3].name").parts[1]
    assert isinstance(nested, Each)
    assert nested.tests[0].field == ("arguments", "reservation_id")
    # several conditions, spaces around '=' and ',' ignored, quoted text with ], comma, quotes
    both = FieldPath.parse("trace[kind = tool_call, name='it\\'s [a], b']").parts[1]
    assert isinstance(both, Each)
    assert [(t.field, t.raw, t.quoted) for t in both.tests] == [
        (("kind",), "tool_call", False),
        (("name",), "it's [a], b", True),
    ]
    assert str(both) == '[kind=tool_call,name="it\'s [a], b"]'
    assert str(FieldPath.parse("trace[error!=null]").parts[1]) == "[error!=null]"
    # plain paths are not many-valued and keep their parts
    assert not FieldPath.parse("trace[-1].content").many
    assert FieldPath.parse("final_state.items[*].price").parts == (
        "final_state",
        "items",
        Each(),
        "price",
    )


def test_resolve_on_a_recorded_conversation(case: Case) -> None:
    replies = values("trace[kind=assistant].content", case)
    assert len(replies) == 4
    assert replies[1].startswith("Reservation NO6JO3")
    # every step's text: system, users and assistants; tool calls have no content (skipped)
    assert len(values("trace[*].content", case)) == 8
    assert values("trace[name=get_user_details].result.email", case) == ["mia.li3818@example.com"]
    assert values("trace[arguments.reservation_id=NO6JO3].name", case) == [
        "get_reservation_details",
        "cancel_reservation",
    ]
    # successful calls only: error is null; errored ones by negation
    assert values("trace[kind=tool_call, error=null].name", case) == [
        "get_user_details",
        "get_reservation_details",
        "cancel_reservation",
    ]
    assert values("trace[kind=tool_call, error!=null].name", case) == ["send_certificate"]
    # numbers match by value, unquoted; a quoted number is text only
    assert values("trace[arguments.amount=100].name", case) == ["send_certificate"]
    assert values("trace[arguments.amount=100.0].name", case) == ["send_certificate"]
    assert values("trace[arguments.amount='100'].name", case) is None
    assert values("trace[result.total=1234].id", case) == ["call_2"]
    assert values("final_state.items[*].price", case) == [617.0, 617.0]
    # [*] over a mapping walks its values
    assert values("final_state.reservations[*].status", case) == ["cancelled"]
    # an index after a wildcard applies to each value
    assert values("trace[kind=tool_call].arguments.user_id", case) == ["mia_li_3668"] * 2
    # nothing reached: missing, like an absent plain path
    assert FieldPath.parse("trace[name=book_flight].arguments").getter(case) is MISSING
    assert not FieldPath.parse("trace[kind=assistant].error").exists(case)


def test_locate_names_where_each_value_was_found(case: Case) -> None:
    found = FieldPath.parse("trace[kind=assistant].content").locate(case)
    assert [where for where, _ in found] == [
        "trace[2].content",
        "trace[5].content",
        "trace[9].content",
        "trace[11].content",
    ]
    assert FieldPath.parse("final_state.reservations[*].total").locate(case) == [
        ("final_state.reservations.NO6JO3.total", 1234)
    ]
    # a plain path locates its one value under its own text
    assert FieldPath.parse("trace[3].name").locate(case) == [("trace[3].name", "get_user_details")]
    assert FieldPath.parse("trace[99].name").locate(case) == []


def test_filter_values_compare_as_text_numbers_booleans_and_null() -> None:
    items = {
        "rows": [
            {"id": "3", "ok": True, "n": 3, "note": None},
            {"id": 3, "ok": "true", "n": 3.0, "note": "true"},
            {"id": 4, "ok": False, "n": True},
        ]
    }
    assert values("rows[id=3].n", items) == [3, 3.0]  # "3" and 3
    assert values("rows[id='3'].n", items) == [3]  # quoted: text only
    assert values("rows[ok=true].id", items) == ["3", 3]  # True and "true"
    assert values("rows[ok=false].id", items) == [4]
    assert values("rows[n=1].id", items) is None  # True is not the number 1
    assert values("rows[n=3].id", items) == ["3", 3]
    assert values("rows[note=null].id", items) == ["3", 4]  # null and absent
    assert values("rows[note!=null].id", items) == [3]


@pytest.mark.parametrize(
    ("text", "position", "expected"),  # positions count from 0
    [
        ("trace[", 5, "a closing ']'"),
        ("trace[]", 6, "an integer index, '*' or a filter such as [kind=tool_call]"),
        ("trace[1.5]", 6, "an integer index, '*' or a filter such as [kind=tool_call]"),
        ("trace[kind]", 10, "'=' or '!=' after the filter's field name"),
        ("trace[kind=]", 11, "a value after '=' (write '' for empty text)"),
        ("trace[kind==assistant]", 11, "one '=' between the field and the value"),
        ("trace[kind='assistant]", 11, "a closing ' for the quoted value"),
        ("trace[kind=it's]", 13, "a quote only around a whole value"),
        ("trace[kind=assistant;name=x]", 25, "quotes around a value that holds '='"),
        ("trace[kind=a]content", 13, "'.' or '[' before a name"),
        ("trace[kind=a,]", 13, "a field name in the filter"),
        ("trace[*]..content", 9, "a name"),
        ("trace[.kind=a]", 6, "a field name in the filter"),
    ],
)
def test_malformed_paths_name_the_position(text: str, position: int, expected: str) -> None:
    with pytest.raises(PathSyntaxError) as info:
        FieldPath.parse(text)
    message = str(info.value)
    assert message == f"malformed field path {text!r} at position {position}: expected {expected}"


def test_conditions_on_many_values(case: Case) -> None:
    def holds(path: str, op: ConditionOp, value: Any = None) -> bool:
        return Condition(FieldPath.parse(path), op, value).holds(case)

    names = "trace[kind=tool_call].name"
    # positive ops: some value; negative ops: every value
    assert holds(names, ConditionOp.EQUALS, "cancel_reservation")
    assert not holds(names, ConditionOp.EQUALS, "book_reservation")
    assert holds(names, ConditionOp.NOT_EQUALS, "book_reservation")  # no call was a booking
    assert not holds(names, ConditionOp.NOT_EQUALS, "cancel_reservation")
    assert holds(names, ConditionOp.IN, ["update_reservation_flights", "send_certificate"])
    assert holds("trace[kind=tool_call].error", ConditionOp.TRUTHY)
    assert holds("trace[kind=tool_call].error", ConditionOp.EXISTS, True)
    assert not holds("trace[kind=user].error", ConditionOp.EXISTS, True)
    # nothing reached: like a missing plain path
    assert holds("trace[kind=user].error", ConditionOp.FALSY)
    assert holds("trace[kind=user].error", ConditionOp.NOT_EQUALS, "x")
    assert not holds("trace[kind=user].error", ConditionOp.EQUALS, None)


# -- plain paths are unchanged: the compiled getter agrees with the general lookup -------------

_OLD_TOKEN = re.compile(r"([^.\[\]]+)|\[(-?\d+)\]")


def _old_parse(text: str) -> tuple[str | int, ...] | None:
    """The parser before wildcards (kept here as the oracle for plain paths)."""
    parts: list[str | int] = []
    pos = 0
    for match in _OLD_TOKEN.finditer(text):
        gap = text[pos : match.start()]
        name, index = match.groups()
        if gap != ("" if index is not None or pos == 0 else "."):
            return None
        parts.append(int(index) if index is not None else name)
        pos = match.end()
    if pos != len(text) or not parts or isinstance(parts[0], int):
        return None
    return tuple(parts)


_KEYS = st.sampled_from(["a", "b", "trace", "content", "kind", "0"])
_DATA = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=12,
)
_PLAIN = st.lists(st.one_of(_KEYS, st.integers(-3, 3)), min_size=1, max_size=4).filter(
    lambda parts: isinstance(parts[0], str)
)


def _text(parts: list[str | int]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


@settings(max_examples=300, deadline=None)
@given(parts=_PLAIN, data=_DATA)
def test_plain_paths_parse_and_resolve_as_before(parts: list[str | int], data: Any) -> None:
    text = _text(parts)
    path = FieldPath.parse(text)
    assert path.parts == _old_parse(text) == tuple(parts)
    assert not path.many
    root = {parts[0]: data} if isinstance(parts[0], str) else data
    assert path.getter(root) is _walk(root, path.parts) or path.getter(root) == _walk(
        root, path.parts
    )
    found = path.locate(root)
    expected = _walk(root, path.parts)
    assert found == ([] if expected is MISSING else [(text, expected)])


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.dictionaries(_KEYS, st.none() | st.integers(0, 3), max_size=3), max_size=5))
def test_a_filter_selects_exactly_the_matching_rows(rows: list[dict[str, Any]]) -> None:
    root = {"rows": rows}
    got = FieldPath.parse("rows[kind=2].a").get(root, [])
    want = [r["a"] for r in rows if r.get("kind") == 2 and r.get("a") is not None]
    assert got == want
    every = FieldPath.parse("rows[*].a").get(root, [])
    assert every == [r["a"] for r in rows if r.get("a") is not None]


_ITEMS = st.lists(
    st.none()
    | st.sampled_from(["assistant", "x", 3])
    | st.dictionaries(st.sampled_from(["kind", "a"]), st.sampled_from(["assistant", "x", 2, None]))
    | st.builds(
        Step,
        kind=st.sampled_from(["assistant", "user", "tool_call"]),
        content=st.none() | st.sampled_from(["hi", "assistant"]),
        name=st.none() | st.sampled_from(["assistant", "get"]),
    ),
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(
    items=_ITEMS,
    filter_=st.sampled_from(
        ["kind=assistant", "kind!='x'", "name=assistant", "label=assistant", "a='x'", "count=x"]
    ),
)
def test_a_text_filter_selects_what_the_general_filter_selects(
    items: list[Any], filter_: str
) -> None:
    # the one-comprehension filter on a list is a shortcut: it must keep exactly what the
    # general one keeps, on dicts, models (fields, properties, methods), scalars and nulls
    (part,) = FieldPath.parse(f"items[{filter_}]").parts[1:]
    assert isinstance(part, Each)
    tests = tuple((_compile_any(t.field), t.predicate(MISSING)) for t in part.tests)
    assert _fan_out(part)(items) == fan_out(items, tests)


def test_the_fixture_is_the_recorded_run() -> None:
    # guards the fixture: the tests above count on four replies and one errored call
    kinds = [s["kind"] for s in CANCEL_RUN["trace"]]
    assert kinds.count("assistant") == 4
    assert sum(1 for s in CANCEL_RUN["trace"] if s.get("error")) == 1


def test_a_shared_path_reads_a_case_changed_in_place_afresh() -> None:
    # checks of one case share the parsed path and its last answer; a trace that grew since
    # (a conversation driven turn by turn) or was replaced is read again
    from checkweigh.core import Case, FieldPath, Step

    replies = FieldPath.parse("trace[kind=assistant].content")
    assert FieldPath.parse("trace[kind=assistant].content") is replies
    case = Case(id="c", trace=[Step(kind="assistant", content="Hello")])
    assert replies.get(case) == ["Hello"]
    case.trace.append(Step(kind="assistant", content="Your flight is booked."))
    assert replies.get(case) == ["Hello", "Your flight is booked."]
    case.trace = [Step(kind="user", content="hi")]
    assert replies.get(case, None) is None
