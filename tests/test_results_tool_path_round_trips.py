"""Call round trips read from a session's events (``results --by tool-path``), on both clocks."""

from __future__ import annotations

import json

from harness.events import EventType, read_event_lines
from harness.results.tool_paths import RoundTrip, call_round_trips


def _line(seq: int, type_: str, media_ms: int, wall_ms: int, payload: dict) -> str:
    return json.dumps({"seq": seq, "type": type_, "actor": "agent", "wall_time_ns": wall_ms * 1_000_000,
                       "media_time_ms": media_ms, "payload": payload, "run_id": "r", "task_version": "1",
                       "condition": "C2"})


def _session(tmp_path, clock: str):
    lines = [
        _line(0, "RUN_START", 0, 0, {"task_id": "t", "model_id": "m", "condition": "C2",
                                      "schema_version": "2", "clock": clock}),
        _line(1, "TOOL_CALL", 1000, 10, {"tool": "lookup", "args": {}, "source": "bridge", "call_id": "c1"}),
        _line(2, "TOOL_RESULT", 1240, 250, {"tool": "lookup", "ok": True, "call_id": "c1"}),
        _line(3, "AGENT_SIGNAL", 2000, 300, {"signal": "mcp_call_started", "detail": {"call_id": "m1"}}),
        _line(4, "AGENT_SIGNAL", 2100, 420, {"signal": "mcp_call_progress", "detail": {"call_id": "m1"}}),
        _line(5, "AGENT_SIGNAL", 2400, 700, {"signal": "mcp_call_failed", "detail": {"call_id": "m1"}}),
        _line(6, "TOOL_CALL", 3000, 800, {"tool": "seen_at_server", "source": "server"}),  # no round trip
        '{"seq": 7, "type": "TOOL_RES',  # torn by a crash
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    return read_event_lines(path)


def test_bridge_and_mcp_round_trips_with_wall_times_on_the_realtime_clock(tmp_path):
    events = _session(tmp_path, "realtime")
    assert [e.type for e in events][-1] == EventType.TOOL_CALL
    assert call_round_trips(events) == [RoundTrip(240, 240.0), RoundTrip(400, 400.0)]


def test_the_virtual_clock_has_no_wall_times(tmp_path):
    assert call_round_trips(_session(tmp_path, "virtual")) == [RoundTrip(240, None), RoundTrip(400, None)]
