"""Helpers for the TUI tests: where a recorded session is, what a widget shows, waiting in Pilot."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

DEMO_TASK = "demo_benefits_enrollment_001"
DEMO_DATA = Path(__file__).resolve().parents[2] / "harness" / "demo_data"


def session_dir(campaign_dir: Path) -> Path:
    return next(campaign_dir.glob(f"{DEMO_TASK}/rep0/*/events.jsonl")).parent


def shown(widget) -> str:
    """The plain text a widget draws (a log's lines, a table's cells, a Static's content, else its
    render), at the widget's width."""
    from textual.widgets import DataTable, RichLog, Static

    if isinstance(widget, RichLog):
        return "\n".join(line.text for line in widget.lines)
    if isinstance(widget, DataTable):
        rows = (widget.get_row_at(index) for index in range(widget.row_count))
        return "\n".join("  ".join(str(cell) for cell in row) for row in rows)
    target = widget if isinstance(widget, Static) else widget.query_one(Static) if widget.query(Static) else widget
    renderable = target.content if isinstance(target, Static) else target.render()
    console = Console(width=max(target.content_size.width, 20), file=io.StringIO(), record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


async def until(pilot, condition, *, timeout_s: float = 20.0) -> None:
    """Let the app run until ``condition()`` holds (a Pilot test's wait, not a timing assertion)."""
    waited = 0.0
    while not condition():
        if waited >= timeout_s:
            raise AssertionError(f"condition not reached within {timeout_s} s")
        await pilot.pause(0.05)
        waited += 0.05
    await pilot.pause()
