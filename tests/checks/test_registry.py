"""One place declares a check type: the registry lists every built-in, the loader learns types,
keys and who needs a judge from it, a suite's own class works by dotted path or passed in, and
a new judge check is one class that answers through a suite with a scripted judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel

import checkweigh.checks
import checkweigh.judges
from checkweigh.checks import (
    NO_JUDGE_HINT,
    BuiltinCheck,
    CheckRegistry,
    load_object,
    needs_judge,
    type_name,
)
from checkweigh.core import Case, CaseResult, Verdict, VerdictState, failed, passed
from checkweigh.errors import SuiteError
from checkweigh.judges import JudgeModel, JudgeRequest, ScriptedJudge
from checkweigh.runs import Evaluator, judge_checks
from checkweigh.suites import BUILTIN_CHECKS, load_suite
from support.evaluating import evaluate_all

BUILTIN_NAMES = (
    "equals",
    "one_of",
    "contains",
    "regex",
    "set_equals",
    "within_tolerance",
    "length",
    "word_count",
    "json_schema",
    "tool_called",
    "before",
    "within_first",
    "never_after",
    "count",
    "trajectory_match",
    "python",
    "judge",
    "expected_outcomes",
    "faithfulness",
    "goal_accuracy",
    "graded",
)


def refund_case(case_id: str, *refunds: tuple[float, str | None]) -> dict[str, Any]:
    """An airline support conversation with one ``issue_refund`` call per (amount, error)."""
    trace: list[dict[str, Any]] = [
        {"kind": "user", "content": "My flight HAT170 was cancelled, I want my money back."},
        {
            "kind": "tool_call",
            "name": "get_reservation_details",
            "id": "call_1",
            "arguments": {"reservation_id": "4WQ150"},
            "result": {"flights": ["HAT170"], "total_paid": 840},
        },
    ]
    for i, (amount, error) in enumerate(refunds, start=2):
        trace.append(
            {
                "kind": "tool_call",
                "name": "issue_refund",
                "id": f"call_{i}",
                "arguments": json.dumps({"reservation_id": "4WQ150", "amount": amount}),
                "error": error,
                "result": None if error else {"status": "refunded"},
            }
        )
    trace.append({"kind": "assistant", "content": "Your refund has been processed."})
    return {"id": case_id, "input": {"message": trace[0]["content"]}, "trace": trace}


CASES = [
    refund_case("within-limit", (400.0, None)),
    refund_case("over-limit", (840.0, None)),
    refund_case("over-limit-but-rejected", (840.0, "amount exceeds policy"), (400.0, None)),
    refund_case("no-refund"),
]

REFUND_MODULE = '''\
"""A team's own check: no successful refund above a limit."""

from pydantic import ConfigDict

from checkweigh.checks import BuiltinCheck
from checkweigh.core import failed, not_applicable, passed


class NoRefundOverLimit(BuiltinCheck):
    limit: float
    tool: str = "issue_refund"

    def evaluate(self, case):
        refunds = [s for s in case.trace if s.kind == "tool_call" and s.name == self.tool]
        if not refunds:
            return not_applicable(f"no {self.tool} call")
        for step in refunds:
            amount = step.arguments.get("amount", 0)
            if step.error is None and amount > self.limit:
                return failed(f"{self.tool} of {amount:g} succeeded (limit {self.limit:g})")
        return passed(f"every successful {self.tool} is at most {self.limit:g}")


class Lenient(NoRefundOverLimit):
    """Ignores unknown keys on its own: the loader must still refuse them."""

    model_config = ConfigDict(extra="ignore", frozen=True)


def not_a_class(case):
    return True


class Picky(NoRefundOverLimit):
    def model_post_init(self, context):
        raise RuntimeError("refund policy table is missing")
