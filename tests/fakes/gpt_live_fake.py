"""A loopback OpenAI Live sessions server (GPT-Live with Responses delegation), real protocol.

Every client event is validated against ``openai.types.live.ClientEvent`` (rebuilt as a
discriminated union) and every event the fake sends against ``openai.types.live.ServerEvent``.
The scripted agent is the shared one (``listener.Listener``): at the end of a user turn GPT-Live
delegates; the backend's function calls arrive as ``response.event`` envelopes, and once their
outputs and a ``response.create`` are in, GPT-Live speaks the turn. Its audio is streamed at the
pace of the user audio (20 ms out per 20 ms in), so a barge-in simply stops it: GPT-Live has no
truncation event, the model interrupts itself.
"""

from __future__ import annotations

import base64
import itertools
import json
from collections import deque
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import numpy as np
from openai.types.live import ClientEvent, ServerEvent
from pydantic import ValidationError
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from harness.audio.frames import FRAME_BYTES, FRAME_SAMPLES
from harness.tasks.models import PolicyTurn

from .listener import Heard, Listener
from .loopback import LoopbackFake, discriminated

__all__ = ["QUIRKS", "GptLiveFake"]

QUIRKS = frozenset({"close_1011_after_turn", "rate_limited"})


_CLIENT = discriminated(ClientEvent)
_SERVER = discriminated(ServerEvent)


@dataclass
class _Turn:
    turn: PolicyTurn
    response_id: str
    pending: set[str] = field(default_factory=set)


class GptLiveFake(LoopbackFake):
    known_quirks = QUIRKS
    rate_limit_body = '{"error":{"type":"rate_limit_exceeded","code":"rate_limit_exceeded","message":"slow down"}}'

    def __init__(self, turns: list[PolicyTurn] | None = None, *, api_key: str | None = None, quirks: frozenset[str] | set[str] = frozenset()) -> None:
        super().__init__(turns, api_key=api_key, quirks=quirks, path="/v1/live/sessions")

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.received if e.get("type") == kind]

    def _authorize(self, connection: ServerConnection, request: Request) -> Response | None:
        if self.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return connection.respond(HTTPStatus.UNAUTHORIZED, '{"error":{"type":"invalid_request_error","code":"invalid_api_key"}}')
        return None

    async def _serve(self, connection: ServerConnection) -> None:
        await _LiveSession(self, connection).run()


