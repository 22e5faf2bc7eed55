"""Who spoke when: speech intervals of both channels, read from the event stream.

Intervals are bounded by the audio events the runner writes on the media clock: the user's clips
(``USER_AUDIO_START``/``END``) and the agent's speech segments measured on the played agent channel
(``AGENT_AUDIO_START``/``END`` paired by ``segment``; published runs pair them by ``response_id``),
so overlap and silence describe what was actually played, including an agent that talks over the user. The
session lasts until ``RUN_END`` (at least until the last speech ends); speech still playing at the
end of the session is cut there.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.events import EventType, RunEvent, payload_as
from harness.events.payloads import AgentAudioEnd, AgentAudioStart, UserAudioStart

from .percentiles import rounded

__all__ = [
    "Interval",
    "Timeline",
    "UserUtterance",
    "build_timeline",
    "intersection_ms",
    "merge_intervals",
    "session_end_ms",
]


@dataclass(frozen=True, slots=True)
class Interval:
    start_ms: int
    end_ms: int

    @property
    def length_ms(self) -> int:
        return max(0, self.end_ms - self.start_ms)


@dataclass(frozen=True, slots=True)
class UserUtterance:
    """One user clip as played, with the flags of its ``USER_AUDIO_START`` (``backchannel``, ...)."""

    interval: Interval
    flags: frozenset[str] = frozenset()


@dataclass
class Timeline:
    """Both channels' speech and the statistics derived from them (ms, ratios of the duration)."""

    user_utterances: list[UserUtterance]
    agent_responses: list[Interval]
    duration_ms: int
    user: list[Interval] = field(init=False)
    agent: list[Interval] = field(init=False)

    def __post_init__(self) -> None:
        self.user = merge_intervals(u.interval for u in self.user_utterances)
        self.agent = merge_intervals(self.agent_responses)

    @property
    def user_speaking_ms(self) -> int:
        return sum(i.length_ms for i in self.user)

    @property
    def agent_speaking_ms(self) -> int:
        return sum(i.length_ms for i in self.agent)

    @property
    def overlap_ms(self) -> int:
        return intersection_ms(self.user, self.agent)

    @property
    def speech_ms(self) -> int:
        return self.user_speaking_ms + self.agent_speaking_ms - self.overlap_ms

    def _ratio(self, part_ms: int) -> float | None:
        return rounded(part_ms / self.duration_ms) if self.duration_ms > 0 else None

    @property
    def overlap_ratio(self) -> float | None:
        return self._ratio(self.overlap_ms)

    @property
    def silence_ratio(self) -> float | None:
        return self._ratio(self.duration_ms - self.speech_ms)

    def to_dict(self) -> dict[str, Any]:
        return {
            "duration_ms": self.duration_ms,
            "user_speaking_ms": self.user_speaking_ms,
            "agent_speaking_ms": self.agent_speaking_ms,
            "overlap_ms": self.overlap_ms,
            "overlap_ratio": self.overlap_ratio,
            "silence_ratio": self.silence_ratio,
        }


def merge_intervals(intervals: Iterable[Interval]) -> list[Interval]:
    """Sorted, non-overlapping intervals covering the same time (touching ones are joined)."""
    merged: list[Interval] = []
    for interval in sorted(intervals, key=lambda i: (i.start_ms, i.end_ms)):
        if interval.length_ms == 0:
            continue
        if merged and interval.start_ms <= merged[-1].end_ms:
            last = merged[-1]
            merged[-1] = Interval(last.start_ms, max(last.end_ms, interval.end_ms))
        else:
            merged.append(interval)
    return merged


def intersection_ms(a: Sequence[Interval], b: Sequence[Interval]) -> int:
    """Total time covered by both of two merged interval lists."""
    total, i, j = 0, 0, 0
    while i < len(a) and j < len(b):
        total += max(0, min(a[i].end_ms, b[j].end_ms) - max(a[i].start_ms, b[j].start_ms))
        if a[i].end_ms <= b[j].end_ms:
            i += 1
        else:
            j += 1
    return total


def session_end_ms(events: Sequence[RunEvent]) -> int:
    """Media time of ``RUN_END``, else of the last event (a session cut short has no ``RUN_END``)."""
    for event in reversed(events):
        if event.type == EventType.RUN_END:
            return event.media_time_ms
    return max((e.media_time_ms for e in events), default=0)


def build_timeline(events: Sequence[RunEvent]) -> Timeline:
    """The speech timeline of one session's events."""
    end_ms = session_end_ms(events)
    open_user: deque[RunEvent] = deque()
    open_agent: dict[tuple[str, int | str | None], int] = {}
    users: list[UserUtterance] = []
    agents: list[Interval] = []
    for event in events:
        if event.type == EventType.USER_AUDIO_START:
            open_user.append(event)
        elif event.type == EventType.USER_AUDIO_END and open_user:
            users.append(_utterance(open_user.popleft(), event.media_time_ms))
        elif event.type == EventType.AGENT_AUDIO_START:
            open_agent[_agent_key(event)] = event.media_time_ms
        elif event.type == EventType.AGENT_AUDIO_END:
            start = open_agent.pop(_agent_key(event), None)
            if start is not None:
                agents.append(Interval(start, event.media_time_ms))
    users.extend(_utterance(start, end_ms) for start in open_user)
    agents.extend(Interval(start, end_ms) for start in open_agent.values())
    users.sort(key=lambda u: u.interval.start_ms)
    agents.sort(key=lambda i: i.start_ms)
    last_speech = max((i.end_ms for i in [*agents, *(u.interval for u in users)]), default=0)
    return Timeline(users, agents, max(end_ms, last_speech))


def _agent_key(event: RunEvent) -> tuple[str, int | str | None]:
    """Our runs pair agent audio by measured speech ``segment``; published runs by ``response_id``."""
    audio: AgentAudioStart | AgentAudioEnd = (
        payload_as(event, AgentAudioStart) if event.type == EventType.AGENT_AUDIO_START else payload_as(event, AgentAudioEnd)
    )
    return ("segment", audio.segment) if audio.segment is not None else ("response", audio.response_id)


def _utterance(start: RunEvent, end_ms: int) -> UserUtterance:
    flags = frozenset(payload_as(start, UserAudioStart).flags())
    return UserUtterance(Interval(start.media_time_ms, max(start.media_time_ms, end_ms)), flags)
