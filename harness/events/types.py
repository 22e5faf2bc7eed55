"""The envelope of every event of a session: its type, who caused it, and both clocks.

Keys and event types follow the published ``events.jsonl`` format; our additions are new types,
never changed meanings. Each type's payload has its own model (``payloads.py``).
"""

from __future__ import annotations

import json
from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["SCHEMA_VERSION", "Actor", "EventType", "RunEvent"]

#: Version of our event-log schema, written in ``RUN_START``.
SCHEMA_VERSION = "apex-voice.events/2"


class EventType(str, Enum):
    # Published types.
    RUN_START = "RUN_START"
    USER_STATE_TRANSITION = "USER_STATE_TRANSITION"
    USER_PLAN = "USER_PLAN"
    USER_TEXT = "USER_TEXT"
    USER_AUDIO_START = "USER_AUDIO_START"
    USER_AUDIO_END = "USER_AUDIO_END"
    AGENT_AUDIO_START = "AGENT_AUDIO_START"
    AGENT_AUDIO_END = "AGENT_AUDIO_END"
    AGENT_TEXT = "AGENT_TEXT"
    AGENT_TRANSCRIPT_PARTIAL = "AGENT_TRANSCRIPT_PARTIAL"
    AGENT_ACT = "AGENT_ACT"
    TOOL_CALL = "TOOL_CALL"
    TOOL_RESULT = "TOOL_RESULT"
    ARTIFACT_MUTATION = "ARTIFACT_MUTATION"
    WORLD_MUTATION = "WORLD_MUTATION"
    DUPLEX_EVENT = "DUPLEX_EVENT"
    APPROVAL_EVENT = "APPROVAL_EVENT"
    RUN_END = "RUN_END"
    INFRA_FAILURE = "INFRA_FAILURE"
    SIMULATOR_FALLBACK = "SIMULATOR_FALLBACK"
    # Ours.
    GATE_STATUS = "GATE_STATUS"
    SANDBOX_STARTED = "SANDBOX_STARTED"
    FLOOR_CHANGE = "FLOOR_CHANGE"
    AUDIO_LEVEL = "AUDIO_LEVEL"
    USER_TRANSCRIPT_PARTIAL = "USER_TRANSCRIPT_PARTIAL"
    AGENT_SIGNAL = "AGENT_SIGNAL"
    ADAPTER_INFO = "ADAPTER_INFO"
    HARNESS_ERROR = "HARNESS_ERROR"
    SPEECH_AGREEMENT = "SPEECH_AGREEMENT"
    AGENT_FAILURE = "AGENT_FAILURE"


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
        data = self.model_dump(mode="json")
        line = json.dumps(data, ensure_ascii=False, default=str)
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate the agent sent: escaped, still valid JSON
            line = json.dumps(data, ensure_ascii=True, default=str)
        return line