class _LiveSession:
    def __init__(self, fake: GptLiveFake, ws: ServerConnection) -> None:
        self.fake = fake
        self.ws = ws
        self.ids = itertools.count(1)
        self.listener = Listener()
        self.audio = bytearray()
        self.outgoing: deque[np.ndarray] = deque()
        self.next_turn = 0
        self.current: _Turn | None = None
        self.spoke_once = False
        self.speech_ms = 0

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self.ids):04d}"

    async def send(self, event: dict[str, Any]) -> None:
        event = {"event_id": self.new_id("event"), **event}
        _SERVER.validate_python(event)
        await self.fake.deliver(self.ws, event)

    async def run(self) -> None:
        try:
            async for raw in self.ws:
                event = json.loads(raw)
                self.fake.received.append(event)
                try:
                    _CLIENT.validate_python(event)
                except ValidationError as exc:
                    error = exc.errors()[0]
                    self.fake.invalid.append(f"{event.get('type')}: {error['loc']} {error['msg']}")
                    await self.send({"type": "error", "error": {"type": "invalid_request_error", "code": "invalid_event", "message": str(error["msg"])}})
                    continue
                handler = self._HANDLERS.get(event["type"])
                if handler is not None:
                    await handler(self, event)
        except ConnectionClosed:
            pass

    async def on_start(self, event: dict[str, Any]) -> None:
        session = event["session"]
        await self.send(
            {"type": "session.started", "session": {"id": self.new_id("live"), "expires_at": 4102444800, "model": session["model"], "status": "active"}}
        )

    async def on_audio(self, event: dict[str, Any]) -> None:
        self.audio += base64.b64decode(event["audio"])
        while len(self.audio) >= FRAME_BYTES:
            frame = np.frombuffer(bytes(self.audio[:FRAME_BYTES]), dtype="<i2")
            del self.audio[:FRAME_BYTES]
            await self.play_one_frame()
            busy = self.current is not None
            for heard in self.listener.hear(frame, busy=busy):
                if heard is Heard.BARGE_IN:
                    self.outgoing.clear()  # the model interrupts itself
                elif heard is Heard.TURN_END:
                    await self.take_turn()

    async def play_one_frame(self) -> None:
        if not self.outgoing:
            return
        chunk = self.outgoing.popleft()
        self.listener.speak(20)
        await self.send({"type": "session.output_audio.delta", "delta": base64.b64encode(chunk.astype("<i2").tobytes()).decode()})
        if not self.outgoing and not self.spoke_once:
            self.spoke_once = True
            if "close_1011_after_turn" in self.fake.quirks:
                await self.ws.close(1011, "keepalive ping timeout")

    async def take_turn(self) -> None:
        if self.next_turn >= len(self.fake.turns):
            return
        turn = _Turn(self.fake.turns[self.next_turn], self.new_id("resp"))
        self.next_turn += 1
        delegation = self.new_id("deleg")
        await self.send(
            {"type": "session.delegation.created", "offset_ms": self.listener.now_ms, "delegation": {"id": delegation, "type": "delegation", "target": "responses"}}
        )
        if not turn.turn.tool_calls:
            await self.backend_done(turn, delegation)
            await self.speak(turn)
            return
        self.current = turn
        for call in turn.turn.tool_calls:
            call_id = self.new_id("call")
            turn.pending.add(call_id)
            item = {"id": self.new_id("fc"), "type": "function_call", "status": "completed", "call_id": call_id, "name": call.name, "arguments": json.dumps(call.args)}
            await self.send({"type": "response.event", "delegation_id": delegation, "event": {"type": "response.output_item.done", "response_id": turn.response_id, "output_index": 0, "item": item}})
        await self.backend_done(turn, delegation)

    async def backend_done(self, turn: _Turn, delegation: str) -> None:
        usage = {"input_tokens": 300, "output_tokens": 40, "total_tokens": 340, "input_tokens_details": {"cached_tokens": 100}}
        await self.send(
            {"type": "response.event", "delegation_id": delegation, "event": {"type": "response.completed", "response": {"id": turn.response_id, "status": "completed", "usage": usage}}}
        )

    async def on_item_create(self, event: dict[str, Any]) -> None:
        item = event["item"]
        turn = self.current
        if turn is None or item.get("call_id") not in turn.pending:
            self.fake.violations.append(f"function_call_output for unknown call {item.get('call_id')!r}")
            return
        turn.pending.discard(item["call_id"])

    async def on_response_create(self, event: dict[str, Any]) -> None:
        turn = self.current
        if turn is None:
            return
        if turn.pending:
            self.fake.violations.append(f"response.create with calls unanswered: {sorted(turn.pending)}")
            return
        self.current = None
        await self.speak(turn)

    async def speak(self, turn: _Turn) -> None:
        text = turn.turn.text
        if not text:
            return
        clip = self.fake.clips[text]
        start = self.listener.now_ms
        await self.send({"type": "session.output_transcript.delta", "delta": text, "start_ms": start, "end_ms": start + clip.duration_ms})
        pcm = np.concatenate([clip.pcm, np.zeros(-len(clip.pcm) % FRAME_SAMPLES, dtype=np.int16)])
        self.outgoing.extend(pcm.reshape(-1, FRAME_SAMPLES))

    _HANDLERS = {
        "session.start": on_start,
        "session.input_audio.append": on_audio,
        "response.item.create": on_item_create,
        "response.create": on_response_create,
    }
