"""The run's one event stream: ``events.jsonl``.

Every part of a session (user, agent, environment, harness) reports here; the metrics, the TUI and
the replay read the same stream. Keys and event types follow the published format; our additions
(gate status, sandbox lifecycle, floor changes) are new types, never changed meanings. Lines are
written by a background thread so the asyncio loop never blocks on the disk, and each line is flushed
as soon as it is written, so a crash loses at most the event in flight.
"""

from __future__ import annotations

import json
import queue
import threading
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["SCHEMA_VERSION", "Actor", "EventLog", "EventType", "RunEvent"]

#: Version of our event-log schema, written in ``RUN_START``.
SCHEMA_VERSION = "apex-voice.events/1"


class EventType(str, Enum):
    # Published types.
    RUN_START = "RUN_START"
    USER_STATE_TRANSITION = "USER_STATE_TRANSITION"
    USER_PLAN = "USER_PLAN"
    USER_TEXT = "USER_TEXT"
    USER_AUDIO_START = "USER_AUDIO_START"
    USER_AUDIO_CHUNK = "USER_AUDIO_CHUNK"
    USER_AUDIO_END = "USER_AUDIO_END"
    AGENT_AUDIO_START = "AGENT_AUDIO_START"
    AGENT_AUDIO_CHUNK = "AGENT_AUDIO_CHUNK"
    AGENT_AUDIO_END = "AGENT_AUDIO_END"
    AGENT_TEXT = "AGENT_TEXT"
    AGENT_TRANSCRIPT_PARTIAL = "AGENT_TRANSCRIPT_PARTIAL"
    AGENT_ACT = "AGENT_ACT"
    TOOL_CALL = "TOOL_CALL"
    TOOL_RESULT = "TOOL_RESULT"
    ARTIFACT_MUTATION = "ARTIFACT_MUTATION"
    WORLD_MUTATION = "WORLD_MUTATION"
    DUPLEX_EVENT = "DUPLEX_EVENT"
    POLICY_EVENT = "POLICY_EVENT"
    APPROVAL_EVENT = "APPROVAL_EVENT"
    RUN_END = "RUN_END"
    INFRA_FAILURE = "INFRA_FAILURE"
    SIMULATOR_FALLBACK = "SIMULATOR_FALLBACK"
    # Ours.
    GATE_STATUS = "GATE_STATUS"
    SANDBOX_STARTED = "SANDBOX_STARTED"
    SANDBOX_STOPPED = "SANDBOX_STOPPED"
    FLOOR_CHANGE = "FLOOR_CHANGE"


Actor = str  # "user" | "agent" | "environment" | "harness"


class RunEvent(BaseModel):
    """One line of ``events.jsonl``; field order is the published key order."""

    seq: int
    type: EventType
    actor: Actor
    wall_time_ns: int = 0
    media_time_ms: int = 0
    payload: dict[str, Any] = Field(default_factory=dict)
    causal_parents: list[int] = Field(default_factory=list)
    run_id: str
    task_version: str
    condition: str

    def to_line(self) -> str:
        return json.dumps(self.model_dump(mode="json"), ensure_ascii=False, default=str)


class _LineWriter:
    """Appends lines to a file from a dedicated thread, flushing each one."""

    _STOP = object()

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("w", encoding="utf-8")
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._drain, name=f"event-log:{path.name}", daemon=True)
        self._thread.start()

    def put(self, line: str) -> None:
        self._queue.put(line)

    def _drain(self) -> None:
        while (item := self._queue.get()) is not self._STOP:
            self._file.write(item)  # type: ignore[arg-type]
            self._file.write("\n")
            self._file.flush()
        self._file.close()

    def close(self) -> None:
        self._queue.put(self._STOP)
        self._thread.join()


class EventLog:
    """Collects a session's events in order and mirrors them to ``events.jsonl`` when given a path."""

    def __init__(
        self,
        *,
        run_id: str,
        task_version: str,
        condition: str,
        path: Path | None = None,
        wall_clock_ns: Any = None,
    ) -> None:
        self.run_id = run_id
        self.task_version = task_version
        self.condition = condition
        self.events: list[RunEvent] = []
        self.path = path
        self._writer = _LineWriter(path) if path is not None else None
        self._wall_clock_ns = wall_clock_ns

    def emit(
        self, type: EventType, actor: Actor, media_time_ms: int, payload: dict[str, Any] | None = None
    ) -> RunEvent:
        event = RunEvent(
            seq=len(self.events),
            type=type,
            actor=actor,
            wall_time_ns=self._wall_clock_ns() if self._wall_clock_ns else 0,
            media_time_ms=int(media_time_ms),
            payload=payload or {},
            run_id=self.run_id,
            task_version=self.task_version,
            condition=self.condition,
        )
        self.events.append(event)
        if self._writer is not None:
            self._writer.put(event.to_line())
        return event

    def of_type(self, type: EventType) -> list[RunEvent]:
        return [e for e in self.events if e.type == type]

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
