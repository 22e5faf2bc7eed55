"""The detail views, as pure functions: why a session passed or failed, and one tool call whole.

"Why" is drawn from the graded evidence ``result.json`` holds (failed predicates and per-field
verdicts, structured); its explanation lines are shown as written, never parsed. Before the result
is in, it shows the provisional gates and what fails now.
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..state.session_view import GATES, SessionView, ToolCallView
from .formatting import gate_mark, media_time, preview, split_failing
from .session_parts import render_status, render_verdict

__all__ = ["render_call", "render_why"]


def _heading(title: str) -> Text:
    return Text(f"\n{title}", style="bold underline")


def _grid() -> Table:
    """A mark, a name, then the rest wrapped under itself: readable at 80 columns."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(no_wrap=True, max_width=36, overflow="fold")
    grid.add_column(ratio=1, overflow="fold")
    return grid


def _predicates(view: SessionView) -> RenderableType | None:
    verdict = view.verdict
    if verdict is None or not verdict.predicates:
        return None
    grid = _grid()
    for predicate in verdict.predicates:
        grid.add_row(Text(f"{predicate.gate}✗", style="bold red"), Text(predicate.id, style="bold"),
                     Text(f"{predicate.role} {predicate.kind}: ", style="dim") + Text(predicate.reason))
    return grid


def _field_mark(row: Any) -> Text:
    if row.pending:
        return Text("…", style="yellow")
    if not row.counted:
        return Text("·", style="dim")
    return Text("✗", style="bold red") if row.failed else Text("✓", style="green")


def _fields(view: SessionView) -> RenderableType | None:
    verdict = view.verdict
    if verdict is None or not verdict.fields:
        return None
    grid = _grid()
    for row in verdict.fields:
        flags = [flag for flag, on in (("stale", row.stale), ("required", row.required), ("absent", not row.present)) if on]
        detail = Text(f"expected {preview(row.expected, 200)} · got {preview(row.got, 200) or '–'}")
        detail.append(f" · {row.grader} ({row.tier}) {row.score:.2f}", style="red" if row.failed else "dim")
        if flags:
            detail.append(f" [{', '.join(flags)}]", style="dim")
        grid.add_row(_field_mark(row), Text(row.key, style="red" if row.failed else ""), detail)
    return grid


def render_why(view: SessionView) -> RenderableType:
    """Everything the grade says: verdict, gates, failed predicates, each field's verdict, and the
    explanation lines whole; while running, the provisional gates and every check failing now."""
    parts: list[RenderableType] = [render_status(view), render_verdict(view)]
    verdict = view.verdict
    gates = Text("gates: ")
    for gate in GATES:
        gates.append_text(gate_mark(gate, view.gates.of(gate), settled=verdict is not None))
        gates.append(" ")
    parts.append(gates)
    if verdict is None:
        parts.append(_heading("provisional: the grade after the latest tool call"))
        broken, pending = split_failing(view.gates.failing, settled=False)
        parts.extend(Text(f"  failing: {line}", style="red") for line in broken)
        parts.extend(Text(f"  not met yet: {line}", style="yellow") for line in pending)
        if not view.gates.failing:
            parts.append(Text("  nothing yet" if view.gates.pts is None else "  nothing", style="dim"))
        return Group(*parts)
    if verdict.detail:
        parts += [_heading("why the cell has no session" if verdict.pts is None and not verdict.fields else "agent"),
                  Text(f"  {verdict.detail}", style="red")]
    predicates, fields = _predicates(view), _fields(view)
    if predicates is not None:
        parts += [_heading(f"predicates that failed ({len(verdict.predicates)})"), predicates]
    if fields is not None:
        failed = sum(row.failed for row in verdict.fields)
        parts += [_heading(f"fields ({failed} of {len(verdict.fields)} failing)"), fields]
    if verdict.explain:
        parts += [_heading(f"explanation ({len(verdict.explain)} lines, as result.json has them)"),
                  *(Text(f"  {line}") for line in verdict.explain)]
    if view.errors:
        parts += [_heading("errors during the session"), *(Text(f"  {error}", style="red") for error in view.errors)]
    return Group(*parts)


def _json(value: Any) -> Text:
    if value is None:
        return Text("null", style="dim")
    return Text(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def render_call(call: ToolCallView) -> RenderableType:
    """One call whole: its arguments and result (or error) as indented JSON, and what it did."""
    state = "pending" if not call.done else ("error" if call.is_error else "ok")
    head = Text(f"{call.tool}", style="bold")
    head.append(f"  called at {media_time(call.called_ms)}  {state}", style="red" if call.is_error else "")
    if call.latency_ms is not None:
        head.append(f"  {call.latency_ms} ms", style="dim")
    if call.auth_decision:
        head.append(f"  [{call.auth_decision}]", style="cyan" if call.auth_decision == "AUTHORIZED" else "red")
    parts: list[RenderableType] = [head]
    if call.call_id:
        parts.append(Text(f"call id {call.call_id}", style="dim"))
    parts += [_heading("arguments"), _json(call.args)]
    if call.done:
        if call.error:
            parts += [_heading("error"), Text(call.error, style="red")]
        parts += [_heading("result"), _json(call.result)]
    if call.mutations:
        parts += [_heading("fields it wrote"), Text("  " + ", ".join(call.mutations))]
    return Group(*parts)
