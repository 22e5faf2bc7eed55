"""Small text formats shared by the panes: media times, gate marks, one-line value previews."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text

__all__ = ["FINAL_WHEN_FAILED", "GATE_STYLE", "STATUS_STYLE", "gate_mark", "gate_pending", "media_clock", "media_time",
           "preview", "split_failing"]

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


#: The gates whose failure mid-session is already final: a policy broken stays broken, while the
#: state, the required actions and the artifact can still be reached before the session ends.
FINAL_WHEN_FAILED = frozenset({"PC"})


def gate_pending(gate: str, value: bool | None, *, settled: bool) -> bool:
    """A gate not met *yet*: unmet while the session runs, and still reachable."""
    return value is False and not settled and gate not in FINAL_WHEN_FAILED


def gate_mark(gate: str, value: bool | None, *, settled: bool = True) -> Text:
    """``GS✓`` met, ``GS✗`` failed, ``GS…`` not met yet (the session runs on), ``GS·`` no grade yet."""
    if gate_pending(gate, value, settled=settled):
        return Text(f"{gate}…", style="yellow")
    symbol = {True: "✓", False: "✗", None: "·"}[value]
    return Text(f"{gate}{symbol}", style=GATE_STYLE[value])


def split_failing(failing: tuple[str, ...] | list[str], *, settled: bool) -> tuple[list[str], list[str]]:
    """``(failed, not met yet)`` of a grade's failing lines (each starts with its gate, ``GS: ...``)."""
    failed: list[str] = []
    pending: list[str] = []
    for line in failing:
        gate = line.split(":", 1)[0]
        (pending if gate_pending(gate, False, settled=settled) else failed).append(line)
    return failed, pending


def preview(value: Any, limit: int = 60) -> str:
    """A value on one line, cut to ``limit`` characters."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str, separators=(", ", ": "))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
