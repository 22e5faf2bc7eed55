"""What the user perceived during the last agent beat: the input of a flow step."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Observation"]


@dataclass
class Observation:
    """One agent beat as seen by the user simulator (every field defaults to empty)."""

    media_time_ms: int = 0
    new_act_keys: list[str] = field(default_factory=list)
    tool_calls: list[str] = field(default_factory=list)
    tool_results: list[str] = field(default_factory=list)
    #: ``"<artifact_id>.<field>"`` keys written in the beat.
    artifact_mutations: list[str] = field(default_factory=list)
    #: Action types of commit attempts in the beat.
    commit_attempts: list[str] = field(default_factory=list)
    #: Action types the agent asked the user to approve in the beat.
    approval_requests: list[str] = field(default_factory=list)
    fired_events: list[str] = field(default_factory=list)
    agent_speech_continuous_ms: int = 0
    repetition_counts: dict[str, int] = field(default_factory=dict)
    world_predicates: set[str] = field(default_factory=set)
