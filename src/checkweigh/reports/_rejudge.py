"""The judge/agent split of ``compare --rejudge``: each figure in the base, the base judged
again with the candidate's judge, and the candidate, and its change split into the judge's part
and the agent's, each with its 95% interval. Shared by the console and the Markdown comment."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..core import JudgeSplit, SplitPart
from ._markdown import escape_md
from ._safe import plain

SPLIT_COLUMNS = ("metric", "base", "rejudged", "candidate", "total", "judge part", "agent part")
"""The split table's columns."""


def split_intro(split: JudgeSplit) -> str:
    """What the split is, in one sentence (user text: escape it for the output)."""
    kept = f"; {split.kept} execution(s) the agent failed stay as they were" if split.kept else ""
    return (
        f"the base run {split.base_run} was judged again by {split.judge} with the "
        f"candidate's checks, as run {split.rejudged_run} (no agent called{kept}): the judge "
        "part is rejudged - base, the agent part candidate - rejudged; the verdict is the "
        "agent part's (the candidate compared with the rejudged run)"
    )


def part_text(part: SplitPart) -> str:
    """``-30.0 [-45.1, -15.2]`` (paired) or ``... unpaired``; ``—`` when not measured."""
    if part.change is None or part.low is None or part.high is None:
        return "—"
    text = f"{part.change:+.1f} [{part.low:+.1f}, {part.high:+.1f}]"
    return text if part.paired else text + " unpaired"


def split_rows(split: JudgeSplit) -> list[list[str]]:
    """One row per figure, in :data:`SPLIT_COLUMNS` order."""
    return [
        [
            f.metric,
            *("—" if v is None else f"{v:.1f}" for v in (f.base, f.rejudged, f.candidate)),
            *(part_text(p) for p in (f.total, f.judge, f.agent)),
        ]
        for f in split.figures
    ]


def render_split(console: Console, split: JudgeSplit) -> None:
    """Print the split under the comparison's headline."""
    console.print(plain(split_intro(split)))
    table = Table(title="judge part and agent part (95% intervals)", title_justify="left")
    for col in SPLIT_COLUMNS:
        table.add_column(col, justify="left" if col == "metric" else "right")
    for row in split_rows(split):
        table.add_row(plain(row[0]), *(Text(cell) for cell in row[1:]))
    console.print(table)


def split_markdown(split: JudgeSplit) -> list[str]:
    """The split as Markdown lines (a paragraph and a table)."""
    return [
        "### Judge part and agent part",
        "",
        f"The runs were judged differently ({escape_md('; '.join(split.differences), 2000)}): "
        f"{escape_md(split_intro(split), 2000)}. Changes with 95% intervals.",
        "",
        "| " + " | ".join(SPLIT_COLUMNS) + " |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        *("| " + " | ".join(escape_md(c) for c in row) + " |" for row in split_rows(split)),
        "",
    ]
