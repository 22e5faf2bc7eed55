"""The two audio channels of a duplex session, each producing exactly one 20 ms frame per tick.

The user channel plays scheduled utterances back to back; the agent channel plays the agent's
audio in arrival order at media speed (audio that arrives faster than real time waits in the
queue, up to a bound). Neither channel mixes: overlap only ever happens *between* the channels.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.agents.limits import AGENT_LIMITS, AgentLimits
from harness.audio.frames import FRAME_SAMPLES, ms_to_samples, samples_to_ms
from harness.blame.codes import FailureCode
from harness.blame.errors import AgentFailure
from harness.user.flow_engine import UserPlan

__all__ = ["AgentChannel", "AgentResponse", "UserChannel", "UserUtterance"]


@dataclass
class UserUtterance:
    """One clip the simulated user speaks, with what it means for the session."""

    pcm: np.ndarray
    text: str
    plan: UserPlan | None = None  # None for recovery lines (closing, nudge, restated answer)
    flags: dict[str, bool] = field(default_factory=dict)
    onset_ms: int | None = None

    @property
    def duration_ms(self) -> int:
        return samples_to_ms(len(self.pcm))


class UserChannel:
    """Plays queued utterances back to back; reports starts and ends to the caller."""

    def __init__(self) -> None:
        self._queue: deque[UserUtterance] = deque()
        self.current: UserUtterance | None = None
        self._position = 0

    @property
    def busy(self) -> bool:
        return self.current is not None or bool(self._queue)

    def enqueue(self, utterance: UserUtterance) -> None:
        self._queue.append(utterance)

    def next_frame(self, now_ms: int) -> tuple[np.ndarray, UserUtterance | None, UserUtterance | None]:
        """The frame at ``now_ms`` plus the utterance that started and the one that ended in it."""
        started = ended = None
        if self.current is None and self._queue:
            self.current = self._queue.popleft()
            self.current.onset_ms = now_ms
            self._position = 0
            started = self.current
        if self.current is None:
            return np.zeros(FRAME_SAMPLES, dtype=np.int16), None, None
        chunk = self.current.pcm[self._position : self._position + FRAME_SAMPLES]
        self._position += FRAME_SAMPLES
        if self._position >= len(self.current.pcm):
            ended, self.current = self.current, None
        if len(chunk) < FRAME_SAMPLES:
            chunk = np.concatenate([chunk, np.zeros(FRAME_SAMPLES - len(chunk), dtype=np.int16)])
        return chunk, started, ended


@dataclass
class AgentResponse:
    """One agent response as the adapter delivered it (ids, words, audio queued and played).

    These are the adapter's units, used to route transcripts and for truncation feedback; speech
    activity itself is measured on the played audio (``agent_speech.py``).
    """

    response_id: str
    queued_samples: int = 0
    played_samples: int = 0
    done: bool = False


class AgentChannel:
    """Queues the agent's audio and plays it at media speed, one frame per tick.

    The queue is a deque of the deltas as they arrived, read from the head at an offset, so an
    enqueue and a frame each cost time linear in the samples they move, however many deltas wait.
    It holds at most ``limits.queued_audio_ms`` of media in at most ``limits.queued_audio_deltas``
    deltas (a numpy array costs ~100 bytes however short, so one-sample deltas would otherwise cost
    50 times their audio): an agent that sends audio faster than it can play that far ahead has
    flooded the harness, and the enqueue that would pass a bound raises
    :class:`~harness.blame.errors.AgentFailure` (``over_limit``) with nothing queued.
    """

    def __init__(self, limits: AgentLimits = AGENT_LIMITS) -> None:
        self._chunks: deque[np.ndarray] = deque()
        self._head = 0  # samples of _chunks[0] already played
        self._queued = 0
        self.max_queued_samples = ms_to_samples(limits.queued_audio_ms)
        self.max_queued_deltas = limits.queued_audio_deltas
        self._owners: deque[list[Any]] = deque()  # [response, item_id, samples left]
        #: Samples played per (response_id, item_id): what truncation feedback reports.
        self.played_by_item: dict[tuple[str, str | None], int] = {}

    @property
    def queued_samples(self) -> int:
        return self._queued

    @property
    def chunk_count(self) -> int:
        """Deltas held in the queue (what an enqueue or a frame may have to walk)."""
        return len(self._chunks)

    @property
    def playing(self) -> AgentResponse | None:
        """The response whose audio plays next (``None`` when the queue is empty)."""
        return self._owners[0][0] if self._owners else None

    def enqueue(self, response: AgentResponse, item_id: str | None, pcm: bytes) -> np.ndarray:
        """Queue ``pcm`` (PCM16 little-endian) to play after what is queued; returns its samples."""
        samples = np.frombuffer(pcm, dtype="<i2").astype(np.int16)
        if not len(samples):
            return samples
        if self._queued + len(samples) > self.max_queued_samples:
            raise AgentFailure(
                FailureCode.OVER_LIMIT,
                f"the agent queued {samples_to_ms(self._queued + len(samples))} ms of audio ahead of playout "
                f"(the limit is {samples_to_ms(self.max_queued_samples)} ms)",
            )
        if len(self._chunks) >= self.max_queued_deltas:
            raise AgentFailure(FailureCode.OVER_LIMIT, f"the agent queued more than {self.max_queued_deltas} audio deltas "
                                             f"ahead of playout ({samples_to_ms(self._queued)} ms of audio)")
        self._chunks.append(samples)
        self._queued += len(samples)
        response.queued_samples += len(samples)
        if self._owners and self._owners[-1][0] is response and self._owners[-1][1] == item_id:
            self._owners[-1][2] += len(samples)
        else:
            self._owners.append([response, item_id, len(samples)])
        return samples

    def clear(self) -> list[AgentResponse]:
        """Drop every queued sample (the agent stopped itself); returns the responses cut short."""
        cut: list[AgentResponse] = []
        for owner in self._owners:
            if not any(owner[0] is seen for seen in cut):
                cut.append(owner[0])
        self._chunks.clear()
        self._head = self._queued = 0
        self._owners.clear()
        return cut

    def _take(self, frame: np.ndarray) -> int:
        """Fill ``frame`` from the head of the queue; how many samples it took."""
        filled = 0
        while filled < len(frame) and self._chunks:
            chunk = self._chunks[0]
            used = min(len(chunk) - self._head, len(frame) - filled)
            frame[filled : filled + used] = chunk[self._head : self._head + used]
            filled += used
            self._head += used
            if self._head == len(chunk):
                self._chunks.popleft()
                self._head = 0
        self._queued -= filled
        return filled

    def next_frame(self) -> tuple[np.ndarray, list[tuple[AgentResponse, str | None, int]]]:
        """The next frame and, per (response, item), how many of its samples it played."""
        frame = np.zeros(FRAME_SAMPLES, dtype=np.int16)
        take = self._take(frame)
        played: list[tuple[AgentResponse, str | None, int]] = []
        remaining = take
        while remaining and self._owners:
            owner = self._owners[0]
            used = min(owner[2], remaining)
            remaining -= used
            owner[2] -= used
            owner[0].played_samples += used
            key = (owner[0].response_id, owner[1])
            self.played_by_item[key] = self.played_by_item.get(key, 0) + used
            played.append((owner[0], owner[1], used))
            if owner[2] == 0:
                self._owners.popleft()
        return frame, played
