"""Reading user files as UTF-8 text: a BOM is accepted, anything else names its line and column,
and echoed values are quoted so a file's control characters never reach the terminal raw."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import CheckweighError

BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


class TextFileError(CheckweighError, ValueError):
    """A file that cannot be read as text, with the 1-based line where that was found."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def decode_utf8(data: bytes, *, first_line: int = 1, column_offset: int = 0) -> str:
    """``data`` as text; a leading UTF-8 BOM is dropped.

    ``first_line`` and ``column_offset`` place ``data`` in its file (a JSONL line, say), so the
    error names the line and byte column of the file.

    Raises:
        TextFileError: the bytes are not UTF-8.
    """
    if data.startswith(BOM):
        data = data[len(BOM) :]
        column_offset += len(BOM)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if first_line == 1 and column_offset == 0 and data.startswith(_UTF16_BOMS):
            raise TextFileError("the file is UTF-16 text; expected UTF-8", 1) from None
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = first_line + data.count(b"\n", 0, exc.start)
        column = exc.start - line_start + 1 + (column_offset if line == first_line else 0)
        raise TextFileError(
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} at column {column} ({exc.reason}); "
            "expected UTF-8",
            line,
        ) from None


def read_text(path: Path, *, limit: int, what: str) -> str:
    """The whole of a small UTF-8 file (a suite, a labels file, a YAML or JSON cases file).

    Raises:
        FileNotFoundError: there is no such file.
        TextFileError: a folder or a special file, larger than ``limit`` bytes, or not UTF-8.
        OSError: it cannot be read.
    """
    if path.is_dir():
        raise TextFileError(f"is a folder; expected a {what}")
    if path.exists() and not path.is_file():
        raise TextFileError(f"is not a regular file; expected a {what}")
    with path.open("rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise TextFileError(f"is larger than {limit // 2**20} MiB; expected a {what}")
    return decode_utf8(data)


_PLAIN_NAME = re.compile(r"[\w.-]+\Z")


def inert(text: str) -> str:
    """``text`` with control, format and separator characters escaped (``\\x1b``, ``\\u202e``),
    so a message that quotes a file can be printed as is."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else _escape(c) for c in text)


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown(value: object, limit: int = 60) -> str:
    """A value from a file as a message quotes it: ``repr`` (quoted, escaped), shortened."""
    text = inert(repr(value))  # repr escapes strings; other values' reprs may hold text too
    return text if len(text) <= limit else text[: limit - 3] + "..."


def key_text(key: object) -> str:
    """A mapping key as a field path shows it: plain when it is a simple name, quoted if not."""
    if isinstance(key, str) and len(key) <= 60 and _PLAIN_NAME.match(key):
        return key
    return shown(key)
