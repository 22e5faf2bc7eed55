"""The cascade voice agent (``--model cascade:MODEL``): any chat LLM made into a full-duplex agent.

Ears, turn-taking and voice are local and need no network: webrtcvad per 20 ms frame, an
end-of-turn decision (``end_of_turn_ms`` of silence after speech on a free floor), local ASR
(faster-whisper ``tiny.en`` or pocketsphinx, in a worker thread), and hibari for speech. The
brain is a :class:`~harness.agents.chat_agent.ChatConversation` over chat completions, with the
task's tools as function tools. Barge-in is the cascade's own: when the user talks over it for
``barge_in_ms`` of voice, it drops its queued speech (``PlayoutCleared``) and listens.

Clock modes. ``virtual`` (the tests, with the fake chat server): recognition, the LLM and
synthesis are awaited inside ``send_audio``/``send_tool_result``, so the session is deterministic
and those stages take no media time. ``realtime`` (a live LLM): each response runs as a task and
its events appear when ready, while frames keep flowing. Either way the wall time of every stage
(VAD end → ASR done → LLM reply → first audio) is measured per turn and reported by ``metadata()``.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from harness.audio import agent_voice
from harness.audio.agent_asr import AgentTranscriber, Recognizer
from harness.audio.clip import Clip
from harness.audio.frames import FRAME_MS, AudioFrame
from harness.audio.vad import FrameVad
from harness.metrics.percentiles import percentile

from .chat_agent import (
    DEFAULT_API_KEY_ENV,
    ChatClient,
    ChatConversation,
    ChatEndpoint,
    ChatProviderError,
    ChatReply,
    ChatTransientError,
)
from .realtime import (
    AdapterError,
    AgentEvent,
    AudioDelta,
    CallEnded,
    PlayoutCleared,
    RealtimeAdapter,
    ResponseDone,
    SessionConfig,
    ToolCallRequested,
    ToolResult,
    TranscriptDelta,
    UserTranscript,
)

__all__ = ["BARGE_IN_MS", "END_OF_TURN_MS", "CascadeAgent", "TurnLatency"]

Synthesizer = Callable[[list[str]], Awaitable[dict[str, Clip]]]

#: Silence after the user's last voiced frame that ends their turn.
END_OF_TURN_MS = 500
#: Voice the user must speak over the agent, in one utterance, to make it stop (a back-channel
#: — "Right.", "Uh-huh." — stays under it).
BARGE_IN_MS = 500
#: Silence that separates two user utterances.
UTTERANCE_GAP_MS = 400
#: Frames kept from before the first voiced frame, so recognition hears the onset.
PRE_ROLL_FRAMES = 5


@dataclass
class TurnLatency:
    """Wall-clock milliseconds of one response's stages, from the user's end of turn."""

    asr_ms: float | None = None
    llm_ms: float | None = None
    tts_ms: float | None = None
    first_audio_ms: float | None = None


@dataclass
class _Floor:
    """What the cascade has heard of the user since its last response."""

    silence_ms: int = UTTERANCE_GAP_MS  # the call starts in silence
    utterance_voiced_ms: int = 0
    turn_heard: bool = False


class CascadeAgent(RealtimeAdapter):
    model_id: ClassVar[str] = "cascade"

    def __init__(
        self,
        model: str = "",
        endpoint: str = "",
        api_key_env: str = DEFAULT_API_KEY_ENV,
        *,
        client: ChatClient | None = None,
        recognizer: Recognizer | None = None,
        synthesizer: Synthesizer | None = None,
        clock_mode: Literal["virtual", "realtime"] = "realtime",
        end_of_turn_ms: int = END_OF_TURN_MS,
        barge_in_ms: int = BARGE_IN_MS,
    ) -> None:
        self.client = client or ChatClient(ChatEndpoint(model, endpoint, api_key_env))
        self.model_id = f"cascade:{self.client.endpoint.model}"  # type: ignore[misc]  # per instance
        self.clock_mode = clock_mode  # type: ignore[misc]
        self._transcriber = AgentTranscriber(recognizer)  # picks the recognizer now, loads it on first use
        self._synthesize = synthesizer or agent_voice.synthesize_agent_lines
        self.end_of_turn_ms = end_of_turn_ms
        self.barge_in_ms = barge_in_ms
        self._conversation: ChatConversation | None = None
        self._vad = FrameVad()  # its raw per-frame decision; the turn logic below smooths
        self._floor = _Floor()
        self._recent: deque[np.ndarray] = deque(maxlen=PRE_ROLL_FRAMES)
        self._utterance: list[np.ndarray] = []
        self._turn: list[np.ndarray] = []
        self._events: list[AgentEvent] = []
        self._now_ms = 0
        self._audio_until_ms = 0
        self._pending_calls: set[str] = set()
        self._busy: asyncio.Task[None] | None = None
        #: What a response task raised besides the endpoint's own failures, for ``poll_events``.
        self._failure: Exception | None = None
        self._ended = False
        self._latency: TurnLatency | None = None
        self._turn_started_ns = 0
        self.latencies: list[TurnLatency] = []

    # -- the adapter interface -----------------------------------------------------------------

    async def connect(self, config: SessionConfig) -> None:
        self._conversation = ChatConversation(self.client, config.instructions, config.tools)

    async def send_audio(self, frame: AudioFrame) -> None:
        self._now_ms = frame.start_ms
        voiced = self._vad.voiced(frame.pcm)
        floor = self._floor
        talking = self._audio_until_ms > self._now_ms
        if voiced and floor.silence_ms >= UTTERANCE_GAP_MS:  # a new utterance begins
            floor.utterance_voiced_ms = 0
            self._utterance = list(self._recent)
        if voiced or floor.silence_ms < UTTERANCE_GAP_MS:
            self._utterance.append(frame.pcm)
        if voiced:
            floor.utterance_voiced_ms += FRAME_MS
            floor.silence_ms = 0
        else:
            floor.silence_ms += FRAME_MS
        self._recent.append(frame.pcm)
        if talking and voiced and floor.utterance_voiced_ms >= self.barge_in_ms:
            self._barge_in()
            talking = False
        elif floor.turn_heard:
            self._turn.append(frame.pcm)
        elif voiced and not talking:  # speech on a free floor is a turn; under our words it is not
            floor.turn_heard = True
            self._turn = list(self._utterance)
        if floor.turn_heard and floor.silence_ms >= self.end_of_turn_ms and self._idle and not talking:
            audio, self._turn = np.concatenate(self._turn), []
            floor.turn_heard = False
            await self._run(self._answer(audio))

    async def send_tool_result(self, result: ToolResult) -> None:
        if self._conversation is None or result.call_id not in self._pending_calls:
            return
        self._conversation.add_tool_result(result.call_id, result.output, result.is_error)
        self._pending_calls.discard(result.call_id)
        if not self._pending_calls:
            await self._run(self._follow_up())

    def poll_events(self) -> list[AgentEvent]:
        if self._failure is not None:
            raise self._failure
        events, self._events = self._events, []
        return events

    def metadata(self) -> dict[str, Any]:
        stages = {name: [getattr(t, name) for t in self.latencies if getattr(t, name) is not None]
                  for name in ("asr_ms", "llm_ms", "tts_ms", "first_audio_ms")}
        return {
            "model": self.client.endpoint.model,
            "endpoint": self.client.endpoint.url,
            "asr": self._transcriber.describe(),
            "tts": agent_voice.AGENT_VOICE,
            "end_of_turn_ms": self.end_of_turn_ms,
            "barge_in_ms": self.barge_in_ms,
            "responses": len(self.latencies),
            "latency_ms": {name: {"p50": _rounded(percentile(values, 0.5)), "p95": _rounded(percentile(values, 0.95))}
                           for name, values in stages.items()},
            "turn_latencies_ms": [asdict(t) for t in self.latencies],
        }

    async def close(self) -> None:
        if self._busy is not None and not self._busy.done():
            self._busy.cancel()
        await self.client.aclose()

    # -- turn-taking ---------------------------------------------------------------------------

    @property
    def _idle(self) -> bool:
        """No response in flight, no tool result owed, the call not over."""
        return not self._pending_calls and not self._ended and (self._busy is None or self._busy.done())

    def _barge_in(self) -> None:
        self._events.append(PlayoutCleared())
        self._audio_until_ms = self._now_ms
        self._floor.turn_heard = True
        self._turn = list(self._utterance)

    async def _run(self, step: Coroutine[Any, Any, None]) -> None:
        """Await the step (virtual clock) or start it as a task (realtime); errors become events."""
        if self.clock_mode == "virtual":
            await self._guarded(step)
        else:
            self._busy = asyncio.create_task(self._guarded(step))

    async def _guarded(self, step: Coroutine[Any, Any, None]) -> None:
        """The endpoint's failures become events; anything else (the model's own failure, a bug of
        ours) propagates from the call that ran the step, or, from a response task, out of the
        next ``poll_events``: a task's exception must not vanish with the task."""
        try:
            await step
        except ChatTransientError as exc:
            self._events.append(AdapterError(str(exc), kind=exc.kind, retry_after_s=exc.retry_after_s))
        except ChatProviderError as exc:
            self._events.append(AdapterError(str(exc), kind=exc.kind))
        except Exception as exc:
            if self.clock_mode == "virtual":
                raise
            self._failure = exc

    # -- one response --------------------------------------------------------------------------

    async def _answer(self, audio: np.ndarray) -> None:
        assert self._conversation is not None
        self._turn_started_ns = time.perf_counter_ns()
        self._latency = TurnLatency()
        text = (await self._transcriber.transcribe(audio)).strip()
        self._latency.asr_ms = self._elapsed_ms()
        if not text:
            return  # nothing recognizable: keep listening
        self._events.append(UserTranscript(text))
        self._conversation.add_user(text)
        await self._step()

    async def _follow_up(self) -> None:
        await self._step()

    async def _step(self) -> None:
        assert self._conversation is not None
        reply = await self._conversation.step()
        if self._latency is not None and self._latency.llm_ms is None:
            self._latency.llm_ms = self._elapsed_ms()
        if reply.tool_calls:
            self._pending_calls = {c.call_id for c in reply.tool_calls}
            if reply.text:
                await self._speak(reply, done=False)
            self._events.extend(ToolCallRequested(c.call_id, c.name, c.arguments) for c in reply.tool_calls)
            return
        await self._speak(reply, done=True)

    async def _speak(self, reply: ChatReply, *, done: bool) -> None:
        if reply.text:
            clip = (await self._synthesize([reply.text]))[reply.text]
            if self._latency is not None and self._latency.first_audio_ms is None:
                self._latency.tts_ms = self._elapsed_ms() - (self._latency.llm_ms or 0.0)
                self._latency.first_audio_ms = self._elapsed_ms()
            self._events.append(TranscriptDelta(reply.text))
            self._events.append(AudioDelta(clip.pcm.astype("<i2").tobytes()))
            self._audio_until_ms = max(self._audio_until_ms, self._now_ms) + clip.duration_ms
        if done:
            self._events.append(ResponseDone())
            if self._latency is not None:
                self.latencies.append(self._latency)
                self._latency = None
        if reply.end_call:
            self._ended = True
            self._events.append(CallEnded())

    def _elapsed_ms(self) -> float:
        return (time.perf_counter_ns() - self._turn_started_ns) / 1e6


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)
