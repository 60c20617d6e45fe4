"""The comparison's pull-request comment: hostile case ids, check names and reasons stay text,
and the only links are the case pages built from a checked server URL."""

from __future__ import annotations

import re
from urllib.parse import unquote

import cmarkgfm
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from checkweigh.core import (
    CaseChange,
    CaseChangeKind,
    CheckDelta,
    CompareVerdict,
    Comparison,
    SuiteDelta,
)
from checkweigh.errors import InputError
from checkweigh.reports import case_url, comparison_markdown, server_url

PIECES = st.sampled_from(
    [
        "http", "https", "javascript", ":", "//", "/", "www.", ".com", "@", "#", "1", " ", "\n",
        "\r", "[", "]", "(", ")", "<", ">", "<script>", "&", "!", "*", "_", "`", "|", "~", "$",
        "\\", "%", "%2F", "?", "\x1b]0;", "\u202e", "\u200b", "é", "](javascript:alert(1))",
    ]
)  # fmt: skip
HOSTILE = st.lists(PIECES, min_size=1, max_size=16).map("".join)
SERVER = "http://127.0.0.1:8000/checkweigh"
MD = MarkdownIt("commonmark", {"linkify": True}).enable(["linkify", "table"])


def _comparison(case_ids: list[str], check: str, reason: str) -> Comparison:
    changes = [
        CaseChange(
            case_id=case_id,
            repeat=i,
            kind=CaseChangeKind.REGRESSION,
            base_state="passed",
            candidate_state="failed",
            base_score=100.0,
            candidate_score=float(10 * i),
            flipped=True,
            reason=reason,
        )
        for i, case_id in enumerate(case_ids)
    ]
    rate = SuiteDelta(
        metric="case pass rate (%)",
        base=100.0,
        candidate=50.0,
        change=-50.0,
        allowed=0.0,
        exceeded=True,
        p_value=0.002,
        test="exact McNemar on 3 pass->fail, 0 fail->pass",
    )
    return Comparison(
        paired=len(case_ids) * 2,
        only_base=0,
        only_candidate=0,
        suite=[rate],
        threshold_exceeded=True,
        regression_detected=True,
        significant=True,
        verdict=CompareVerdict.REGRESSION,
        alpha=0.05,
        strict=False,
        regressions=changes,
        checks=[
            CheckDelta(
                check=check,
                base_rate=1.0,
                candidate_rate=0.5,
                change=-0.5,
                worse=len(case_ids),
                better=0,
                p_value=0.04,
            )
        ],
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(HOSTILE, min_size=1, max_size=4, unique=True), HOSTILE, HOSTILE, st.booleans())
def test_only_case_pages_are_links_and_user_text_stays_text(
    case_ids: list[str], check: str, reason: str, link_base: bool
) -> None:
    text = comparison_markdown(
        _comparison(case_ids, check, reason), "20261123-1", "20261123-2", server=SERVER,
        link_base=link_base,
    )  # fmt: skip
    for html in (MD.render(text), cmarkgfm.github_flavored_markdown_to_html(text)):
        assert "<script" not in html
        hrefs = re.findall(r'<a href="([^"]*)"', html)
        assert len(hrefs) == html.count("<a ") == len(case_ids) * (2 if link_base else 1)
        pages = [unquote(h.replace("&amp;", "&")) for h in hrefs]
        assert sorted(p for p in pages if "/runs/20261123-2/" in p) == sorted(
            f"{SERVER}/runs/20261123-2/cases/{c}" for c in case_ids
        )
        # every table row has as many cells as its header: no text broke a table
        for table in re.findall(r"<table>.*?</table>", html, re.S):
            rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)
            widths = {len(re.findall(r"<t[hd][ >]", r)) for r in rows}
            assert len(widths) == 1, table


def test_flips_come_first_worst_first_and_significance_is_read() -> None:
    text = comparison_markdown(_comparison(["a", "b", "c"], "correct_time", "why"), "b1", "c1")
    lines = text.splitlines()
    assert lines[0] == "## checkweigh compare: ❌ regression"
    rows = [line for line in lines if line.startswith("| ") and " #" in line]
    # c lost 80 points, b 90, a all 100: the worst first
    assert [r.split(" #")[0] for r in rows] == ["| a", "| b", "| c"]
    assert "| correct\\_time | 100.0% | 50.0% | -50.0 | 3 | 0 | 0.040 | significant |" in text
    assert text.index("### Regressions") < text.index("### Score changes")


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("https://checkweigh.example.com/", "https://checkweigh.example.com"),
        ("http://127.0.0.1:8000/team", "http://127.0.0.1:8000/team"),
        ("https://[::1]:8443", "https://[::1]:8443"),
    ],
)
def test_a_server_url_is_kept_without_its_trailing_slash(given: str, kept: str) -> None:
    assert server_url(given) == kept
    assert case_url(kept, "r1", "a/b c") == f"{kept}/runs/r1/cases/a%2Fb%20c"


@pytest.mark.parametrize(
    "bad",
    [
        "checkweigh.example.com",
        "file:///etc/passwd",
        "https://host:99999",
        "https://host/<script>",
        "https://host/a\nb",
        "https://host/a`b",
        "https://x@host",
    ],
)
def test_a_bad_server_url_is_refused(bad: str) -> None:
    with pytest.raises(InputError) as caught:
        server_url(bad)
    assert caught.value.field == "--server-url"
