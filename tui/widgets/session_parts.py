"""What the session view's panes show, as pure functions of the view (tested without a terminal)."""

from __future__ import annotations

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from ..state.session_view import GATES, SETTLED_WITHOUT_SESSION, Approval, SessionView, ToolCallView
from .formatting import STATUS_STYLE, gate_mark, media_time, preview, split_failing

__all__ = ["finished", "render_artifacts", "render_status", "render_transcript", "render_verdict", "tool_entries"]

_SPEAKER_STYLE = {"user": "bold cyan", "agent": "bold magenta", "event": "bold yellow"}
_TAG_STYLE = {"WRONG": "red", "truncated": "red", "revoked": "magenta", "error": "red"}


def _grid() -> Table:
    """Time, then who or what, then text wrapped under itself (not under the time)."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(justify="right", style="dim", no_wrap=True)
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1)
    return grid


def render_transcript(view: SessionView) -> RenderableType:
    """User and agent turns, duplex events and approvals, in media-time order."""
    if not view.transcript:
        return Text("(nothing was said)" if finished(view) else "(nothing said yet)", style="dim")
    grid = _grid()
    for line in sorted(view.transcript, key=lambda line: line.t_ms):
        body_style = "italic" if line.partial else ("yellow" if line.speaker == "event" else "")
        body = Text(line.text + ("…" if line.partial else ""), style=body_style)
        for tag in line.tags:
            body.append(f" [{tag}]", style=_TAG_STYLE.get(tag, "dim"))
        grid.add_row(media_time(line.t_ms), Text(line.speaker, style=_SPEAKER_STYLE[line.speaker]), body)
    return grid


def _call_row(call: ToolCallView) -> tuple[Text, Text]:
    if not call.done:
        state = Text("…", style="yellow")
    elif call.is_error:
        state = Text("✗", style="bold red")
    else:
        state = Text("✓", style="green")
    body = Text(call.tool, style="bold")
    body.append(f"({preview(call.args, 80)})")
    if call.latency_ms is not None:
        body.append(f" {call.latency_ms} ms", style="dim")
    if call.done:
        outcome = call.error if call.is_error and call.error else preview(call.result, 80)
        body.append(f"\n→ {outcome}", style="red" if call.is_error else "dim")
        if call.auth_decision:
            body.append(f" [{call.auth_decision}]", style="cyan" if call.auth_decision == "AUTHORIZED" else "red")
    return state, body


def _approval_row(approval: Approval) -> tuple[Text, Text]:
    word = "granted" if approval.granted else "revoked"
    style = "cyan" if approval.granted else "magenta"
    return Text("A" if approval.granted else "R", style=style), Text(
        f"approval {word}: {approval.action} on {approval.target_id}", style=style
    )


def tool_entries(view: SessionView) -> list[tuple[str, object, RenderableType]]:
    """Tool calls (arguments, result or error, latency, authorization) and approvals, by time:
    ``(id, what the entry draws, its row)``; a call's id is ``call-<index in view.tools>``."""
    items: list[tuple[int, str, object, tuple[Text, Text]]] = [
        (call.called_ms, f"call-{index}", call, _call_row(call)) for index, call in enumerate(view.tools)
    ]
    items += [(a.t_ms, f"approval-{index}", a, _approval_row(a)) for index, a in enumerate(view.approvals)]
    entries: list[tuple[str, object, RenderableType]] = []
    for t_ms, entry_id, source, (state, body) in sorted(items, key=lambda item: item[0]):
        grid = _grid()
        grid.add_row(media_time(t_ms), state, body)
        entries.append((entry_id, source, grid))
    return entries


def finished(view: SessionView) -> bool:
    """The session ended (its verdict is in): an empty pane then says so, not "yet"."""
    return view.verdict is not None


def render_artifacts(view: SessionView) -> RenderableType:
    """Each artifact's lifecycle, then its fields (stale ones marked) as last written."""
    if not view.artifacts:
        return Text("(no artifact was written)" if finished(view) else "(no artifact written yet)", style="dim")
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True, max_width=24)
    grid.add_column(ratio=1)
    for artifact in view.artifacts:
        lifecycle_style = "green" if artifact.lifecycle == "COMMITTED" else "yellow"
        grid.add_row(Text(artifact.artifact_id, style="bold"), Text(artifact.lifecycle, style=lifecycle_style))
        for field in artifact.fields:
            value = Text(preview(field.value, 80) or "–")
            if field.stale:
                value.append(" [stale]", style="bold red")
            grid.add_row(Text(f" {field.name}", style="red" if field.stale else "", overflow="ellipsis"), value)
    return grid


def render_status(view: SessionView) -> Text:
    """One line: clock, status, the four gates and PTS so far, then model and task."""
    text = Text()
    text.append(f"{media_time(view.clock_ms)} ", style="bold")
    text.append(f"{view.status} ", style=STATUS_STYLE.get(view.status, ""))
    for gate in GATES:
        text.append_text(gate_mark(gate, view.gates.of(gate), settled=view.verdict is not None))
        text.append(" ")
    if view.gates.pts is not None:
        text.append(f"pts {view.gates.pts} ", style="bold")
    if view.skipped_events:  # a flood outran the live view: what is drawn is incomplete (events.jsonl is not)
        text.append(f"{view.skipped_events} events not shown ", style="yellow")
    text.append(f"· {view.model_id} · {view.task_id}", style="dim")  # the task id is what gets cut
    return text


def render_verdict(view: SessionView) -> Text:
    """The verdict and the first reason it failed, whole (it wraps), with how many more there are
    (``w`` lists them all); while the session runs, the first check failing now."""
    text = Text()
    verdict = view.verdict
    if verdict is not None:
        style = "bold green" if verdict.pts == 1 else "bold red"
        unscored = view.status in SETTLED_WITHOUT_SESSION  # no verdict: why the cell has none
        text.append(verdict.outcome if unscored else f"verdict {verdict.outcome}", style=style)
        if verdict.pts is not None:
            text.append(f" pts {verdict.pts}", style=style)
        if verdict.reason:
            text.append(f" ({verdict.reason})", style="dim")
        if verdict.afa is not None:
            text.append(f" AFA {verdict.afa:.2f}")
        reasons = [line for line in (verdict.detail, *verdict.explain) if line]
        if reasons:
            text.append(f" · {reasons[0]}", style="red")
        if len(reasons) > 1:
            text.append(f" (+{len(reasons) - 1} more: w)", style="dim")
    elif view.gates.failing:  # provisional: a broken policy is final, the other gates can still be met
        failed, pending = split_failing(view.gates.failing, settled=False)
        first, style = (f"failing: {failed[0]}", "red") if failed else (f"not met yet: {pending[0]}", "yellow")
        text.append(first, style=style)
        if len(view.gates.failing) > 1:
            text.append(f" (+{len(view.gates.failing) - 1} more: w)", style="dim")
    else:
        text.append("no verdict yet", style="dim")
    return text
