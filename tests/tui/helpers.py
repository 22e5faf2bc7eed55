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
    """The plain text a widget draws (a log's lines, a table's cells, an option list's prompts, a
    Static's content, a container's Statics one after the other, else its render), at its width."""
    from textual.widgets import DataTable, OptionList, RichLog, Static

    if isinstance(widget, RichLog):
        return "\n".join(line.text for line in widget.lines)
    if isinstance(widget, DataTable):
        rows = (widget.get_row_at(index) for index in range(widget.row_count))
        return "\n".join("  ".join(str(cell) for cell in row) for row in rows)
    width = max(widget.content_size.width, 20)
    if isinstance(widget, OptionList):
        return "\n".join(plain(option.prompt, width) for option in widget.options)
    if isinstance(widget, Static):
        return plain(widget.content, width)
    if widget.query(Static):
        return "".join(plain(static.content, width) for static in widget.query(Static))
    return plain(widget.render(), width)


def plain(renderable, width: int = 100) -> str:
    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


#: Polls of a condition before a wait gives up (each lets the app run one short pause).
POLLS = 800


async def until(pilot, condition, *, polls: int = POLLS) -> None:
    """Let the app run until ``condition()`` holds: at most ``polls`` short pauses, then fail (a
    bound on attempts, not a timing assertion); then one more pause for what it set off."""
    for _ in range(polls):
        if condition():
            await pilot.pause()
            return
        await pilot.pause(0.05)
    raise AssertionError(f"condition not reached after {polls} polls")


def screen_text(app) -> str:
    """The whole terminal as the user sees it, plain (every screen layer composited)."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, color_system=None,
                      legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


def live_campaign(recorded_oracle: Path, out: Path, *, until_ms: int, model: str = "native-oracle",
                  adapter_id: str = "container-agent") -> Path:
    """A campaign directory as ``watch`` finds it mid-session: ``campaign.json`` for ``model``, and
    the recorded oracle session's events up to ``until_ms`` (no result yet), its ``RUN_START``
    naming the adapter as a containerised agent's does."""
    import json

    source = session_dir(recorded_oracle) / "events.jsonl"
    target = out / DEMO_TASK / "rep0" / "live0001" / "events.jsonl"
    target.parent.mkdir(parents=True)
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event["media_time_ms"] > until_ms:
            break
        if event["type"] == "RUN_START":
            event["payload"]["model_id"] = adapter_id
        lines.append(json.dumps(event))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    manifest = {"model": model, "display_name": model, "repeats": 1, "task_ids": [DEMO_TASK],
                "planned_cells": {DEMO_TASK: [0]}, "unscored_cells": []}
    (out / "campaign.json").write_text(json.dumps(manifest), encoding="utf-8")
    return out
