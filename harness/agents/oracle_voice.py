"""The oracle voice agent: the task's reference policy, spoken, on the virtual clock.

It behaves like a well-mannered duplex agent whose decisions are fixed: it listens with VAD, answers
each user turn (after ``REPLY_AFTER_SILENCE_MS`` of silence) with the next reference-policy turn —
tool calls first, then the turn's words through the live synthesizer — yields when the user talks
over it for ``YIELD_AFTER_SPEECH_MS`` (a short back-channel does not reach that), and ends the call
when the policy says so. All its events are produced inside ``send_audio``/``send_tool_result``,
so a session with it is deterministic.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from harness.audio import agent_voice
from harness.audio.clip import Clip
from harness.audio.frames import FRAME_MS, AudioFrame
from harness.audio.vad import FrameVad
from harness.tasks.models import PolicyTurn, ReferencePolicy

from .realtime import (
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
)

__all__ = ["Manners", "OracleVoiceAgent"]

Synthesizer = Callable[[list[str]], Awaitable[dict[str, Clip]]]

REPLY_AFTER_SILENCE_MS = 500
#: The oracle yields once the user, talking over it, has spoken this much (pauses not counted) in
#: one utterance: a back-channel ("Right.", "Yeah.", "Uh-huh." — under 450 ms of voice) never gets
#: there; a barge-in does, within the published 650 ms of its onset for a fluent speaker.
YIELD_AFTER_SPEECH_MS = 500
#: Silence that separates two user utterances (shorter pauses belong to one utterance).
UTTERANCE_GAP_MS = 400


@dataclass(frozen=True)
class Manners:
    """When the oracle takes and gives up the floor (tests vary them to script rude agents)."""

    reply_after_silence_ms: int = REPLY_AFTER_SILENCE_MS
    #: Answer while the user still talks, after this much of its speech (``None``: never).
    reply_after_speech_ms: int | None = None
    #: Yield after this much user speech over our own (``None``: never yield).
    yield_after_ms: int | None = YIELD_AFTER_SPEECH_MS


class OracleVoiceAgent(RealtimeAdapter):
    model_id: ClassVar[str] = "oracle"
    clock_mode: ClassVar[Literal["virtual", "realtime"]] = "virtual"

    def __init__(self, synthesizer: Synthesizer | None = None, manners: Manners | None = None) -> None:
        self._synthesize = synthesizer or agent_voice.synthesize_agent_lines
        manners = manners or Manners()
        self.reply_after_silence_ms = manners.reply_after_silence_ms
        self.reply_after_speech_ms = manners.reply_after_speech_ms
        self.yield_after_ms = manners.yield_after_ms
        self._turns: list[PolicyTurn] = []
        self._next_turn = 0
        self._clips: dict[str, Clip] = {}
        self._vad = FrameVad()  # only its raw per-frame decision is used
        self._events: list[AgentEvent] = []
        self._turn_heard = False
        self._user_speech_ms = 0
        self._user_silence_ms = UTTERANCE_GAP_MS  # the call starts in silence
        self._utterance_voiced_ms = 0
        self._audio_until_ms = 0
        self._now_ms = 0
        self._pending_calls: set[str] = set()
        self._pending_turn: PolicyTurn | None = None
        self._ended = False

    async def connect(self, config: SessionConfig) -> None:
        policy = config.reference_policy
        if not isinstance(policy, ReferencePolicy):
            raise ValueError("the oracle needs the task's reference/policy.yaml (it is registered privileged)")
        self._turns = list(policy.turns)
        self._clips = await self._synthesize([t.text for t in self._turns if t.text])

    async def send_audio(self, frame: AudioFrame) -> None:
        self._now_ms = frame.start_ms
        voiced = self._vad.voiced(frame.pcm)
        if voiced:
            if self._user_silence_ms >= UTTERANCE_GAP_MS:
                self._utterance_voiced_ms = 0
            self._utterance_voiced_ms += FRAME_MS
            self._user_speech_ms += FRAME_MS
            self._user_silence_ms = 0
        else:
            self._user_speech_ms = 0
            self._user_silence_ms += FRAME_MS
        talking = self._audio_until_ms > self._now_ms
        if talking and voiced and self.yield_after_ms is not None and self._utterance_voiced_ms >= self.yield_after_ms:
            self._events.append(PlayoutCleared())
            self._audio_until_ms = self._now_ms
            talking = False
        if voiced and not talking:
            # Only speech on a free floor is a turn to answer; a back-channel under our own words is not.
            self._turn_heard = True
        ready = self._turn_heard and self._user_silence_ms >= self.reply_after_silence_ms
        if self.reply_after_speech_ms is not None and self._user_speech_ms >= self.reply_after_speech_ms:
            ready = True
        if ready and not talking and not self._pending_calls and not self._ended:
            self._turn_heard = False
            self._take_turn()

    async def send_tool_result(self, result: ToolResult) -> None:
        self._pending_calls.discard(result.call_id)
        if not self._pending_calls and self._pending_turn is not None:
            turn, self._pending_turn = self._pending_turn, None
            self._speak(turn)

    def poll_events(self) -> list[AgentEvent]:
        events, self._events = self._events, []
        return events

    def _take_turn(self) -> None:
        if self._next_turn >= len(self._turns):
            self._ended = True
            self._events.append(CallEnded())
            return
        turn = self._turns[self._next_turn]
        self._next_turn += 1
        if not turn.tool_calls:
            self._speak(turn)
            return
        self._pending_turn = turn
        for index, call in enumerate(turn.tool_calls):
            call_id = f"call_{self._next_turn}_{index}"
            self._pending_calls.add(call_id)
            self._events.append(ToolCallRequested(call_id, call.name, _json(call.args)))

    def _speak(self, turn: PolicyTurn) -> None:
        if turn.text:
            clip = self._clips[turn.text]
            self._events.append(TranscriptDelta(turn.text))
            self._events.append(AudioDelta(clip.pcm.astype("<i2").tobytes()))
            self._audio_until_ms = max(self._audio_until_ms, self._now_ms) + clip.duration_ms
        self._events.append(ResponseDone())
        if turn.end_call:
            self._ended = True
            self._events.append(CallEnded())


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
