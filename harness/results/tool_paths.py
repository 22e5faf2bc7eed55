"""The same tasks side by side per tool path (``results --by tool-path``): PTS and call round trips.

A run's tool path is the ``tool_path`` of its ``result.json``: ``bridge`` (the harness executed the
model's function calls), ``mcp-agent`` (the agent's own MCP client) or ``mcp-provider`` (the
provider's MCP client, given the task's endpoint in its session). Runs from any number of campaign
directories are pooled by path, so one model run three ways compares on the same tasks.

A call's round trip is read from ``events.jsonl``, from the moment the caller made the call to the
moment its result was back with the caller, on both clocks:

- ``bridge``: the model's ``TOOL_CALL`` to the ``TOOL_RESULT`` delivered under the same call id;
- ``mcp-agent`` / ``mcp-provider``: the caller's own account, the ``mcp_call_started`` signal to
  ``mcp_call_completed`` / ``mcp_call_failed`` of the same call id (a provider's ``mcp_call``
  events; a native agent's report). A run without such reports has no round trips (``n/a``).

Wall times count only on the realtime clock: on the virtual clock a call is awaited inside one
frame (media time 0 by construction) and the harness keeps wall times out of its figures.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from harness.events import EVENTS_FILE, EventType, RunEvent, payload_as, read_event_lines
from harness.events.payloads import AgentSignal, RunStart, ToolCall, ToolResult
from harness.metrics.percentiles import percentile

from .run_tree import Campaign, Run

__all__ = ["TOOL_PATHS", "ToolPathReport", "ToolPathSummary", "call_round_trips", "compare_tool_paths"]

#: Report order (a path no run took is left out).
TOOL_PATHS = ("bridge", "mcp-agent", "mcp-provider")

_ENDS = {"mcp_call_completed", "mcp_call_failed"}


@dataclass(frozen=True)
class RoundTrip:
    media_ms: int
    #: ``None`` on the virtual clock.
    wall_ms: float | None


def call_round_trips(events: list[RunEvent]) -> list[RoundTrip]:
    """Every call's round trip in one session's events."""
    realtime = any(payload_as(e, RunStart).clock == "realtime" for e in events if e.type == EventType.RUN_START)
    starts: dict[str, RunEvent] = {}
    trips: list[RoundTrip] = []
    for event in events:
        key, is_end = _call_mark(event)
        if key is None:
            continue
        if not is_end:
            starts.setdefault(key, event)
        elif key in starts:
            start = starts.pop(key)
            wall = (event.wall_time_ns - start.wall_time_ns) / 1e6 if realtime else None
            trips.append(RoundTrip(event.media_time_ms - start.media_time_ms, wall))
    return trips


def _call_mark(event: RunEvent) -> tuple[str | None, bool]:
    """``(call key, is_end)`` when the event starts or ends a call's round trip, else ``(None, False)``."""
    if event.type == EventType.TOOL_CALL:
        call = payload_as(event, ToolCall)
        if call.source == "bridge" and call.call_id:
            return f"bridge:{call.call_id}", False
    elif event.type == EventType.TOOL_RESULT:
        result = payload_as(event, ToolResult)
        if result.call_id:
            return f"bridge:{result.call_id}", True
    elif event.type == EventType.AGENT_SIGNAL:
        signal = payload_as(event, AgentSignal)
        call_id = signal.detail.get("call_id")
        if signal.signal.startswith("mcp_call_") and call_id:
            return f"mcp:{call_id}", signal.signal in _ENDS
    return None, False


class ToolPathSummary(BaseModel):
    tool_path: str
    sessions: int
    tasks: int
    #: Mean PTS (0/1 as published) over graded sessions, in percent.
    pts_pct: float | None
    #: Tool calls in the sessions' events, and how many of them have a round trip.
    calls: int
    timed_calls: int
    round_trip_media_p50_ms: float | None
    round_trip_media_p95_ms: float | None
    round_trip_wall_p50_ms: float | None
    round_trip_wall_p95_ms: float | None


