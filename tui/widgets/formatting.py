"""Small text formats shared by the panes: media times, gate marks, one-line value previews."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text

__all__ = ["GATE_STYLE", "STATUS_STYLE", "gate_mark", "media_clock", "media_time", "preview"]

STATUS_STYLE = {
    "queued": "dim",
    "running": "bold yellow",
    "passed": "bold green",
    "failed": "bold red",
    "infra error": "bold magenta",
    "not run": "yellow",
    "harness error": "bold red",
    "provider refused": "bold red",
}

GATE_STYLE = {True: "bold green", False: "bold red", None: "dim"}


def media_time(ms: int | None) -> str:
    """``m:ss.d`` (``-`` when unknown)."""
    if ms is None:
        return "-"
    sign = "-" if ms < 0 else ""
    ms = abs(int(ms))
    return f"{sign}{ms // 60000}:{ms // 1000 % 60:02d}.{ms // 100 % 10}"


def media_clock(ms: int) -> str:
    """``m:ss``: whole seconds, for a table that should not change ten times a second."""
    return f"{ms // 60000}:{ms // 1000 % 60:02d}"


def gate_mark(gate: str, value: bool | None) -> Text:
    symbol = {True: "✓", False: "✗", None: "·"}[value]
    return Text(f"{gate}{symbol}", style=GATE_STYLE[value])


def preview(value: Any, limit: int = 60) -> str:
    """A value on one line, cut to ``limit`` characters."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str, separators=(", ", ": "))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
