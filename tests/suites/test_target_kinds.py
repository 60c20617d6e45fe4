"""The target kinds and reply formats come from one table each: every built-in kind owns its
spec, checks and driver, and a block built from Python is validated by its kind too."""

from __future__ import annotations

import typing

import pytest
from pydantic import ValidationError

from checkweigh.importers import FORMATS
from checkweigh.suites import (
    TARGET_KINDS,
    TARGETS,
    CommandTargetSpec,
    HttpTargetSpec,
    ReplySpec,
    SuiteSpec,
    TargetSpecBase,
)

BASE = {
    "name": "s",
    "cases": "c.jsonl",
    "checks": {"c": {}},
    "rubrics": {"r": {"weights": {"c": 1}}},
}


@pytest.mark.parametrize("name", TARGETS.builtin_names())
def test_each_built_in_kind_owns_a_spec_named_for_it(name: str) -> None:
    kind = TARGETS.get(name)
    assert issubclass(kind.spec, TargetSpecBase)
    assert typing.get_args(kind.spec.model_fields["kind"].annotation) == (name,)
    assert callable(kind.check)
    assert callable(kind.build)


def test_the_tables_hold_the_built_ins_and_the_old_names_follow_them() -> None:
    assert TARGETS.builtin_names() == ("python", "http", "command")
    assert TARGETS.builtin_names() == TARGET_KINDS
    assert FORMATS.builtin_names() == ("openai", "openai-responses", "anthropic", "otel", "mapping")


def test_a_target_block_given_from_python_is_validated_by_its_kind() -> None:
    spec = SuiteSpec.model_validate(
        {**BASE, "target": {"kind": "http", "url": "http://127.0.0.1:9/a", "retries": 1}}
    )
    assert isinstance(spec.target, HttpTargetSpec)
    assert spec.target.retries == 1
    spec = SuiteSpec.model_validate({**BASE, "target": {"kind": "command", "command": "a b"}})
    assert isinstance(spec.target, CommandTargetSpec)
    assert spec.target.command == ["a", "b"]
    with pytest.raises(ValidationError, match="unknown target kind 'lambda'; expected one of "):
        SuiteSpec.model_validate({**BASE, "target": {"kind": "lambda"}})
    with pytest.raises(ValidationError, match=r"urll: unknown key 'urll'"):
        SuiteSpec.model_validate({**BASE, "target": {"kind": "http", "urll": "x"}})


def test_a_reply_format_is_checkweigh_text_or_a_log_format_that_reads_replies() -> None:
    for name in ("checkweigh", "text", *FORMATS.builtin_names()):
        options = {"mapping": {"messages": "m"}} if name == "mapping" else {}
        assert ReplySpec.model_validate({"format": name, **options}).format == name
    with pytest.raises(ValidationError) as caught:
        ReplySpec(format="gemini")
    assert (
        "unknown reply format 'gemini'; expected one of checkweigh, text, openai, "
        "openai-responses, anthropic, otel, mapping"
    ) in str(caught.value)
