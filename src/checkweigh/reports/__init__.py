"""Reports of a run: the console report, the JSON export (and reading it back),
JUnit XML and Markdown for CI (a run's summary, a comparison as a pull-request comment), and
the one sanitiser (:func:`clean`, :func:`plain`) that keeps untrusted text inert in them."""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._compare import explain as explain_comparison
    from ._compare import render_comparison
    from ._compare_markdown import case_url, comparison_markdown, server_url
    from ._console import headline, render_summary
    from ._json import write_json_report
    from ._junit import write_junit
    from ._markdown import escape_md, render_markdown, write_markdown
    from ._run_file import RunFile, read_run_file
    from ._safe import clean, json_inert, plain
    from ._stability import (
        PLOTS_HINT,
        plots_missing,
        render_stability,
        render_stability_html,
        spread_bars,
        stability_png,
        write_stability_html,
        write_stability_png,
    )
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(
        __name__,
        {
            "explain_comparison": "._compare:explain",
            "render_comparison": "._compare",
            "case_url": "._compare_markdown",
            "comparison_markdown": "._compare_markdown",
            "server_url": "._compare_markdown",
            "headline": "._console",
            "render_summary": "._console",
            "write_json_report": "._json",
            "write_junit": "._junit",
            "escape_md": "._markdown",
            "render_markdown": "._markdown",
            "write_markdown": "._markdown",
            "RunFile": "._run_file",
            "read_run_file": "._run_file",
            "clean": "._safe",
            "json_inert": "._safe",
            "plain": "._safe",
            "PLOTS_HINT": "._stability",
            "plots_missing": "._stability",
            "render_stability": "._stability",
            "render_stability_html": "._stability",
            "spread_bars": "._stability",
            "stability_png": "._stability",
            "write_stability_html": "._stability",
            "write_stability_png": "._stability",
        },
    )

__all__ = [
    "PLOTS_HINT",
    "plots_missing",
    "render_stability",
    "render_stability_html",
    "spread_bars",
    "stability_png",
    "write_stability_html",
    "write_stability_png",
    "clean",
    "json_inert",
    "plain",
    "case_url",
    "comparison_markdown",
    "RunFile",
    "read_run_file",
    "server_url",
    "explain_comparison",
    "render_comparison",
    "escape_md",
    "render_markdown",
    "headline",
    "render_summary",
    "write_json_report",
    "write_junit",
    "write_markdown",
]
