"""Reports of a run: the console report, the JSON export (and reading it back),
JUnit XML and Markdown for CI (a run's summary, a comparison as a pull-request comment), and
the one sanitiser (:func:`clean`, :func:`plain`) that keeps untrusted text inert in them."""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._calibration import rate as rate
    from ._calibration import trust_word as trust_word
    from ._compare import explain_comparison as explain_comparison
    from ._compare import render_comparison as render_comparison
    from ._compare_markdown import case_url as case_url
    from ._compare_markdown import comparison_markdown as comparison_markdown
    from ._compare_markdown import server_url as server_url
    from ._console import headline as headline
    from ._console import render_summary as render_summary
    from ._json import write_json_report as write_json_report
    from ._junit import write_junit as write_junit
    from ._markdown import escape_md as escape_md
    from ._markdown import render_markdown as render_markdown
    from ._markdown import write_markdown as write_markdown
    from ._run_file import RunFile as RunFile
    from ._run_file import read_run_file as read_run_file
    from ._safe import clean as clean
    from ._safe import json_inert as json_inert
    from ._safe import plain as plain
    from ._stability import PLOTS_HINT as PLOTS_HINT
    from ._stability import plots_missing as plots_missing
    from ._stability import render_stability as render_stability
    from ._stability import render_stability_html as render_stability_html
    from ._stability import spread_bars as spread_bars
    from ._stability import stability_png as stability_png
    from ._stability import write_stability_html as write_stability_html
    from ._stability import write_stability_png as write_stability_png
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(__name__)
