"""What the session view's panes show, as pure functions of the view (tested without a terminal)."""

from __future__ import annotations

from rich.text import Text

from ..state.session_view import GATES, SessionView
from .formatting import STATUS_STYLE, gate_mark, media_time, preview

__all__ = ["render_artifacts", "render_gates", "render_tools", "render_transcript"]

_SPEAKER_STYLE = {"user": "bold cyan", "agent": "bold magenta", "event": "bold yellow"}
_TAG_STYLE = {"WRONG": "red", "truncated": "red", "revoked": "magenta", "error": "red"}


def render_transcript(view: SessionView) -> Text:
    """User and agent turns, duplex events and approvals, in media-time order."""
    text = Text()
    for line in sorted(view.transcript, key=lambda line: line.t_ms):
        text.append(f"{media_time(line.t_ms):>7} ", style="dim")
        text.append(f"{line.speaker:<5} ", style=_SPEAKER_STYLE[line.speaker])
        body_style = "italic" if line.partial else ("yellow" if line.speaker == "event" else "")
        text.append(line.text + ("…" if line.partial else ""), style=body_style)
        for tag in line.tags:
            text.append(f" [{tag}]", style=_TAG_STYLE.get(tag, "dim"))
        text.append("\n")
    if not view.transcript:
        text.append("(nothing said yet)", style="dim")
    return text


def render_tools(view: SessionView) -> Text:
    text = Text()
    for call in view.tools:
        if not call.done:
            state, style = "…", "yellow"
        elif call.is_error:
            state, style = "✗", "bold red"
        else:
            state, style = "✓", "green"
        text.append(f"{media_time(call.called_ms):>7} ", style="dim")
        text.append(f"{state} ", style=style)
        text.append(call.tool, style="bold")
        text.append(f"({preview(call.args, 48)})")
        if call.latency_ms is not None:
            text.append(f" {call.latency_ms} ms", style="dim")
        if call.done:
            outcome = call.error if call.is_error and call.error else preview(call.result, 56)
            text.append(f"\n        → {outcome}", style="red" if call.is_error else "dim")
            if call.auth_decision:
                text.append(f" [{call.auth_decision}]", style="cyan" if call.auth_decision == "AUTHORIZED" else "red")
        text.append("\n")
    for approval in view.approvals:
        word = "granted" if approval.granted else "revoked"
        text.append(f"{media_time(approval.t_ms):>7} ", style="dim")
        text.append(f"approval {word}: {approval.action} on {approval.target_id}\n",
                    style="cyan" if approval.granted else "magenta")
    if not view.tools and not view.approvals:
        text.append("(no tool calls yet)", style="dim")
    return text


def render_artifacts(view: SessionView) -> Text:
    text = Text()
    for artifact in view.artifacts:
        text.append(artifact.artifact_id, style="bold")
        text.append(f"  {artifact.lifecycle}\n", style="green" if artifact.lifecycle == "COMMITTED" else "yellow")
        for field in artifact.fields:
            text.append(f"  {field.name}", style="red" if field.stale else "")
            text.append(" = ", style="dim")
            text.append(preview(field.value, 40) or "–")
            if field.stale:
                text.append(" [stale]", style="bold red")
            text.append("\n")
    if not view.artifacts:
        text.append("(no artifact written yet)", style="dim")
    return text


def render_gates(view: SessionView) -> Text:
    """Two lines: clock, status and the four gates; then the verdict or the first failing check."""
    text = Text()
    text.append(f"⏱ {media_time(view.clock_ms)} ", style="bold")
    text.append(f"{view.status} ", style=STATUS_STYLE.get(view.status, ""))
    for gate in GATES:
        text.append_text(gate_mark(gate, view.gates.of(gate)))
        text.append(" ")
    if view.gates.pts is not None:
        text.append(f"pts {view.gates.pts} ", style="bold")
    text.append(f" {view.task_id} · {view.model_id}", style="dim")
    text.append("\n")
    verdict = view.verdict
    if verdict is not None:
        style = "bold green" if verdict.pts == 1 else "bold red"
        text.append(f"verdict {verdict.outcome} pts {verdict.pts}", style=style)
        if verdict.reason:
            text.append(f" ({verdict.reason})", style="dim")
        if verdict.afa is not None:
            text.append(f" AFA {verdict.afa:.2f}")
        if verdict.explain:
            text.append(f"  {verdict.explain[0]}", style="red")
    elif view.gates.failing:
        text.append(f"failing: {view.gates.failing[0]}", style="red")
        if len(view.gates.failing) > 1:
            text.append(f" (+{len(view.gates.failing) - 1})", style="dim")
    else:
        text.append("no verdict yet", style="dim")
    return text
