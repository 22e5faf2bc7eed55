"""A loopback Gemini Live (BidiGenerateContent) server: a real websocket speaking the real protocol.

Every client message is validated against ``google.genai.types.LiveClientMessage`` (``setup``'s
``realtimeInputConfig``, which that model lacks although the SDK sends it, is validated on its own
with ``types.RealtimeInputConfig``); an invalid one closes the socket with 1007, as the service
does, and is recorded in ``invalid``. Every message the fake sends is validated against
``types.LiveServerMessage`` and uses camelCase top-level keys (the SDK's receiver needs them).

The agent is the same scripted one as the OpenAI fake's (``listener.Listener``: the oracle's
manners on the 16 kHz input, upsampled to 24 kHz for the VAD): it answers after 500 ms of silence,
calls the turn's tools with ``toolCall`` (ids and names), speaks after the ``toolResponse``, and on
a barge-in stops and says ``interrupted``. Conversations are resumable: a ``sessionResumptionUpdate``
handle follows every turn, and a new socket whose ``setup`` carries it continues the conversation.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from google.genai import types
from pydantic import ValidationError
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from harness.audio.clip import Clip
from harness.audio.frames import FRAME_SAMPLES, SAMPLE_RATE
from harness.audio.resample import StreamingResampler
from harness.tasks.models import PolicyTurn

from .listener import Heard, Listener
from .loopback import LoopbackFake

__all__ = ["GEMINI_PATH", "QUIRKS", "GeminiLiveFake"]

GEMINI_PATH = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
QUIRKS = frozenset(
    {
        "tool_call_mid_utterance",  # half the words, then the toolCall; the rest after the toolResponse
        "premature_turn_complete",  # the first answer is a turnComplete with no audio
        "close_1011_after_turn",  # keepalive failure right after the first spoken turn (resumable)
        "go_away_after_turn",  # session end announced (goAway) and carried out after the first spoken turn
        "rate_limited",  # refuse the upgrade with HTTP 429 and Retry-After
    }
)
_AUDIO_CHUNK_SAMPLES = SAMPLE_RATE // 5
_INPUT_RATE = 16_000


@dataclass
class _Turn:
    turn: PolicyTurn
    pending: dict[str, str] = field(default_factory=dict)  # call id → name
    audio_from_ms: int = 0


class _Conversation:
    """The provider-side state of one conversation (it outlives a socket when resumed)."""

    def __init__(self, fake: GeminiLiveFake, ws: ServerConnection) -> None:
        self.fake = fake
        self.ws = ws
        self.listener = Listener()
        self.upsample = StreamingResampler(_INPUT_RATE, SAMPLE_RATE)
        self.pending_audio = np.zeros(0)
        self.next_turn = 0
        self.current: _Turn | None = None
        self.spoke_once = False
        self.premature_done = False
        self.usage = {"promptTokenCount": 0, "responseTokenCount": 0}

    async def send(self, message: dict[str, Any]) -> None:
        types.LiveServerMessage.model_validate(message)
        await self.fake.deliver(self.ws, message)

    async def on_audio(self, data: bytes) -> None:
        samples = np.frombuffer(data, dtype="<i2")
        self.pending_audio = np.concatenate([self.pending_audio, self.upsample.process(samples)])
        while len(self.pending_audio) >= FRAME_SAMPLES:
            frame = np.clip(np.round(self.pending_audio[:FRAME_SAMPLES]), -32768, 32767).astype(np.int16)
            self.pending_audio = self.pending_audio[FRAME_SAMPLES:]
            busy = self.current is not None and bool(self.current.pending)
            for heard in self.listener.hear(frame, busy=busy):
                if heard is Heard.BARGE_IN:
                    await self.send({"serverContent": {"interrupted": True}})
                elif heard is Heard.TURN_END:
                    await self.take_turn()

    async def take_turn(self) -> None:
        if self.next_turn >= len(self.fake.turns):
            return
        if "premature_turn_complete" in self.fake.quirks and not self.premature_done:
            self.premature_done = True
            await self.send({"serverContent": {"turnComplete": True}})
            return
        turn = self.current = _Turn(self.fake.turns[self.next_turn])
        self.next_turn += 1
        if not turn.turn.tool_calls:
            await self.speak(turn)
            return
        if "tool_call_mid_utterance" in self.fake.quirks and turn.turn.text:
            clip = self.fake.clips[turn.turn.text]
            turn.audio_from_ms = clip.duration_ms // 2
            await self.stream_audio(clip, 0, turn.audio_from_ms)
        calls = []
        for call in turn.turn.tool_calls:
            call_id = f"fc_{next(self.fake.ids)}"
            turn.pending[call_id] = call.name
            calls.append({"id": call_id, "name": call.name, "args": call.args})
        await self.send({"toolCall": {"functionCalls": calls}})

    async def on_tool_response(self, response: dict[str, Any]) -> None:
        turn = self.current
        for reply in response.get("functionResponses", []):
            if turn is None or turn.pending.get(reply.get("id")) != reply.get("name"):
                self.fake.violations.append(f"toolResponse for unknown call {reply.get('id')!r} ({reply.get('name')!r})")
                continue
            del turn.pending[reply["id"]]
        if turn is not None and not turn.pending:
            await self.speak(turn)

    async def speak(self, turn: _Turn) -> None:
        text = turn.turn.text
        if text:
            clip = self.fake.clips[text]
            await self.send({"serverContent": {"outputTranscription": {"text": text}}})
            await self.stream_audio(clip, turn.audio_from_ms, clip.duration_ms)
        self.usage["promptTokenCount"] += 100
        self.usage["responseTokenCount"] += 25
        await self.send(
            {
                "usageMetadata": {
                    **self.usage,
                    "promptTokensDetails": [{"modality": "AUDIO", "tokenCount": self.usage["promptTokenCount"]}],
                    "responseTokensDetails": [{"modality": "AUDIO", "tokenCount": self.usage["responseTokenCount"]}],
                }
            }
        )
        await self.send({"serverContent": {"turnComplete": True}})
        handle = f"handle_{next(self.fake.ids)}"
        self.fake.conversations[handle] = self
        await self.send({"sessionResumptionUpdate": {"newHandle": handle, "resumable": True}})
        self.current = None
        if text and not self.spoke_once:
            self.spoke_once = True
            if "close_1011_after_turn" in self.fake.quirks:
                await self.ws.close(1011, "keepalive ping timeout")
            elif "go_away_after_turn" in self.fake.quirks:
                await self.send({"goAway": {"timeLeft": "0s"}})
                await self.ws.close(1000, "session time limit")

    async def stream_audio(self, clip: Clip, from_ms: int, to_ms: int) -> None:
        pcm = clip.pcm[from_ms * SAMPLE_RATE // 1000 : to_ms * SAMPLE_RATE // 1000]
        for start in range(0, len(pcm), _AUDIO_CHUNK_SAMPLES):
            chunk = pcm[start : start + _AUDIO_CHUNK_SAMPLES].astype("<i2").tobytes()
            await self.send(
                {"serverContent": {"modelTurn": {"parts": [{"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": base64.b64encode(chunk).decode()}}]}}}
            )
        self.listener.speak(len(pcm) * 1000 // SAMPLE_RATE)


class GeminiLiveFake(LoopbackFake):
    """``async with GeminiLiveFake(turns, api_key=...) as fake:`` then connect to ``fake.url``."""

    known_quirks = QUIRKS
    rate_limit_body = '{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}'

    def __init__(self, turns: list[PolicyTurn] | None = None, *, api_key: str | None = None, quirks: frozenset[str] | set[str] = frozenset()) -> None:
        super().__init__(turns, api_key=api_key, quirks=quirks, path=GEMINI_PATH)
        self.ids = itertools.count(1)
        self.setups: list[dict[str, Any]] = []
        self.conversations: dict[str, _Conversation] = {}

    def received_with(self, key: str) -> list[dict[str, Any]]:
        return [m for m in self.received if key in m]

    def sent_with(self, key: str, inner: str | None = None) -> list[dict[str, Any]]:
        return [m for m in self.sent if key in m and (inner is None or inner in m[key])]

    def _validate(self, message: dict[str, Any]) -> None:
        if set(message) - {"setup", "realtimeInput", "toolResponse", "clientContent"}:
            raise ValueError(f"top-level keys must be camelCase, one of setup/realtimeInput/toolResponse: {sorted(message)}")
        if "setup" in message:
            setup = dict(message["setup"])
            types.RealtimeInputConfig.model_validate(setup.pop("realtimeInputConfig", {}))
            types.LiveClientMessage.model_validate({"setup": setup})
        else:
            types.LiveClientMessage.model_validate(message)

    async def _serve(self, ws: ServerConnection) -> None:
        conversation: _Conversation | None = None
        try:
            async for raw in ws:
                message = json.loads(raw)
                self.received.append(message)
                try:
                    self._validate(message)
                except (ValidationError, ValueError) as exc:
                    self.invalid.append(str(exc).splitlines()[0])
                    await ws.close(1007, "invalid message")
                    return
                if conversation is None:
                    conversation = await self._set_up(ws, message)
                    if conversation is None:
                        return
                elif "realtimeInput" in message and "audio" in message["realtimeInput"]:
                    await conversation.on_audio(base64.b64decode(message["realtimeInput"]["audio"]["data"]))
                elif "toolResponse" in message:
                    await conversation.on_tool_response(message["toolResponse"])
        except ConnectionClosed:
            pass

    async def _set_up(self, ws: ServerConnection, message: dict[str, Any]) -> _Conversation | None:
        if "setup" not in message:
            self.violations.append(f"first message is not setup: {sorted(message)}")
            await ws.close(1007, "setup must come first")
            return None
        if self.api_key is not None and ws.request.headers.get("x-goog-api-key") != self.api_key:
            await ws.close(1008, "API key not valid. Please pass a valid API key.")
            return None
        self.setups.append(message["setup"])
        handle = (message["setup"].get("sessionResumption") or {}).get("handle")
        conversation = self.conversations.get(handle) if handle else None
        if handle and conversation is None:
            await ws.close(1007, f"unknown session resumption handle {handle}")
            return None
        if conversation is None:
            conversation = _Conversation(self, ws)
        conversation.ws = ws
        await conversation.send({"setupComplete": {"sessionId": f"session_{next(self.ids)}"}})
        return conversation


async def _serve_forever() -> None:
    async with GeminiLiveFake() as fake:
        print(fake.url, flush=True)
        await asyncio.Future()


if __name__ == "__main__":  # a silent fake in its own process (benchmarks): prints its URL, serves until killed
    asyncio.run(_serve_forever())