class ToolPathReport(BaseModel):
    paths: list[ToolPathSummary]
    #: task id → tool path → PTS of each session (``None``: pending).
    per_task: dict[str, dict[str, list[int | None]]]
    #: What the pooled campaigns measured differently (task sets, settings), said above the table.
    notes: list[str] = Field(default_factory=list)

    def markdown(self) -> str:
        def ms(value: float | None) -> str:
            return "n/a" if value is None else f"{value:.0f}"

        lines = [
            *(f"> note: {note}" for note in self.notes),
            *([""] if self.notes else []),
            "| tool path | sessions | tasks | PTS % | calls (timed) | RT media p50 / p95 ms | RT wall p50 / p95 ms |",
            "|---|---|---|---|---|---|---|",
        ]
        for p in self.paths:
            pts = "n/a" if p.pts_pct is None else f"{p.pts_pct:.1f}"
            lines.append(
                f"| {p.tool_path} | {p.sessions} | {p.tasks} | {pts} | {p.calls} ({p.timed_calls}) | "
                f"{ms(p.round_trip_media_p50_ms)} / {ms(p.round_trip_media_p95_ms)} | "
                f"{ms(p.round_trip_wall_p50_ms)} / {ms(p.round_trip_wall_p95_ms)} |"
            )
        paths = [p.tool_path for p in self.paths]
        lines += ["", "| task | " + " | ".join(paths) + " |", "|---|" + "---|" * len(paths)]
        for task_id, by_path in sorted(self.per_task.items()):
            cells = [" ".join("–" if v is None else str(v) for v in by_path.get(path, [])) or "·" for path in paths]
            lines.append(f"| {task_id} | " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"


@dataclass
class _PathRuns:
    runs: list[Run] = field(default_factory=list)
    trips: list[RoundTrip] = field(default_factory=list)
    calls: int = 0


def _events(run: Run) -> list[RunEvent]:
    session = run.rep_dir / run.record.run_id if run.record.run_id else run.session_dir
    path = session / EVENTS_FILE if session is not None else None
    if path is None or not path.is_file():
        return []
    return read_event_lines(path)  # a torn last line (a crash) is left out


def compare_tool_paths(campaigns: list[Campaign]) -> ToolPathReport:
    """Pool every run of ``campaigns`` by its tool path and summarise each path."""
    by_path: dict[str, _PathRuns] = defaultdict(_PathRuns)
    for campaign in campaigns:
        for run in campaign.all_runs():
            pooled = by_path[run.record.tool_path or "bridge"]
            events = _events(run)
            pooled.runs.append(run)
            pooled.trips += call_round_trips(events)
            pooled.calls += sum(1 for e in events if e.type == EventType.TOOL_CALL)
    order = [p for p in TOOL_PATHS if p in by_path] + sorted(set(by_path) - set(TOOL_PATHS))
    summaries = []
    per_task: dict[str, dict[str, list[int | None]]] = defaultdict(dict)
    for path in order:
        pooled = by_path[path]
        graded = [run.pts for run in pooled.runs if run.pts is not None]
        media = [float(t.media_ms) for t in pooled.trips]
        wall = [t.wall_ms for t in pooled.trips if t.wall_ms is not None]
        summaries.append(
            ToolPathSummary(
                tool_path=path,
                sessions=len(pooled.runs),
                tasks=len({run.task_id for run in pooled.runs}),
                pts_pct=100.0 * sum(graded) / len(graded) if graded else None,
                calls=pooled.calls,
                timed_calls=len(pooled.trips),
                round_trip_media_p50_ms=percentile(media, 0.5),
                round_trip_media_p95_ms=percentile(media, 0.95),
                round_trip_wall_p50_ms=percentile(wall, 0.5),
                round_trip_wall_p95_ms=percentile(wall, 0.95),
            )
        )
        for run in sorted(pooled.runs, key=lambda r: (r.task_id, r.rep)):
            per_task[run.task_id].setdefault(path, []).append(run.pts)
    return ToolPathReport(paths=summaries, per_task=dict(per_task))
