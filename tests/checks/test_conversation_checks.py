"""Field checks over a whole recorded airline conversation: many-valued paths with
``match``, expected values from the case, and text normalisation."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from checkweigh.checks import (
    BuiltinCheck,
    Contains,
    Equals,
    JsonSchema,
    Length,
    OneOf,
    Regex,
    SetEquals,
    WithinTolerance,
    WordCount,
)
from checkweigh.checks._text import as_text, normalizer
from checkweigh.core import Case, VerdictState
from support.airline_traces import cancel_run

P, F, NA = VerdictState.PASSED, VerdictState.FAILED, VerdictState.NOT_APPLICABLE
REPLIES = "trace[kind=assistant].content"


@pytest.fixture
def case() -> Case:
    return Case.model_validate(cancel_run())


def judge(check: BuiltinCheck, case: Case) -> tuple[VerdictState, str]:
    verdict = check.evaluate(case)
    return verdict.state, verdict.reason


def test_every_required_fact_in_some_reply_is_one_check(case: Case) -> None:
    every_fact = Contains(
        path=REPLIES,
        values_path="ground_truth.outputs",
        mode="all",
        within="any",
        normalize=["thousands_separators", "whitespace"],
    )
    # "1234" is in the 2nd of 4 replies (as $1,234), "5-7 business days" in the 3rd
    assert judge(every_fact, case) == (P, f"all 2 values found in 4 texts at {REPLIES}")
    # without normalisation neither is found as written, and the reason names both
    strict = every_fact.model_copy(update={"normalize": []})
    assert judge(strict, case) == (
        F,
        f"['1234', '5-7 business days'] not in any of 4 texts at {REPLIES}",
    )


def test_one_reply_with_every_fact_is_a_different_question(case: Case) -> None:
    # within: each (the default) judges each reply on its own; no single reply has both facts
    one_reply = Contains(
        path=REPLIES,
        values_path="ground_truth.outputs",
        mode="all",
        normalize=["thousands_separators", "whitespace"],
    )
    state, reason = judge(one_reply, case)
    assert state is F
    assert reason == (
        f"none of 4 values at {REPLIES} passes; first: trace[2].content lacks "
        "['1234', '5-7 business days']"
    )
    # a single fact, said in the 2nd reply: match any names the reply that has it
    refund = one_reply.model_copy(update={"values_path": None, "values": [1234]})
    assert judge(refund, case) == (P, "trace[5].content contains [1234]")


def test_a_fact_only_in_a_tool_result_does_not_count_for_the_replies(case: Case) -> None:
    email = Contains(path=REPLIES, values_path="ground_truth.email", mode="all", within="any")
    assert judge(email, case) == (
        F,
        f"['mia.li3818@example.com'] not in any of 4 texts at {REPLIES}",
    )
    # it is in the lookup's result, which a filter on the tool name reaches
    looked_up = Equals(
        path="trace[name=get_user_details].result.email", expected_path="ground_truth.email"
    )
    assert judge(looked_up, case) == (
        P,
        "trace[3].result.email == ground_truth.email",
    )


def test_contains_none_within_any_names_the_reply_that_leaked(case: Case) -> None:
    leak = Contains(path=REPLIES, values=["7447", "mia_li_3668"], mode="none", within="any")
    assert judge(leak, case) == (F, "trace[5].content contains '7447'")
    clean = leak.model_copy(update={"values": ["password", "internal policy"]})
    assert judge(clean, case) == (
        P,
        f"none of ['password', 'internal policy'] in 4 texts at {REPLIES}",
    )
    anything = leak.model_copy(update={"mode": "any", "values": ["refund", "sorry"]})
    assert judge(anything, case) == (P, "trace[5].content contains 'refund'")


def test_match_all_names_the_first_value_that_fails(case: Case) -> None:
    short = WordCount(path=REPLIES, max=30, match="all")
    assert judge(short, case) == (P, f"all 4 values at {REPLIES} pass")
    terse = WordCount(path=REPLIES, max=20, match="all")
    assert judge(terse, case) == (
        F,
        "trace[5].content has 24 words, more than 20 (match: all, 4 values)",
    )
    # any: the first passing reply is named
    assert judge(WordCount(path=REPLIES, max=10), case) == (P, "trace[11].content has 7 words")
    assert judge(WordCount(path=REPLIES, max=5), case) == (
        F,
        f"none of 4 values at {REPLIES} passes; first: trace[2].content has 14 words, more than 5",
    )
    no_card = Regex(path=REPLIES, pattern=r"^(?!.*\b\d{4}\b)", match="all")
    assert judge(no_card, case)[0] is F


def test_normalisation_options(case: Case) -> None:
    third = "trace[9].content"
    assert judge(Contains(path=third, values=["within 5-7 business days"]), case)[0] is F
    spaced = Contains(path=third, values=["within 5-7 business days"], normalize=["whitespace"])
    assert judge(spaced, case) == (P, f"{third} contains ['within 5-7 business days']")
    # case folding, from either spelling of the option
    shouted = ["NO6JO3 IS CANCELLED"]
    assert judge(Contains(path=third, values=shouted), case)[0] is F
    assert judge(Contains(path=third, values=shouted, case_insensitive=True), case)[0] is P
    assert judge(Contains(path=third, values=shouted, normalize=["case"]), case)[0] is P
    # punctuation: "Done: NO6JO3" reads as "Done NO6JO3"
    assert judge(Contains(path=third, values=["Done NO6JO3"]), case)[0] is F
    assert (
        judge(Contains(path=third, values=["Done NO6JO3"], normalize=["punctuation"]), case)[0] is P
    )
    # equals and one_of normalise both sides
    last = "trace[-1].content"
    polite = "you're welcome, mia.  have a good day!"
    assert judge(Equals(path=last, value=polite), case)[0] is F
    assert judge(Equals(path=last, value=polite, normalize=["case", "whitespace"]), case)[0] is P
    assert judge(OneOf(path=last, values=["no", "youre welcome mia have a good day"]), case)[0] is F
    relaxed = OneOf(
        path=last,
        values=["no", "youre welcome mia have a good day"],
        normalize=["case", "punctuation"],
    )
    assert judge(relaxed, case)[0] is P
    # regex: the text is normalised, the pattern is not
    amount = Regex(path="trace[5].content", pattern=r"\$1234\b")
    assert judge(amount, case)[0] is F
    assert judge(amount.model_copy(update={"normalize": ["thousands_separators"]}), case)[0] is P


@pytest.mark.parametrize(
    ("text", "options", "expected"),
    [
        ("$1,234,567.50", ["thousands_separators"], "$1234567.50"),
        ("1,23 and 3,5 and 12,3456", ["thousands_separators"], "1,23 and 3,5 and 12,3456"),
        ("1\u202f234 or 1\u00a0234", ["thousands_separators"], "1234 or 1234"),
        ("  a\tb\n\nc  ", ["whitespace"], "a b c"),
        ("L8QF2. (confirmed!)", ["punctuation"], "L8QF2 confirmed"),
        ("Straße", ["case"], "strasse"),
        ("Total: 1,234 EUR.", ["punctuation", "thousands_separators", "case"], "total 1234 eur"),
    ],
)
def test_normalizer(text: str, options: list[Any], expected: str) -> None:
    normalize = normalizer(options)
    assert normalize is not None
    assert normalize(text) == expected


def test_no_options_means_no_normalizer() -> None:
    assert normalizer([]) is None


@pytest.mark.parametrize(
    ("value", "text"),
    [("1234", "1234"), (1234, "1234"), (30.0, "30"), (12.5, "12.5"), (True, "true"), ({}, None)],
)
def test_expected_numbers_are_looked_for_as_written(value: Any, text: str | None) -> None:
    assert as_text(value) == text


def test_values_from_the_case(case: Case) -> None:
    cabin = OneOf(
        path="trace[name=get_reservation_details].result.cabin", values_path="ground_truth.cabins"
    )
    assert judge(cabin, case) == (
        P,
        "trace[4].result.cabin is one of ground_truth.cabins",
    )
    # a single value is a list of one
    refund = Contains(path="trace[5].content", values_path="ground_truth.refund")
    assert judge(refund, case) == (F, "trace[5].content lacks [1234]")
    refund = refund.model_copy(update={"normalize": ["thousands_separators"]})
    assert judge(refund, case) == (P, "trace[5].content contains [1234]")
    # no expectation in the case (missing, null or empty): not applicable
    for where in ("ground_truth.none", "ground_truth.absent"):
        check = Contains(path=REPLIES, values_path=where, mode="all", within="any")
        assert judge(check, case) == (NA, f"no values at {where}")
        assert judge(check.model_copy(update={"within": "each"}), case)[0] is NA
        assert judge(OneOf(path="output", values_path=where), case)[0] is NA
    # values_path may itself reach many values
    ids = OneOf(path="trace[-1].kind", values_path="trace[kind=tool_call].id")
    assert judge(ids, case)[0] is F


def test_an_empty_match_is_missing(case: Case) -> None:
    nobody = "trace[name=book_reservation].arguments"
    assert judge(Equals(path=nobody, value={}), case) == (F, f"{nobody} matched nothing")
    assert judge(Contains(path=f"{nobody}.origin", values=["JFK"], within="any"), case) == (
        F,
        f"{nobody}.origin matched nothing",
    )
    assert judge(Length(path=nobody, max=3, match="all"), case)[0] is F


def test_every_field_check_takes_many_values(case: Case) -> None:
    prices = "final_state.items[*].price"
    assert judge(WithinTolerance(path=prices, value=617, match="all"), case) == (
        P,
        f"all 2 values at {prices} pass",
    )
    assert judge(WithinTolerance(path=prices, value=600, abs_tol=5), case) == (
        F,
        f"none of 2 values at {prices} passes; first: final_state.items[0].price = 617.0, "
        "expected 600 within 5",
    )
    assert (
        judge(
            Equals(path="trace[kind=tool_call, error!=null].name", value="send_certificate"), case
        )[0]
        is P
    )
    assert judge(SetEquals(path="trace[*].arguments", value=["reservation_id"]), case) == (
        F,
        "none of 4 values at trace[*].arguments passes; first: trace[3].arguments or the "
        "expected value is not a list",
    )
    schema = {"type": "object", "required": ["reservation_id"]}
    results = "trace[kind=tool_call, error=null].result"
    assert judge(JsonSchema(path=results, json_schema=schema, match="all"), case) == (
        F,
        f"{'trace[3].result'} at (root): 'reservation_id' is a required property "
        "(match: all, 3 values)",
    )
    assert judge(Length(path=REPLIES, min=1, match="all"), case)[0] is P


@pytest.mark.parametrize(
    ("check", "kwargs", "message"),
    [
        (
            Equals,
            {"path": "output", "value": "x", "match": "all"},
            "'match' applies to a path with",
        ),
        (
            Contains,
            {"path": "output", "values": ["x"], "within": "any"},
            "'within: any' searches the values of a path with [*] or a filter",
        ),
        (
            Contains,
            {"path": REPLIES, "values": ["x"], "within": "any", "match": "all"},
            "'match' does not apply with 'within: any'",
        ),
        (
            Contains,
            {"path": REPLIES, "values": ["x"], "values_path": "ground_truth.outputs"},
            "give exactly one of 'values' or 'values_path'",
        ),
        (OneOf, {"path": "output"}, "give exactly one of 'values' or 'values_path'"),
        (Contains, {"path": REPLIES, "values": []}, "at least 1 item"),
        (
            Contains,
            {"path": REPLIES, "values": ["x"], "normalize": ["accents"]},
            "'case', 'whitespace', 'thousands_separators' or 'punctuation'",
        ),
        (
            Contains,
            {"path": REPLIES, "values_path": "ground_truth[kind=]"},
            "malformed field path 'ground_truth[kind=]' at position 18",
        ),
    ],
)
def test_bad_specs_are_refused(
    check: type[BuiltinCheck], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message.replace("[", r"\[").replace("*", r"\*")):
        check(**kwargs)


@settings(max_examples=150, deadline=None)
@given(
    replies=st.lists(st.text(alphabet="ab ,1", max_size=6), min_size=1, max_size=4),
    facts=st.lists(st.text(alphabet="ab1", min_size=1, max_size=2), min_size=1, max_size=3),
)
def test_within_any_is_each_fact_in_some_reply(replies: list[str], facts: list[str]) -> None:
    case = Case(
        id="c",
        trace=[{"kind": "assistant", "content": r} for r in replies],  # type: ignore[misc]
        ground_truth={"facts": facts},
    )
    every = Contains(path=REPLIES, values_path="ground_truth.facts", mode="all", within="any")
    one_reply = Contains(path=REPLIES, values_path="ground_truth.facts", mode="all")
    in_some = all(any(f in r for r in replies) for f in facts)
    in_one = any(all(f in r for f in facts) for r in replies)
    assert every.evaluate(case).passed is in_some
    assert one_reply.evaluate(case).passed is in_one
    none = every.model_copy(update={"mode": "none"})
    assert none.evaluate(case).passed is (not any(f in r for f in facts for r in replies))


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(
        st.none() | st.sampled_from(["Please confirm.", "please  CONFIRM", "Booked.", 7, [1]]),
        max_size=5,
    ),
    fullmatch=st.booleans(),
    normalize=st.sampled_from([[], ["case", "whitespace"]]),
)
def test_a_regex_over_many_texts_answers_as_each_text_judged_alone(
    values: list[Any], fullmatch: bool, normalize: list[Any]
) -> None:
    # `match: any` has its own loop (no verdict per reply); it must say what judging each
    # value on its own and combining them says, reasons included
    case = Case.model_validate({"id": "c", "metadata": {"replies": values}})
    check = Regex(
        path="metadata.replies[*]",
        pattern="please confirm",
        fullmatch=fullmatch,
        normalize=normalize,
    )
    general = check.over(check._build, lambda _case: None)
    assert check.evaluate(case) == general(case)
