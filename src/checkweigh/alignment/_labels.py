"""Human labels from CSV (with a header) or JSONL: strict, with one-line errors naming the
file, the line and the field."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from .._text import safe_data
from ..core import HumanLabel
from ..errors import InputError
from ..suites import TextFileError, key_text, read_text, shown

REQUIRED = ("case", "check", "label")
OPTIONAL = ("repeat", "note", "grade")
STORED = ("reviewer", "criterion", "evidence", "run", "judge", "verdict", "created_at")
"""What ``checkweigh labels export`` adds: who, the fingerprints, the run and the verdict seen."""
_COLUMNS = "case, check, label (optional repeat, note, grade, reviewer)"

_ANSWERS = {
    "yes": True,
    "true": True,
    "1": True,
    "pass": True,
    "no": False,
    "false": False,
    "0": False,
    "fail": False,
}
LABELS_FILE_LIMIT = 512 * 2**20
"""Labels files are read whole; a bigger one (or ``/dev/zero``) is refused."""
_EXPECTED_LABEL = "expected yes/no, true/false, 1/0 or pass/fail"
_EXPECTED_GRADE = "expected a grade from 0 to 5 (a number) or nothing"


class LabelFileError(InputError):
    """A labels file, or one label in it, that cannot be read."""


_Fail = Callable[[str, str], LabelFileError]
"""Builds the error for a field: (field, what was expected)."""


class LabelLine(NamedTuple):
    """One label of a file, with its line and what an export adds to it."""

    line: int
    label: HumanLabel
    extra: dict[str, str]
    """The optional export columns given (reviewer, criterion, evidence, run, judge, verdict,
    created_at), as text."""


def load_labels(path: str | Path) -> list[HumanLabel]:
    """Every label of a ``.csv`` or ``.jsonl`` file, in file order.

    The same case, check and repeat labelled twice alike by one reviewer counts once;
    labelled differently, it is an error.

    Raises:
        LabelFileError: the file cannot be read, or a line is not a valid label.
    """
    return [line.label for line in load_label_file(path)]


def load_label_file(path: str | Path) -> list[LabelLine]:
    """Every label of a ``.csv`` or ``.jsonl`` file with its line and export columns.

    Raises:
        LabelFileError: the file cannot be read, or a line is not a valid label.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        rows = _csv_rows
    elif suffix in (".jsonl", ".ndjson"):
        rows = _jsonl_rows
    else:
        raise LabelFileError(
            f"expected a .csv or .jsonl labels file, got {path.suffix or 'no extension'}",
            file=path,
        )
    labels: list[LabelLine] = []
    first_line: dict[tuple[str, ...], tuple[int, HumanLabel]] = {}
    try:
        text = read_text(path, limit=LABELS_FILE_LIMIT, what="labels file")
    except FileNotFoundError as exc:
        raise LabelFileError(f"cannot read: {exc.strerror}", file=path) from None
    except TextFileError as exc:
        raise LabelFileError(f"cannot read: {exc}", file=path, line=exc.line) from None
    except OSError as exc:
        raise LabelFileError(f"cannot read: {exc.strerror or exc}", file=path) from None
    with io.StringIO(text, newline="") as fh:
        for line, label, extra in rows(path, fh):
            key = (
                label.case_id,
                label.check,
                str(label.repeat),
                extra.get("reviewer", ""),
                extra.get("evidence", ""),
                extra.get("run", ""),
            )
            if key in first_line:
                earlier, before = first_line[key]
                if (before.label, before.grade) != (label.label, label.grade):
                    raise LabelFileError(
                        f"case {shown(label.case_id)}, check {shown(label.check)}"
                        + (f", repeat {label.repeat}" if label.repeat is not None else "")
                        + f" is labelled {_word(before)} on line {earlier} and "
                        f"{_word(label)} here; expected one label",
                        file=path,
                        line=line,
                        field="label",
                    )
                continue
            first_line[key] = (line, label)
            labels.append(LabelLine(line, label, extra))
    if not labels:
        raise LabelFileError(f"holds no labels; expected rows of {_COLUMNS}", file=path)
    return labels


def _word(label: HumanLabel) -> str:
    word = "yes" if label.label else "no"
    return word if label.grade is None else f"{word} (grade {label.grade:g})"


_Row = tuple[int, HumanLabel, dict[str, str]]


def _csv_rows(path: Path, fh: Any) -> Iterator[_Row]:
    reader = csv.reader(fh, strict=True)
    try:
        header = next(reader, None)
        while header is not None and not any(cell.strip() for cell in header):
            header = next(reader, None)  # blank lines before the header
        if header is None:
            raise LabelFileError(f"is empty; expected a header row of {_COLUMNS}", file=path)
        columns = [cell.strip().lower() for cell in header]
        _check_columns(columns, path, reader.line_num)
        end = reader.line_num
        for row in reader:
            start, end = end + 1, reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(columns):
                raise LabelFileError(
                    f"expected {len(columns)} fields ({', '.join(columns)}), got {len(row)}",
                    file=path,
                    line=start,
                )
            raw = dict(zip(columns, row, strict=True))
            yield start, _label(raw, path, start), _extra(raw, path, start)
    except csv.Error as exc:
        raise LabelFileError(f"invalid CSV: {exc}", file=path, line=reader.line_num) from None