'''

SUITE = """\
name: refunds
cases: cases.jsonl
checks:
  refund_limit:
    type: CHECK_TYPE
    limit: 500
  replied:
    type: word_count
    path: output
    min: 3
rubrics:
  policy:
    weights: {refund_limit: 0.8, replied: 0.2}
"""


def write(folder: Path, check_type: str = "refund_checks.NoRefundOverLimit", **edits: str) -> Path:
    """The refund suite in ``folder``, with its module and cases; ``edits`` replace text."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "refund_checks.py").write_text(REFUND_MODULE)
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    text = SUITE.replace("CHECK_TYPE", check_type)
    for old, new in edits.items():
        assert old in text
        text = text.replace(old, new)
    (folder / "suite.yaml").write_text(text)
    return folder / "suite.yaml"


def verdicts_of(suite_path: Path, judge: JudgeModel | None = None, **kw: Any) -> dict[str, Any]:
    suite = load_suite(suite_path, **kw)
    results: list[CaseResult] = []
    cases = [Case.model_validate(c) for c in CASES]
    results.extend(evaluate_all(Evaluator.from_suite(suite, judge), cases))
    return {r.case_id: r for r in results}


# --- the registry ----------------------------------------------------------------------------


def test_the_registry_lists_every_built_in_in_error_order() -> None:
    assert BUILTIN_CHECKS.names() == BUILTIN_NAMES
    assert BUILTIN_CHECKS.judge_types() == {
        "judge",
        "expected_outcomes",
        "faithfulness",
        "goal_accuracy",
        "graded",
    }
    # every exported model with a `type` literal is registered: a new built-in cannot be
    # exported and forgotten in the table
    exported = [
        getattr(pkg, name) for pkg in (checkweigh.checks, checkweigh.judges) for name in pkg.__all__
    ]
    typed = {
        obj
        for obj in exported
        if isinstance(obj, type) and issubclass(obj, BaseModel) and "type" in obj.model_fields
    }
    assert typed == set(BUILTIN_CHECKS.classes())
    # the YAML keys come from the classes, nested models included (before's step matchers)
    assert {"question", "first", "then", "threshold", "sub_questions", "kind"} <= set(
        BUILTIN_CHECKS.allowed_keys()
    )
    assert "formatter" not in BUILTIN_CHECKS.allowed_keys()  # set from Python only


def test_a_registry_is_a_value_and_adding_a_type_makes_a_new_one() -> None:
    class Refunds(BuiltinCheck):
        type: Literal["refunds"] = "refunds"
        limit: float

        def evaluate(self, case: Case) -> Verdict:
            return passed()

    bigger = BUILTIN_CHECKS.with_types(Refunds)
    assert bigger.get("refunds") is Refunds
    assert "refunds" not in BUILTIN_CHECKS  # nothing leaks into the built-in table
    assert type_name(Refunds) == "refunds"
    assert "limit" in bigger.allowed_keys()
    assert "limit" not in BUILTIN_CHECKS.allowed_keys()

    class Clash(Refunds):
        type: Literal["equals"] = "equals"

    with pytest.raises(ValueError, match="check type 'equals' is already Equals"):
        BUILTIN_CHECKS.with_types(Clash)

    class Untyped(BaseModel):
        def evaluate(self, case: Case) -> bool:
            return True

    with pytest.raises(TypeError, match="needs a field `type: Literal"):
        CheckRegistry.of(Untyped)


def test_needs_judge_is_read_from_evaluate() -> None:
    assert [n for n in BUILTIN_NAMES if BUILTIN_CHECKS.needs_judge(n)] == [
        "judge",
        "expected_outcomes",
        "faithfulness",
        "goal_accuracy",
        "graded",
    ]
    assert not BUILTIN_CHECKS.needs_judge("no_such_type")
    assert not needs_judge(BuiltinCheck)


# --- a suite's own class, passed in ------------------------------------------------------------


class RefundLimit(BuiltinCheck):
    """``type: refund_limit``: no successful refund above ``limit``."""

    type: Literal["refund_limit"] = "refund_limit"
    limit: float

    def evaluate(self, case: Case) -> Verdict:
        amounts = [
            s.arguments.get("amount", 0)
            for s in case.trace
            if s.name == "issue_refund" and s.error is None and isinstance(s.arguments, dict)
        ]
        over = [a for a in amounts if a > self.limit]
        return failed(f"refund of {over[0]:g} over {self.limit:g}") if over else passed()


def test_a_class_passed_in_is_seen_by_the_loader(tmp_path: Path) -> None:
    path = write(tmp_path, "refund_limit")
    by_id = verdicts_of(path, extra_types=[RefundLimit])
    assert by_id["over-limit"].verdicts["refund_limit"] == failed("refund of 840 over 500")
    assert by_id["over-limit-but-rejected"].verdicts["refund_limit"].passed
    assert by_id["over-limit"].results["policy"].score == pytest.approx(0.2)

    # its keys are the allowed ones, with the usual hint and line
    typo = write(tmp_path / "typo", "refund_limit", **{"limit: 500": "limt: 500"})
    with pytest.raises(SuiteError) as err:
        load_suite(typo, extra_types=[RefundLimit])
    assert str(err.value) == (
        f"{typo}:6: checks.refund_limit.limt: unknown key 'limt'; did you mean 'limit'?"
    )
    # another suite, loaded without it, does not know the type
    with pytest.raises(SuiteError, match="unknown check type 'refund_limit'; expected one of"):
        load_suite(path)


# --- a user's class by dotted path -----------------------------------------------------------


def test_a_class_by_dotted_path_with_validated_fields(tmp_path: Path) -> None:
    by_id = verdicts_of(write(tmp_path))
    got = {case_id: r.verdicts["refund_limit"] for case_id, r in by_id.items()}
    assert got["within-limit"] == passed("every successful issue_refund is at most 500")
    assert got["over-limit"] == failed("issue_refund of 840 succeeded (limit 500)")
    # a rejected attempt over the limit is not a refund
    assert got["over-limit-but-rejected"].passed
    assert got["no-refund"].state is VerdictState.NOT_APPLICABLE
    assert load_suite(write(tmp_path / "colon", "refund_checks:NoRefundOverLimit")).checks[
        "refund_limit"
    ].check.limit == pytest.approx(500.0)


@pytest.mark.parametrize(
    ("check_type", "edits", "line", "message"),
    [
        (
            "refund_checks.NoRefundOverLimit",
            {"limit: 500": "limt: 500"},
            6,
            "checks.refund_limit.limt: unknown key 'limt'; did you mean 'limit'?",
        ),
        (
            "refund_checks.Lenient",
            {"limit: 500": "limit: 500\n    currency: EUR"},
            7,
            "checks.refund_limit.currency: unknown key 'currency'",
        ),
        (
            "refund_checks.NoRefundOverLimit",
            {"limit: 500": "limit: lots"},
            6,
            "checks.refund_limit.limit: ",
        ),
        (
            "refund_checks.NoRefundOverLimit",
            {"limit: 500": "tool: issue_refund"},
            4,
            "checks.refund_limit.limit: required field is missing",
        ),
        (
            "refund_checks.NoSuchCheck",
            {},
            5,
            "checks.refund_limit.type: module 'refund_checks' has no attribute 'NoSuchCheck'",
        ),
        (
            "airline_policies.checks.NoRefundOverLimit",
            {},
            5,
            "checks.refund_limit.type: cannot import module 'airline_policies.checks'",
        ),
        (
            "refund_checks.not_a_class",
            {},
            5,
            "checks.refund_limit.type: 'refund_checks.not_a_class' is not a check class",
        ),
        (
            "refund_checks.Picky",
            {},
            5,
            "checks.refund_limit.type: 'refund_checks.Picky' raised RuntimeError: "
            "refund policy table is missing",
        ),
    ],
    ids=["typo", "ignored-extra", "wrong-type", "missing", "no-attr", "no-module", "func", "raise"],
)
def test_a_dotted_class_error_is_one_line_with_file_and_line(
    tmp_path: Path, check_type: str, edits: dict[str, str], line: int, message: str
) -> None:
    path = write(tmp_path, check_type, **edits)
    with pytest.raises(SuiteError) as err:
        load_suite(path)
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith(f"{path}:{line}: {message}"), text


# --- a new judge check is one class ----------------------------------------------------------


TONE_MODULE = '''\
"""A new judge check, one class: one call grades politeness and brevity, each a named
verdict; the check's own verdict passes when both do."""

