"""The sanitiser behind every output, on generated text: nothing unsafe survives, safe text is
untouched, JSON keeps the exact data, and Markdown never links what the data holds."""

from __future__ import annotations

import json
import re

import cmarkgfm
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from checkweigh.reports import clean, escape_md, json_inert, plain

UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f"
    "\ud800-\udfff\ufeff\ufff9-\ufffb\ufffe\uffff\U000e0000-\U000e007f]"
)
# pieces that links, markup and terminal escapes are made of, so that generated text is hostile
PIECES = st.sampled_from(
    [
        "http", "https", "ftp", "mailto", "xmpp", "javascript", ":", "//", "/", "www", "www.",
        ".", "com", ".com", ".py", "evil", "example", "@", "#", "1", " ", "\n", "\t", "\r",
        "[", "]", "(", ")", "<", ">", "&", "!", "*", "_", "`", "|", "~", "$", "\\", "localhost",
        "\x1b", "\x1b]0;", "\x07", "\x9b", "\u202e", "\u2066", "\u200b", "\U000e0041", "é",
    ]
)  # fmt: skip
HOSTILE_TEXT = st.lists(PIECES, max_size=24).map("".join)
MD = MarkdownIt("commonmark", {"linkify": True}).enable(["linkify", "table"])


@given(st.text())
def test_clean_leaves_nothing_unsafe_and_safe_text_as_it_is(text: str) -> None:
    shown = clean(text)
    assert not UNSAFE.search(shown)
    if not UNSAFE.search(text):
        assert shown is text
    assert plain(text).plain == shown


@given(st.text())
def test_clean_with_lines_keeps_only_newlines_and_tabs(text: str) -> None:
    shown = clean(text, lines=True)
    assert not UNSAFE.search(shown.replace("\n", "").replace("\t", ""))
    assert shown.count("\n") == text.count("\n")


JSON_DATA = st.recursive(
    st.text() | st.integers() | st.none(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@given(JSON_DATA)
def test_json_inert_keeps_the_data_and_nothing_raw(data: object) -> None:
    for document in (json.dumps(data, ensure_ascii=False), json.dumps(data, indent=2)):
        inert = json_inert(document)
        assert json.loads(inert) == data
        assert not UNSAFE.search(inert.replace("\n", ""))


@settings(max_examples=300)
@given(HOSTILE_TEXT)
def test_markdown_never_links_and_never_carries_control_characters(text: str) -> None:
    cell = escape_md(text)
    assert not UNSAFE.search(cell.replace("\u200b", ""))
    table = f"| a |\n| --- |\n| {cell} |\n"
    for html in (MD.render(table), cmarkgfm.github_flavored_markdown_to_html(table)):
        assert "<a " not in html, (text, cell, html)
        assert "<table>" in html  # one cell: the data cannot break the table
        assert html.count("<td>") == 1, (text, cell, html)
