"""Untrusted text made inert for a terminal: the one sanitiser every console print goes through.

Case ids, suite, check and rubric names, reasons, agent output, judge names and notes come from
suite files, cases files and agents. On a terminal they must neither be read as rich markup
(``[/]`` crashes the report, ``[link=...]`` makes a link the data chose) nor write control
characters (an ESC sequence retitles or clears the terminal, ``\\r`` and ``\\b`` overwrite what
was printed, bidi overrides reorder it). :func:`clean` shows such characters as visible
escapes (``\\x1b``, ``\\u202e``); :func:`plain` wraps the result in a :class:`rich.text.Text`,
which rich never parses for markup. The Markdown, HTML and JUnit writers use :func:`clean` too.
JSON keeps the exact data: :func:`json_inert` only writes those characters as ``\\u`` escapes.
"""

from __future__ import annotations

import re

from rich.text import Text

# C0 and C1 controls and DEL; the bidi embeddings, overrides and isolates (and the marks); the
# invisible zero-width space, word joiner and invisible operators; line and paragraph
# separators; the BOM; interlinear annotations; tag characters (used to hide text from readers);
# lone surrogates (unencodable: printing one crashes) and the two non-characters.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f"
    "\ud800-\udfff\ufeff\ufff9-\ufffb\ufffe\uffff\U000e0000-\U000e007f]"
)
_UNSAFE_BUT_LINES = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f"
    "\ud800-\udfff\ufeff\ufff9-\ufffb\ufffe\uffff\U000e0000-\U000e007f]"
)


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def clean(text: object, *, lines: bool = False) -> str:
    """``text`` as a string whose control and invisible formatting characters are shown escaped.

    Args:
        text: any value; it is converted with ``str``.
        lines: keep newlines and tabs (multi-line text such as a JUnit failure body); by
            default they are escaped too, so that one value stays on one line and cannot forge
            the lines that follow it.

    Returns:
        The text, unchanged when it holds nothing unsafe (the common case, no copy).
    """
    s = text if isinstance(text, str) else str(text)
    pattern = _UNSAFE_BUT_LINES if lines else _UNSAFE
    if pattern.search(s) is None:
        return s
    return pattern.sub(_visible, s)


def plain(text: object, style: str = "") -> Text:
    """``text`` cleaned and wrapped as rich Text: printed literally, never read as markup."""
    return Text(clean(text), style=style)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:  # JSON spells it as a UTF-16 surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def json_inert(document: str) -> str:
    """A JSON document with every control, bidi and invisible character of its strings written
    as a ``\\u`` escape: the same data once parsed, and nothing raw for a terminal that shows
    the file. JSON's own structure is ASCII, so such a character can only be inside a string;
    newlines and tabs are left alone (encoders escape them inside strings and indent with them).
    """
    if _UNSAFE_BUT_LINES.search(document) is None:
        return document
    return _UNSAFE_BUT_LINES.sub(_json_escape, document)
