"""What the session view shows, as immutable values: one :class:`SessionView` per session.

Every value here is frozen (tuples, frozen dataclasses), so a view handed to a widget can never
change under it, a replay can keep checkpoints of earlier views for free, and the reducer that
builds them is a pure function (``reducer.py``).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from harness.events.payloads import FailingCheck
from harness.grading.report import FailedPredicate, FieldRow

__all__ = [
    "GATES",
    "SETTLED_WITHOUT_SESSION",
    "Approval",
    "ArtifactField",
    "ArtifactView",
    "ChannelView",
    "DuplexMark",
    "Gates",
    "LevelSample",
    "LevelTrack",
    "Segment",
    "SessionStatus",
    "SessionView",
    "ToolCallView",
    "TranscriptLine",
    "Verdict",
    "evolve",
]

GATES = ("GS", "PC", "RA", "WA")

SessionStatus = Literal[
    "queued", "running", "passed", "failed", "infra error", "not run", "harness error", "provider refused"
]
#: Statuses of a cell the campaign left without a scored record (``campaign.json``'s ``unscored_cells``).
SETTLED_WITHOUT_SESSION: tuple[SessionStatus, ...] = ("infra error", "not run", "harness error", "provider refused")

T = TypeVar("T")


def evolve(value: T, **changes: Any) -> T:
    """A copy of the frozen dataclass ``value`` with ``changes``.

    ``dataclasses.replace`` re-runs ``__init__`` and was most of the reducer's time; this copies
    the fields as they are (they are immutable already), about ten times faster.
    """
    assert changes.keys() <= value.__dict__.keys(), f"no such field: {changes.keys() - value.__dict__.keys()}"
    new = object.__new__(type(value))
    new.__dict__.update(value.__dict__)
    new.__dict__.update(changes)
    return new


#: Audio-level windows per chunk of a :class:`LevelTrack` (what one append copies).
LEVEL_CHUNK = 256


@dataclass(frozen=True)
class Segment:
    """``[start_ms, end_ms)`` of media time; ``end_ms`` is ``None`` while it is still open."""

    start_ms: int
    end_ms: int | None = None

    def covers(self, t_ms: int, now_ms: int) -> bool:
        end = now_ms if self.end_ms is None else self.end_ms
        return self.start_ms <= t_ms < end


@dataclass(frozen=True)
class LevelSample:
    t_ms: int
    dbfs: float


@dataclass(frozen=True)
class LevelTrack:
    """Every audio-level window of a channel, kept whole so the timeline draws any stretch of the
    session from its levels, however it was reached (live, seek, zoom or resize).

    Stored in chunks of :data:`LEVEL_CHUNK`: an append copies one chunk and the tuple of chunks,
    not the whole history (an hour is 36,000 windows, appended one event at a time).
    """

    chunks: tuple[tuple[LevelSample, ...], ...] = ()

    def appended(self, sample: LevelSample) -> LevelTrack:
        if self.chunks and len(self.chunks[-1]) < LEVEL_CHUNK:
            return LevelTrack((*self.chunks[:-1], (*self.chunks[-1], sample)))
        return LevelTrack((*self.chunks, (sample,)))

    def __len__(self) -> int:
        return sum(len(chunk) for chunk in self.chunks)

    @property
    def last(self) -> LevelSample | None:
        return self.chunks[-1][-1] if self.chunks else None

    def since(self, t_ms: int) -> list[LevelSample]:
        """The windows from the last one starting at or before ``t_ms`` (the one still sounding
        then) to the end, in time order."""
        starts = [chunk[0].t_ms for chunk in self.chunks]
        first = max(0, bisect.bisect_right(starts, t_ms) - 1)
        samples = [sample for chunk in self.chunks[first:] for sample in chunk]
        at = bisect.bisect_right([sample.t_ms for sample in samples], t_ms) - 1
        return samples[max(0, at):]


@dataclass(frozen=True)
class ChannelView:
    """One audio channel: when it spoke (VAD), which utterances it played, and how loud."""

    #: Speech activity from ``FLOOR_CHANGE`` (VAD on the recorded channel).
    speech: tuple[Segment, ...] = ()
    #: Utterances from ``USER_AUDIO_*`` / ``AGENT_AUDIO_*`` (used where VAD was not logged).
    utterances: tuple[Segment, ...] = ()
    levels: LevelTrack = field(default_factory=LevelTrack)

    @property
    def activity(self) -> tuple[Segment, ...]:
        return self.speech or self.utterances

    @property
    def speaking(self) -> bool:
        return bool(self.activity) and self.activity[-1].end_ms is None

    @property
    def level_dbfs(self) -> float | None:
        last = self.levels.last
        return last.dbfs if last else None


@dataclass(frozen=True)
class DuplexMark:
    """A delivered duplex event: what the agent should have done and what it did."""

    event_id: str
    type: str
    onset_ms: int
    delivery: str | None = None
    expected: str | None = None  # YIELD or CONTINUE
    stop_latency_ms: int | None = None
    max_stop_latency_ms: int | None = None
    yielded: bool | None = None
    agent_speaking_at_onset: bool | None = None
    #: ``yielded``, ``finished`` (ran out of queued audio in time: no yield) or ``kept_talking``.
    floor_outcome: str | None = None
    #: Why there was no floor to yield (``agent_paused``, ...): listed, never scored.
    no_opportunity: str | None = None

    @property
    def kind(self) -> str:
        """``barge-in`` (the agent should yield), ``back-channel`` (it should go on) or the type."""
        if self.expected == "YIELD":
            return "barge-in"
        if self.expected == "CONTINUE":
            return "back-channel"
        return self.type.lower()

    @property
    def correct(self) -> bool | None:
        """Right or wrong, as scored; ``None`` where the record is not scored (no floor, or finished)."""
        if self.yielded is None or self.expected is None or self.no_opportunity or self.floor_outcome == "finished":
            return None
        return self.yielded if self.expected == "YIELD" else not self.yielded


@dataclass(frozen=True)
class TranscriptLine:
    t_ms: int
    speaker: Literal["user", "agent", "event"]
    text: str
    response_id: str | None = None
    partial: bool = False
    #: Short labels: ``barge``, ``backchannel``, ``truncated``, ``nudge`` ...
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolCallView:
    call_id: str | None
    tool: str
    args: Any
    called_ms: int
    result: Any = None
    done: bool = False
    is_error: bool = False
    error: str | None = None
    auth_decision: str | None = None
    latency_ms: int | None = None
    mutations: tuple[str, ...] = ()


@dataclass(frozen=True)
class Approval:
    t_ms: int
    target_id: str
    action: str
    granted: bool


@dataclass(frozen=True)
class ArtifactField:
    name: str
    value: Any
    t_ms: int
    stale: bool = False


@dataclass(frozen=True)
class ArtifactView:
    artifact_id: str
    lifecycle: str = "EMPTY"
    fields: tuple[ArtifactField, ...] = ()

    def field(self, name: str) -> ArtifactField | None:
        return next((f for f in self.fields if f.name == name), None)


@dataclass(frozen=True)
class Gates:
    """The provisional grade after the latest tool call (``None``: not graded yet)."""

    GS: bool | None = None
    PC: bool | None = None
    RA: bool | None = None
    WA: bool | None = None
    pts: int | None = None
    #: The failing checks in words (shown), and structured (read: stale markers); a run logged
    #: before structured checks has only the words.
    failing: tuple[str, ...] = ()
    checks: tuple[FailingCheck, ...] = ()

    def of(self, gate: str) -> bool | None:
        return getattr(self, gate)


@dataclass(frozen=True)
class Verdict:
    outcome: str
    pts: int | None
    reason: str | None = None
    #: Why it failed: the result's explanation lines, else the last gates' ``failing``.
    explain: tuple[str, ...] = ()
    afa: float | None = None
    #: The graded evidence from ``result.json``: predicates that decided a gate against the agent,
    #: and every expected field with its verdict (empty until the result is read).
    predicates: tuple[FailedPredicate, ...] = ()
    fields: tuple[FieldRow, ...] = ()
    #: How the agent failed at its boundary (``result.json``'s ``agent_failure``), or why the cell
    #: has no session (an unscored cell's detail).
    detail: str | None = None


@dataclass(frozen=True)
class SessionView:
    """Everything the session view draws, at the media time of the last event reduced."""

    task_id: str = ""
    model_id: str = ""
    run_id: str = ""
    clock: str | None = None
    status: SessionStatus = "queued"
    clock_ms: int = 0
    events: int = 0
    last_seq: int = -1
    user: ChannelView = field(default_factory=ChannelView)
    agent: ChannelView = field(default_factory=ChannelView)
    overlaps: tuple[Segment, ...] = ()
    duplex: tuple[DuplexMark, ...] = ()
    transcript: tuple[TranscriptLine, ...] = ()
    tools: tuple[ToolCallView, ...] = ()
    approvals: tuple[Approval, ...] = ()
    artifacts: tuple[ArtifactView, ...] = ()
    gates: Gates = field(default_factory=Gates)
    verdict: Verdict | None = None
    errors: tuple[str, ...] = ()
    #: Events the live view never received (they came faster than it could follow; the session's
    #: ``events.jsonl`` has them): what is drawn is incomplete.
    skipped_events: int = 0

    def artifact(self, artifact_id: str) -> ArtifactView | None:
        return next((a for a in self.artifacts if a.artifact_id == artifact_id), None)