from typing import Literal

from checkweigh.checks import OVERALL
from checkweigh.judges import (
    AnswerError, Checklist, JudgedCheck, JudgeError, JudgeRequest, Message, ask, judge_failure
)
from checkweigh.core import failed, passed


class Tone(JudgedCheck):
    type: Literal["tone"] = "tone"
    audience: str = "an airline customer"

    @property
    def version(self):
        return "tone/1"

    def verdict_names(self):
        return ("polite", "concise")

    async def evaluate(self, case, judge):
        request = JudgeRequest(
            messages=(
                Message(role="system", content="You grade replies."),
                Message(role="user", content=f"For {self.audience}: {case.output}"),
            ),
            schema_name="checklist",
            json_schema=Checklist.model_json_schema(),
            max_tokens=200,
        )
        try:
            answers = (await ask(judge, request, Checklist, lambda c: c.in_order(2))).in_order(2)
        except (JudgeError, AnswerError) as exc:
            return judge_failure(exc)
        named = {
            name: passed(a.reason) if a.verdict == "yes" else failed(a.reason)
            for name, a in zip(self.verdict_names(), answers)
        }
        both = all(v.passed for v in named.values())
        return {OVERALL: passed("polite and concise") if both else failed("tone"), **named}
'''


def tone_class(folder: Path) -> type[BaseModel]:
    """The Tone check, imported from ``folder`` as a suite's own module."""
    (folder / "tone_checks.py").write_text(TONE_MODULE)
    cls = load_object("tone_checks:Tone", [folder])
    assert isinstance(cls, type)
    assert issubclass(cls, BaseModel)
    return cls


TONE_SUITE = """\
name: tone
cases: cases.jsonl
checks:
  tone:
    type: TONE_TYPE
  replied:
    type: word_count
    path: output
    min: 3
rubrics:
  service:
    weights: {tone.polite: 0.5, tone.concise: 0.3, replied: 0.2}
  overall:
    weights: {tone: 1}
"""


def grade(request: JudgeRequest) -> str:
    reply = request.messages[1].content
    polite = "processed" in reply
    return json.dumps(
        {
            "answers": [
                {"index": 1, "verdict": "yes" if polite else "no", "reason": "courteous"},
                {"index": 2, "verdict": "no", "reason": "could be shorter"},
            ]
        }
    )


@pytest.mark.parametrize("tone_type", ["tone", "tone_checks.Tone"])
def test_a_new_judge_check_as_one_class_through_a_suite(tmp_path: Path, tone_type: str) -> None:
    write(tmp_path)
    tone = tone_class(tmp_path)
    assert needs_judge(tone)
    (tmp_path / "suite.yaml").write_text(TONE_SUITE.replace("TONE_TYPE", tone_type))
    extra = [tone] if tone_type == "tone" else []
    suite = load_suite(tmp_path / "suite.yaml", extra_types=extra)
    assert judge_checks(suite.checks) == ["tone"]  # derived from evaluate's judge parameter
    assert suite.checks["tone"].version == "tone/1"

    judge = ScriptedJudge([grade] * len(CASES))
    by_id = verdicts_of(tmp_path / "suite.yaml", judge, extra_types=extra)
    assert len(judge.requests) == len(CASES)  # one call answers all three verdicts
    first = by_id["within-limit"]
    assert first.verdicts["tone.polite"] == passed("courteous")
    assert first.verdicts["tone.concise"] == failed("could be shorter")
    assert first.verdicts["tone"] == failed("tone")
    assert first.results["service"].score == pytest.approx(0.7)
    assert first.results["overall"].score == 0.0

    # without a judge it is skipped, named verdicts too, and the rubric renormalizes
    skipped = verdicts_of(tmp_path / "suite.yaml", extra_types=extra)["within-limit"]
    assert skipped.verdicts["tone.polite"].state is VerdictState.NOT_APPLICABLE
    assert skipped.verdicts["tone"].reason == f"skipped: {NO_JUDGE_HINT}"
    assert skipped.results["service"].score == 1.0


def test_a_rubric_may_weigh_only_named_verdicts_a_check_answers(tmp_path: Path) -> None:
    write(tmp_path)
    tone = tone_class(tmp_path)
    (tmp_path / "suite.yaml").write_text(
        TONE_SUITE.replace("TONE_TYPE", "tone").replace("tone.concise", "tone.brevity")
    )
    with pytest.raises(SuiteError) as err:
        load_suite(tmp_path / "suite.yaml", extra_types=[tone])
    assert str(err.value) == (
        f"{tmp_path / 'suite.yaml'}:12: rubrics.service.weights.tone.brevity: unknown check "
        "'tone.brevity'; the suite defines: tone, replied"
    )


def test_a_field_set_from_python_only_is_not_a_suite_key(tmp_path: Path) -> None:
    write(tmp_path)
    (tmp_path / "suite.yaml").write_text(
        "name: tone\ncases: cases.jsonl\nchecks:\n  polite:\n    type: judge\n"
        "    question: Is the reply polite?\n    formatter: {name: raw}\n"
        "rubrics:\n  service:\n    weights: {polite: 1}\n"
    )
    with pytest.raises(SuiteError) as err:
        load_suite(tmp_path / "suite.yaml")
    assert str(err.value) == (
        f"{tmp_path / 'suite.yaml'}:7: checks.polite.formatter: unknown key 'formatter'"
    )