def _check_columns(columns: list[str], path: Path, line: int) -> None:
    for name in columns:
        if name not in REQUIRED + OPTIONAL + STORED:
            raise LabelFileError(
                f"unknown column {shown(name)}; expected {_COLUMNS}",
                file=path,
                line=line,
                field="header",
            )
        if columns.count(name) > 1:
            raise LabelFileError(
                f"column {name!r} appears twice", file=path, line=line, field="header"
            )
    missing = [name for name in REQUIRED if name not in columns]
    if missing:
        raise LabelFileError(
            f"missing column {', '.join(missing)}; expected {_COLUMNS}",
            file=path,
            line=line,
            field="header",
        )


def _jsonl_rows(path: Path, fh: Any) -> Iterator[_Row]:
    for line, text in enumerate(fh, start=1):
        if not text.strip():
            continue
        try:
            raw = safe_data(json.loads(text))  # a "\ud800" escape is a lone surrogate
        except json.JSONDecodeError as exc:
            raise LabelFileError(f"invalid JSON: {exc.msg}", file=path, line=line) from None
        except RecursionError:
            raise LabelFileError("invalid JSON: nested too deeply", file=path, line=line) from None
        except ValueError as exc:  # an integer longer than Python converts
            raise LabelFileError(f"invalid JSON: {exc}", file=path, line=line) from None
        if not isinstance(raw, dict):
            raise LabelFileError(
                f"expected a JSON object with keys {_COLUMNS}, got {type(raw).__name__}",
                file=path,
                line=line,
            )
        for key in raw:
            if key not in REQUIRED + OPTIONAL + STORED:
                raise LabelFileError(
                    f"unknown key; expected {_COLUMNS}", file=path, line=line, field=key_text(key)
                )
        for key in REQUIRED:
            if key not in raw:
                raise LabelFileError(
                    f"missing; expected {_COLUMNS}", file=path, line=line, field=key
                )
        yield line, _label(raw, path, line), _extra(raw, path, line)


def _label(raw: dict[str, Any], path: Path, line: int) -> HumanLabel:
    def fail(field: str, expected: str) -> LabelFileError:
        return LabelFileError(
            f"{expected}, got {shown(raw.get(field))}", file=path, line=line, field=field
        )

    case = raw["case"]
    if isinstance(case, int) and not isinstance(case, bool):
        case = str(case)
    if not isinstance(case, str) or not case.strip():
        raise fail("case", "expected a case id (non-empty text)")
    check = raw["check"]
    if not isinstance(check, str) or not check.strip():
        raise fail("check", "expected a check name (non-empty text)")
    grade = _grade(raw.get("grade"), fail)
    if grade is not None and _blank(raw["label"]):
        # a graded metric's pass depends on a threshold the labeller may not have seen: the
        # yes/no is theirs to give, never inferred from the grade
        raise fail("label", f"{_EXPECTED_LABEL} beside the grade (it is not derived from it)")
    return HumanLabel(
        case_id=case.strip(),
        check=check.strip(),
        label=_answer(raw["label"], fail),
        repeat=_repeat(raw.get("repeat"), fail),
        note=_note(raw.get("note"), fail),
        grade=grade,
    )


def _extra(raw: dict[str, Any], path: Path, line: int) -> dict[str, str]:
    out = {}
    for name in STORED:
        value = raw.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        if not isinstance(value, str):
            raise LabelFileError(
                f"expected text, got {shown(value)}", file=path, line=line, field=name
            )
        out[name] = value.strip()
    verdict = out.get("verdict")
    if verdict is not None and verdict not in ("yes", "no"):
        raise LabelFileError(
            f"expected yes or no, got {shown(verdict)}", file=path, line=line, field="verdict"
        )
    return out


def _answer(value: Any, fail: _Fail) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _ANSWERS:
        return _ANSWERS[value.strip().lower()]
    raise fail("label", _EXPECTED_LABEL)


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _grade(value: Any, fail: _Fail) -> float | None:
    if _blank(value):
        return None
    number: Any = value
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise fail("grade", _EXPECTED_GRADE) from None
    if isinstance(number, bool) or not isinstance(number, int | float):
        raise fail("grade", _EXPECTED_GRADE)
    if not 0 <= number <= 5:  # NaN fails this too
        raise fail("grade", _EXPECTED_GRADE)
    return float(number)


def _repeat(value: Any, fail: _Fail) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    number: Any = value
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdecimal():
        number = int(value.strip())
    if isinstance(number, bool) or not isinstance(number, int) or number < 0:
        raise fail("repeat", "expected a whole number >= 0 (repeats count from 0) or nothing")
    return number


def _note(value: Any, fail: _Fail) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise fail("note", "expected text")
    return value.strip()
