"""The interface every realtime (speech-to-speech) agent implements, and its normalized events.

Provider specifics stay inside each adapter: the duplex runner only sends 20 ms user frames and
tool results, and drains normalized events once per frame. Adapters on the virtual clock (the
oracle, the no-op agent, scripted test agents) produce their events synchronously inside
``send_audio`` / ``send_tool_result``, which makes their sessions deterministic; adapters for live
providers queue events from their socket reader and run on the realtime clock.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from harness.audio.frames import AudioFrame

__all__ = [
    "AdapterError",
    "AgentEvent",
    "AudioDelta",
    "CallEnded",
    "PlayoutCleared",
    "RealtimeAdapter",
    "ResponseDone",
    "SessionConfig",
    "SpeechStarted",
    "SpeechStopped",
    "ToolCallRequested",
    "TranscriptDelta",
]


@dataclass(frozen=True, slots=True)
class AudioDelta:
    """Agent speech, PCM16 mono 24 kHz little-endian. It plays out at media speed, queued."""

    pcm: bytes


@dataclass(frozen=True, slots=True)
class TranscriptDelta:
    """Words of the agent's current response (what it says, as the provider reports it)."""

    text: str


@dataclass(frozen=True, slots=True)
class SpeechStarted:
    """The agent (or its provider's VAD) noticed the user speaking."""


@dataclass(frozen=True, slots=True)
class SpeechStopped:
    """The agent noticed the user stopped speaking."""


@dataclass(frozen=True, slots=True)
class ToolCallRequested:
    call_id: str
    name: str
    #: JSON text as the model produced it; may be malformed (the runner reports that to the model).
    arguments: str


@dataclass(frozen=True, slots=True)
class PlayoutCleared:
    """The agent stopped its own speech: audio it sent but that has not played yet is dropped.

    This is the agent's decision (a client truncating playback on the provider's speech-started
    signal, or our oracle yielding); the harness never cancels agent speech on its own.
    """


@dataclass(frozen=True, slots=True)
class ResponseDone:
    """The agent finished producing the current response (its audio may still be playing)."""


@dataclass(frozen=True, slots=True)
class CallEnded:
    """The agent hangs up once its queued audio has played."""


@dataclass(frozen=True, slots=True)
class AdapterError:
    message: str
    #: True for infrastructure trouble (dropped socket, 5xx): the session is retried, not scored.
    transient: bool = False


AgentEvent = (
    AudioDelta
    | TranscriptDelta
    | SpeechStarted
    | SpeechStopped
    | ToolCallRequested
    | PlayoutCleared
    | ResponseDone
    | CallEnded
    | AdapterError
)


@dataclass
class SessionConfig:
    instructions: str
    #: Tool schemas as listed by the task's MCP server (name, description, JSON-schema parameters).
    tools: list[dict[str, Any]]
    voice: str = "soft-spoken-gentleman"
    #: Extra data an in-process agent may use (the oracle gets the task's reference policy here).
    extras: dict[str, Any] = field(default_factory=dict)


class RealtimeAdapter(ABC):
    """One agent session. Constructors do no I/O; ``connect`` does.

    Raises:
        ConnectionError (or a subclass): infrastructure failure while connecting or streaming;
            the session is retried and never scored against the model.
    """

    model_id: ClassVar[str]
    #: ``virtual``: deterministic in-process agent, runs on the virtual media clock.
    #: ``realtime``: a live provider; frames are paced to wall time.
    clock_mode: ClassVar[Literal["virtual", "realtime"]] = "realtime"

    @abstractmethod
    async def connect(self, config: SessionConfig) -> None: ...

    @abstractmethod
    async def send_audio(self, frame: AudioFrame) -> None:
        """One 20 ms user frame (silence included: the stream is continuous)."""

    @abstractmethod
    async def send_tool_result(self, call_id: str, output: Any) -> None: ...

    @abstractmethod
    def poll_events(self) -> list[AgentEvent]:
        """Every event available now, in order; never blocks."""

    async def close(self) -> None:
        return None
