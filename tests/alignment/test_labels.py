"""Loading human labels: both formats read the same labels; every mistake is one line naming
the file, the line, the field and what was expected."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkweigh.alignment import LabelFileError, load_labels
from checkweigh.core import HumanLabel
from checkweigh.errors import InputError

PROPS = settings(max_examples=150, deadline=None, database=None)


def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


def _jsonl(*rows: Any) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


def test_a_csv_file_with_every_spelling_of_yes_and_no(tmp_path: Path) -> None:
    text = (
        "\ufeffCase, Check ,LABEL,repeat,note\r\n"  # a BOM and a spreadsheet's header
        "a,tone,yes,,\r\n"
        "b,tone, No ,,\r\n"
        "c,tone,TRUE,0,\r\n"
        "d,tone,false,2,\r\n"
        "\r\n"
        "e,tone,1,,\r\n"
        "f,tone,0,,\r\n"
        'g,tone,Pass,,"two\r\nlines, one note"\r\n'
        "h,tone,fail,,\r\n"
        "a,tone,yes,,said twice alike: kept once\r\n"
    )
    labels = load_labels(_write(tmp_path, "labels.csv", text))
    assert labels == [
        HumanLabel("a", "tone", True),
        HumanLabel("b", "tone", False),
        HumanLabel("c", "tone", True, 0),
        HumanLabel("d", "tone", False, 2),
        HumanLabel("e", "tone", True),
        HumanLabel("f", "tone", False),
        HumanLabel("g", "tone", True, None, "two\r\nlines, one note"),
        HumanLabel("h", "tone", False),
    ]


def test_a_csv_file_needs_only_the_three_columns_in_any_order(tmp_path: Path) -> None:
    path = _write(tmp_path, "l.csv", "label,check,case\nyes,tone,a\n")
    assert load_labels(path) == [HumanLabel("a", "tone", True)]


def test_a_jsonl_file(tmp_path: Path) -> None:
    text = _jsonl(
        {"case": "a", "check": "tone", "label": "yes"},
        {"case": 7, "check": "tone", "label": False, "repeat": 1},
        "",
        {"case": "c", "check": "tone", "label": 1, "repeat": None, "note": "ok"},
        {"case": "d", "check": "tone", "label": "FAIL", "repeat": "2", "note": None},
    )
    assert load_labels(_write(tmp_path, "labels.jsonl", text)) == [
        HumanLabel("a", "tone", True),
        HumanLabel("7", "tone", False, 1),
        HumanLabel("c", "tone", True, None, "ok"),
        HumanLabel("d", "tone", False, 2),
    ]


ids = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1
).filter(lambda s: s == s.strip())
keys = st.tuples(ids, ids, st.one_of(st.none(), st.integers(0, 50)))


@PROPS
@given(st.lists(keys, unique=True, min_size=1, max_size=15), st.data())
def test_csv_and_jsonl_read_back_the_labels_written(
    tmp_path_factory: pytest.TempPathFactory, chosen: list[Any], data: st.DataObject
) -> None:
    labels = [
        HumanLabel(case, check, data.draw(st.booleans()), repeat, data.draw(ids | st.just("")))
        for case, check, repeat in chosen
    ]
    folder = tmp_path_factory.mktemp("labels")
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["case", "check", "label", "repeat", "note"])
    for label in labels:
        answer = data.draw(st.sampled_from(["yes", "True", "1", "PASS"] if label.label else ["no"]))
        rep = "" if label.repeat is None else str(label.repeat)
        writer.writerow([label.case_id, label.check, answer, rep, label.note])
    rows = [
        {"case": x.case_id, "check": x.check, "label": x.label, "repeat": x.repeat, "note": x.note}
        for x in labels
    ]
    assert load_labels(_write(folder, "l.csv", buffer.getvalue())) == labels
    assert load_labels(_write(folder, "l.jsonl", _jsonl(*rows))) == labels


CSV_HEADER = "case,check,label,repeat\n"

CSV_ERRORS = [
    (
        "",
        "l.csv: is empty; expected a header row of case, check, label (optional repeat, note, "
        "grade, reviewer)",
    ),
    ("\n\n", "l.csv: is empty; expected a header row of case, check, label"),
    (CSV_HEADER, "l.csv: holds no labels; expected rows of case, check, label"),
    (
        "case,check,answer\n",
        "l.csv:1: header: unknown column 'answer'; expected case, check, label (optional "
        "repeat, note, grade, reviewer)",
    ),
    ("case,check\n", "l.csv:1: header: missing column label; expected case, check, label"),
    ("case,check,label,case\n", "l.csv:1: header: column 'case' appears twice"),
    (
        CSV_HEADER + "a,tone,yes,0\nb,tone,yes\n",
        "l.csv:3: expected 4 fields (case, check, label, repeat), got 3",
    ),
    (CSV_HEADER + " ,tone,yes,\n", "l.csv:2: case: expected a case id (non-empty text), got ' '"),
    (CSV_HEADER + "a,,yes,\n", "l.csv:2: check: expected a check name (non-empty text), got ''"),
    (
        CSV_HEADER + "a,tone,maybe,\n",
        "l.csv:2: label: expected yes/no, true/false, 1/0 or pass/fail, got 'maybe'",
    ),
    (CSV_HEADER + "a,tone,,\n", "l.csv:2: label: expected yes/no, true/false, 1/0 or pass/fail"),
    (
        CSV_HEADER + "a,tone,yes,-1\n",
        "l.csv:2: repeat: expected a whole number >= 0 (repeats count from 0) or nothing, got '-1'",
    ),
    (CSV_HEADER + "a,tone,yes,1.5\n", "l.csv:2: repeat: expected a whole number >= 0"),
    (CSV_HEADER + "a,tone,yes,²\n", "l.csv:2: repeat: expected a whole number >= 0"),
    (
        CSV_HEADER + 'a,"to\nne",yes,\nb,tone,yes,1\nb,tone,no,1\n',
        "l.csv:5: label: case 'b', check 'tone', repeat 1 is labelled yes on line 4 and no "
        "here; expected one label",
    ),
    (
        CSV_HEADER + "a,tone,no,\na,tone,yes,\n",
        "l.csv:3: label: case 'a', check 'tone' is labelled no on line 2 and yes here",
    ),
    (CSV_HEADER + 'a,"tone"x,yes,\n', "l.csv:2: invalid CSV: ',' expected after '\"'"),
]


@pytest.mark.parametrize(("text", "message"), CSV_ERRORS)
def test_csv_mistakes(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, "l.csv", text)
    with pytest.raises(LabelFileError) as info:
        load_labels(path)
    line = info.value.one_line()
    assert line.startswith(str(tmp_path) + "/")
    assert line.removeprefix(str(tmp_path) + "/").startswith(message)
    assert "\n" not in line
    assert isinstance(info.value, InputError)


ROW = {"case": "a", "check": "tone", "label": "yes"}

JSONL_ERRORS = [
    ("", "l.jsonl: holds no labels; expected rows of case, check, label"),
    (_jsonl(ROW, "{not json"), "l.jsonl:2: invalid JSON: Expecting property name"),
    (
        _jsonl(["a", "tone", "yes"]),
        "l.jsonl:1: expected a JSON object with keys case, check, label (optional repeat, note, "
        "grade, reviewer), got list",
    ),
    (_jsonl({**ROW, "answer": "yes"}), "l.jsonl:1: answer: unknown key; expected case, check"),
    (_jsonl({"case": "a", "label": "yes"}), "l.jsonl:1: check: missing; expected case, check"),
    (
        _jsonl({**ROW, "case": True}),
        "l.jsonl:1: case: expected a case id (non-empty text), got True",
    ),
    (_jsonl({**ROW, "case": ["a"]}), "l.jsonl:1: case: expected a case id"),
    (
        _jsonl({**ROW, "check": 3}),
        "l.jsonl:1: check: expected a check name (non-empty text), got 3",
    ),
    (
        _jsonl({**ROW, "label": 2}),
        "l.jsonl:1: label: expected yes/no, true/false, 1/0 or pass/fail",
    ),
    (
        _jsonl({**ROW, "label": None}),
        "l.jsonl:1: label: expected yes/no, true/false, 1/0 or pass/fail, got None",
    ),
    (_jsonl({**ROW, "label": 1.0}), "l.jsonl:1: label: expected yes/no"),
    (_jsonl({**ROW, "repeat": True}), "l.jsonl:1: repeat: expected a whole number >= 0"),
    (_jsonl({**ROW, "repeat": -2}), "l.jsonl:1: repeat: expected a whole number >= 0"),
    (_jsonl({**ROW, "repeat": 0.5}), "l.jsonl:1: repeat: expected a whole number >= 0"),
    (_jsonl({**ROW, "note": 5}), "l.jsonl:1: note: expected text, got 5"),
    (
        _jsonl(ROW, "", {**ROW, "label": "no"}),
        "l.jsonl:3: label: case 'a', check 'tone' is labelled yes on line 1 and no here",
    ),
]


@pytest.mark.parametrize(("text", "message"), JSONL_ERRORS)
def test_jsonl_mistakes(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, "l.jsonl", text)
    with pytest.raises(LabelFileError) as info:
        load_labels(path)
    line = info.value.one_line()
    assert line.removeprefix(str(tmp_path) + "/").startswith(message), line
    assert "\n" not in line


def test_file_mistakes(tmp_path: Path) -> None:
    cases = {
        tmp_path / "labels.txt": "labels.txt: expected a .csv or .jsonl labels file, got .txt",
        tmp_path / "labels": "labels: expected a .csv or .jsonl labels file, got no extension",
        tmp_path / "gone.csv": "gone.csv: cannot read: No such file or directory",
        _write(tmp_path, "latin.csv", "case,check,label\ncaf\xe9,tone,yes\n".encode("latin-1")): (
            "latin.csv:2: cannot read: not UTF-8 text: byte 0xe9 at column 4 "
            "(invalid continuation byte); expected UTF-8"
        ),
        _write(tmp_path, "bom.csv", b"\xef\xbb\xbfcase,check,label\nc1,tone,yes\n\xff,tone,no\n"): (
            "bom.csv:3: cannot read: not UTF-8 text: byte 0xff at column 1 (invalid start byte); "
            "expected UTF-8"
        ),
    }
    (tmp_path / "folder.jsonl").mkdir()
    cases[tmp_path / "folder.jsonl"] = (
        "folder.jsonl: cannot read: is a folder; expected a labels file"
    )
    for path, message in cases.items():
        with pytest.raises(LabelFileError) as info:
            load_labels(path)
        assert info.value.one_line() == f"{tmp_path}/{message}"


def test_a_jsonl_label_with_an_escaped_lone_surrogate_reads_as_its_visible_escape(
    tmp_path: Path,
) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(
        '{"case": "c\\ud800", "check": "polite", "label": "no", "note": "rude \\udc80"}\n'
    )
    (label,) = load_labels(path)
    assert (label.case_id, label.check, label.label) == ("c\\ud800", "polite", False)
    assert label.note == "rude \\udc80"
