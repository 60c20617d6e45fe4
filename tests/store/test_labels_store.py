"""Labels in the store, on SQLite and PostgreSQL: one label per reviewer and item (a later one
replaces it), two reviewers kept side by side, labels without evidence bound to their run and
repeat, and any text (lone surrogates, control characters) kept."""

from __future__ import annotations

from checkweigh.core import Label, LabelSource
from checkweigh.store import Store, add_labels, count_labels, read_labels


def _label(**over: object) -> Label:
    fields: dict[str, object] = {
        "check": "tone",
        "case_id": "s01",
        "label": True,
        "reviewer": "ann",
        "criterion": "c" * 32,
        "evidence": "e" * 32,
        "run_id": "run-1",
        "repeat": 0,
        "judge": "openai:gpt-4o-mini",
        "verdict": "yes",
        "source": LabelSource.UI,
    }
    fields.update(over)
    return Label.model_validate(fields)


def test_a_reviewer_relabelling_an_item_replaces_the_label_and_a_second_reviewer_adds_one(
    db_url: str,
) -> None:
    with Store(db_url) as store:
        add_labels(store, [_label(), _label(case_id="s02", label=False)])
        # the same item, seen again in a later run: ann changes her mind, bo labels it too
        add_labels(store, [_label(label=False, note="on second look: curt", run_id="run-2")])
        add_labels(store, [_label(reviewer="bo")])
        labels = read_labels(store)
        assert count_labels(store) == 3
        by = {(label.case_id, label.reviewer): label for label in labels}
        assert set(by) == {("s01", "ann"), ("s02", "ann"), ("s01", "bo")}
        assert by["s01", "ann"].label is False
        assert by["s01", "ann"].note == "on second look: curt"
        assert by["s01", "ann"].run_id == "run-2"
        assert by["s01", "bo"].label is True
        assert all(label.created_at is not None for label in labels)
        assert read_labels(store, checks=["other"]) == []
        assert {label.case_id for label in read_labels(store, case_ids=["s02"])} == {"s02"}


def test_labels_without_evidence_are_kept_per_run_and_repeat(db_url: str) -> None:
    with Store(db_url) as store:
        bound = {"evidence": None, "check": "correct_time"}
        add_labels(store, [_label(**bound, repeat=0), _label(**bound, repeat=1)])
        add_labels(store, [_label(**bound, repeat=1, label=False)])
        add_labels(store, [_label(**bound, repeat=1, run_id="run-2")])
        rows = sorted((lb.run_id, lb.repeat, lb.label) for lb in read_labels(store))
        assert rows == [("run-1", 0, True), ("run-1", 1, False), ("run-2", 1, True)]


def test_any_text_is_kept(db_url: str) -> None:
    odd = "bad \udc80 surrogate\x1b[31m red\x00 nul"
    with Store(db_url) as store:
        add_labels(store, [_label(note=odd, reviewer="r\ud800", case_id="c\udfff")])
        (label,) = read_labels(store)
        # stored as their visible escapes: what the person wrote, never a crash
        assert "\\udc80" in label.note
        assert label.reviewer == "r\\ud800"
        assert label.case_id == "c\\udfff"
        # PostgreSQL text holds no NUL: U+FFFD stands for it, as in the results' case ids
        nul = "\x00" if store.engine.dialect.name == "sqlite" else "\ufffd"
        assert label.note.endswith(f"red{nul} nul")
