"""Reports of a run: the console report and the JSON export."""

from ._console import render_summary
from ._json import write_json_report

__all__ = ["render_summary", "write_json_report"]
