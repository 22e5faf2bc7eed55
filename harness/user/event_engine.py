"""The task's event program: corrections and other user-side events fired by agent behaviour.

Each event fires at most once. Only the published trigger fields are consulted (§2.8); the
environment side effects (stale fields, world updates, approval revocation) are returned to the
runner, which owns the environment.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from harness.tasks.models import EventProgram, EventSpec

from .observation import Observation
from .trigger_matching import trigger_matches

__all__ = ["BEAT_TRIGGER_FIELDS", "EventEngine", "FiredEvent", "TIME_TRIGGER_FIELD"]

#: Trigger fields an event consults after every agent beat; all others are wildcards.
BEAT_TRIGGER_FIELDS: tuple[str, ...] = ("agent_act", "tool_call", "artifact_mutation", "commit_attempt")
#: Consulted only when the runner asks for time triggers (the text runner does).
TIME_TRIGGER_FIELD = "media_time_ms_gte"


@dataclass
class FiredEvent:
    event_id: str
    type: str
    media_time_ms: int
    fact_updates: dict[str, Any]
    #: ``"<artifact_id>.<field>"`` keys to mark stale now (the event's ``expected_repairs``).
    stale_fields: list[str]
    #: Dot path → value to apply to the world state.
    world_updates: dict[str, Any]
    #: Whether a pending approval must be revoked (the event forbids some tool commits).
    revokes_pending: bool
    spec: EventSpec


class EventEngine:
    """Fires pending events whose triggers match the latest agent beat."""

    def __init__(self, program: EventProgram) -> None:
        ids = [e.id for e in program.events]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"event program defines duplicate event ids: {duplicates}")
        self._events = list(program.events)
        self.fired: dict[str, int] = {}

    def fire(
        self,
        *,
        act_keys: Iterable[str],
        tool_calls: Iterable[str],
        artifact_mutations: Iterable[str],
        commit_attempts: Iterable[str],
        media_time_ms: int,
        time_triggers: bool,
    ) -> list[FiredEvent]:
        """Fire every not-yet-fired event whose consulted trigger fields all hold."""
        beat = Observation(
            media_time_ms=media_time_ms,
            new_act_keys=list(act_keys),
            tool_calls=list(tool_calls),
            artifact_mutations=list(artifact_mutations),
            commit_attempts=list(commit_attempts),
        )
        fields = BEAT_TRIGGER_FIELDS + ((TIME_TRIGGER_FIELD,) if time_triggers else ())
        fired: list[FiredEvent] = []
        for spec in self._events:
            if spec.id in self.fired or not trigger_matches(spec.trigger, beat, fields=fields):
                continue
            self.fired[spec.id] = media_time_ms
            fired.append(
                FiredEvent(
                    event_id=spec.id,
                    type=spec.type,
                    media_time_ms=media_time_ms,
                    fact_updates=dict(spec.fact_updates),
                    stale_fields=list(spec.expected_repairs),
                    world_updates=dict(spec.world_updates),
                    revokes_pending=bool(spec.forbidden_tool_commits),
                    spec=spec,
                )
            )
        return fired
