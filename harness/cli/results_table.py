"""Tables whose first column is a task id, laid out so the id stays readable at any terminal width.

Rich folds a column that does not fit character by character, which at 80 columns split
``demo_printer_fleet_troubleshoot_001`` mid-word and at 60 squeezed ids out of sight. Here the
other columns are measured first (they hold short marks), the task column gets what is left, and an
id that still does not fit is broken only after an underscore, so every line is whole words.
"""

from __future__ import annotations

import re

from rich import box
from rich.table import Column, Table
from rich.text import Text

__all__ = ["task_table", "wrap_task_id"]

#: Between columns: the box's one-space divider and no padding.
_GAP = 1
_WORD = re.compile(r"[^_]+_*|_+")


def wrap_task_id(task_id: str, width: int) -> str:
    """``task_id`` on lines of at most ``width`` characters, broken only after underscores.

    A single word longer than ``width`` keeps its own line whole (the column widens for it).
    """
    lines: list[str] = []
    line = ""
    for word in _WORD.findall(task_id):
        if line and len(line) + len(word) > width:
            lines.append(line)
            line = ""
        line += word
    lines.append(line)
    return "\n".join(lines)


def task_table(headers: list[str], rows: list[list[str]], width: int) -> Table:
    """A table of ``rows`` (a plain task id, then short markup cells) that fits ``width`` columns."""
    others = [
        max(Text.from_markup(header).cell_len, *(Text.from_markup(row[i]).cell_len for row in rows))
        for i, header in enumerate(headers[1:], start=1)
    ]
    available = width - sum(others) - _GAP * len(others)
    task_ids = [row[0] for row in rows]
    longest_id = max(map(len, task_ids), default=0)
    longest_word = max((len(word) for task_id in task_ids for word in _WORD.findall(task_id)), default=0)
    task_width = max(len(headers[0]), longest_word, min(longest_id, available))
    table = Table(
        Column(headers[0], no_wrap=True, min_width=task_width),
        *(Column(header, no_wrap=True) for header in headers[1:]),
        box=box.SIMPLE_HEAD,
        padding=(0, 0),
        pad_edge=False,
        show_edge=False,
    )
    for row in rows:
        table.add_row(Text(wrap_task_id(row[0], task_width)), *row[1:])
    return table
