"""A loopback OpenAI Realtime (GA) server: a real websocket speaking the real protocol.

Every client event is validated against the official ``openai`` package's realtime types (a
discriminated union rebuilt from ``RealtimeClientEvent``'s members, so an error names the field);
an invalid one is answered with an ``error`` event, as the provider does, and recorded in
``invalid``. Every event the fake sends is validated against ``RealtimeServerEvent`` too, so the
fake cannot drift from the protocol.

The agent it plays is a list of policy turns (the task's reference policy, or none for the no-op),
with the oracle's manners, decided on the timeline of the user audio it receives: it detects the
user's speech with the harness VAD and announces it (``input_audio_buffer.speech_started``), answers
a turn after 500 ms of silence (server VAD with ``create_response``), calls the turn's tools as
function calls and speaks the turn's words after their outputs and the client's ``response.create``,
and signals a barge-in once the user has talked over its audio for 500 ms. ``quirks`` switch on the
provider misbehaviours the quirk suite checks (see ``QUIRKS``).
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import typing
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import numpy as np
from openai.types.beta import realtime as beta
from openai.types.realtime import RealtimeClientEvent, RealtimeServerEvent
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from harness.audio.clip import Clip
from harness.audio.frames import FRAME_BYTES, SAMPLE_RATE
from harness.tasks.models import PolicyTurn

from .listener import Heard, Listener
from .loopback import RETRY_AFTER_S, LoopbackFake, discriminated

__all__ = ["OPENAI", "QUIRKS", "RETRY_AFTER_S", "STEPFUN", "XAI", "Dialect", "OpenAIRealtimeFake"]

QUIRKS = frozenset(
    {
        "no_response_created",  # never send response.created (StepFun/xAI-style dialects)
        "auto_response_after_tool_output",  # start the continuation itself; the client's create races it
        "tool_call_mid_utterance",  # a turn with words and calls: half the audio, the calls, the rest later
        "premature_turn_complete",  # the first answer is a response.done with no audio
        "close_1011_after_turn",  # close with 1011 right after the first spoken response
        "session_expired_after_turn",  # the 60-minute limit, right after the first spoken response
        "rate_limited",  # refuse the upgrade with HTTP 429 and Retry-After
        "invalid_key_after_open",  # accept the socket, then an invalid_api_key error and close
    }
)
_AUDIO_CHUNK_SAMPLES = SAMPLE_RATE // 5  # 200 ms per output_audio.delta


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _XaiTurnDetection(_Strict):
    type: typing.Literal["server_vad"] | None
    threshold: float | None = None
    prefix_padding_ms: int | None = None
    silence_duration_ms: int | None = None


class _XaiFormat(_Strict):
    type: typing.Literal["audio/pcm", "audio/pcmu", "audio/pcma"]
    rate: int | None = None


class _XaiAudioSide(_Strict):
    format: _XaiFormat


class _XaiAudio(_Strict):
    input: _XaiAudioSide
    output: _XaiAudioSide


class _XaiTool(_Strict):
    type: typing.Literal["function"]
    name: str
    description: str | None = None
    parameters: dict[str, Any]


class _XaiMcpTool(_Strict):
    """xAI's remote MCP tool (docs.x.ai/developers/tools/remote-mcp; no ``require_approval``)."""

    type: typing.Literal["mcp"]
    server_url: str
    server_label: str
    server_description: str | None = None
    allowed_tools: list[str] | None = None
    authorization: str | None = None
    headers: dict[str, str] | None = None


class _XaiSession(_Strict):
    voice: str
    instructions: str | None = None
    turn_detection: _XaiTurnDetection | None = None
    audio: _XaiAudio | None = None
    tools: list[_XaiTool | _XaiMcpTool] = []


class _XaiSessionUpdate(_Strict):
    """xAI's session shape, from its voice-agent docs (the openai types do not cover it)."""

    type: typing.Literal["session.update"]
    event_id: str | None = None
    session: _XaiSession


@dataclass(frozen=True)
class Dialect:
    """How one OpenAI-style provider differs on the wire."""

    name: str
    #: Validates every client event except ``session.update``.
    client_events: TypeAdapter[Any]
    #: Validates ``session.update``.
    session_update: TypeAdapter[Any]
    #: Validates every event the fake sends except the session ones.
    server_events: TypeAdapter[Any]
    #: GA event name → the provider's.
    server_names: dict[str, str] = field(default_factory=dict)
    first_event: str = "session.created"
    audio_content_type: str = "output_audio"


_GA_CLIENT = discriminated(RealtimeClientEvent)
_GA_SERVER = discriminated(RealtimeServerEvent)
_BETA_CLIENT = discriminated(beta.RealtimeClientEvent)
OPENAI = Dialect("openai", _GA_CLIENT, _GA_CLIENT, _GA_SERVER)
XAI = Dialect("xai", _GA_CLIENT, TypeAdapter(_XaiSessionUpdate), _GA_SERVER, first_event="conversation.created")
STEPFUN = Dialect(
    "stepfun",
    _BETA_CLIENT,
    _BETA_CLIENT,
    discriminated(beta.RealtimeServerEvent),
    server_names={
        "response.output_audio.delta": "response.audio.delta",
        "response.output_audio.done": "response.audio.done",
        "response.output_audio_transcript.delta": "response.audio_transcript.delta",
        "response.output_audio_transcript.done": "response.audio_transcript.done",
        "conversation.item.added": "conversation.item.created",
    },
    audio_content_type="audio",
)
_SESSION_EVENTS = frozenset({"session.created", "session.updated", "conversation.created"})


@dataclass
class _Turn:
    """A policy turn being played: its calls still unanswered, and the words left to speak."""

    turn: PolicyTurn
    pending_calls: set[str] = field(default_factory=set)
    audio_from_ms: int = 0


class OpenAIRealtimeFake(LoopbackFake):
    """``async with OpenAIRealtimeFake(turns) as fake:`` then connect to ``fake.url``."""

    known_quirks = QUIRKS
    rate_limit_body = '{"error":{"type":"rate_limit_exceeded"}}'

    def __init__(
        self,
        turns: list[PolicyTurn] | None = None,
        *,
        api_key: str | None = None,
        quirks: frozenset[str] | set[str] = frozenset(),
        path: str = "/v1/realtime",
        dialect: Dialect = OPENAI,
    ) -> None:
        super().__init__(turns, api_key=api_key, quirks=quirks, path=path)
        self.dialect = dialect
        self.sessions: list[_Session] = []

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        """The client events of type ``kind`` received so far."""
        return [e for e in self.received if e.get("type") == kind]

    def sent_of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.sent if e["type"] == kind]

    def _authorize(self, connection: ServerConnection, request: Request) -> Response | None:
        if self.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return connection.respond(
                HTTPStatus.UNAUTHORIZED, '{"error":{"type":"invalid_request_error","code":"invalid_api_key"}}'
            )
        return None

    async def _serve(self, connection: ServerConnection) -> None:
        session = _Session(self, connection)
        self.sessions.append(session)
        await session.run()


class _Session:
    """One connection: the provider's session state and the scripted agent."""

    def __init__(self, fake: OpenAIRealtimeFake, connection: ServerConnection) -> None:
        self.fake = fake
        self.ws = connection
        self.quirks = fake.quirks
        self.ids = itertools.count(1)
        self.listener = Listener()
        self.audio = bytearray()
        self.next_turn = 0
        self.current: _Turn | None = None
        self.active_response: str | None = None
        self.spoken_items: dict[str, int] = {}  # item id → audio ms
        self.spoke_once = False
        self.premature_done = False
        self.session: dict[str, Any] = {}
        self.tasks: set[asyncio.Task[None]] = set()

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self.ids):04d}"

    async def send(self, event: dict[str, Any]) -> None:
        dialect = self.fake.dialect
        event = {"event_id": self.new_id("event"), **event}
        event["type"] = dialect.server_names.get(event["type"], event["type"])
        if event["type"] not in _SESSION_EVENTS or dialect is OPENAI:
            dialect.server_events.validate_python(event)  # the fake itself must speak the protocol
        await self.fake.deliver(self.ws, event)

    async def run(self) -> None:
        if "invalid_key_after_open" in self.quirks:
            await self.send(
                {"type": "error", "error": {"type": "invalid_request_error", "code": "invalid_api_key", "message": "Incorrect API key provided."}}
            )
            await self.ws.close(1008, "invalid api key")
            return
        await self.send(self.first_event())
        try:
            async for raw in self.ws:
                await self.on_client_event(raw)
        except ConnectionClosed:
            pass
        for task in self.tasks:
            task.cancel()

    def first_event(self) -> dict[str, Any]:
        if self.fake.dialect.first_event == "conversation.created":
            return {"type": "conversation.created", "conversation": {"id": self.new_id("conv"), "object": "realtime.conversation"}}
        return {
            "type": "session.created",
            "session": {
                "type": "realtime",
                "id": self.new_id("sess"),
                "object": "realtime.session",
                "model": "gpt-realtime-fake",
                "output_modalities": ["audio"],
                "audio": {
                    "input": {"format": {"type": "audio/pcm", "rate": 24000}, "turn_detection": {"type": "server_vad"}},
                    "output": {"format": {"type": "audio/pcm", "rate": 24000}, "voice": "alloy"},
                },
            },
        }

    async def on_client_event(self, raw: str | bytes) -> None:
        event = json.loads(raw)
        self.fake.received.append(event)
        dialect = self.fake.dialect
        validator = dialect.session_update if event.get("type") == "session.update" else dialect.client_events
        try:
            validator.validate_python(event)
        except ValidationError as exc:
            line = f"{event.get('type')}: {exc.errors()[0]['loc']} {exc.errors()[0]['msg']}"
            self.fake.invalid.append(line)
            await self.send({"type": "error", "error": {"type": "invalid_request_error", "message": line}})
            return
        handler = self._HANDLERS.get(event["type"])
        if handler is not None:
            await handler(self, event)

    # -- client events -------------------------------------------------------------------------

    async def on_session_update(self, event: dict[str, Any]) -> None:
        self.session = event["session"]
        await self.send({"type": "session.updated", "session": {**self.session, "id": "sess_fake", "object": "realtime.session", "model": "gpt-realtime-fake"}})

    async def on_append(self, event: dict[str, Any]) -> None:
        pcm = base64.b64decode(event["audio"])
        if len(pcm) % 2:
            self.fake.violations.append(f"input_audio_buffer.append of {len(pcm)} bytes is not PCM16")
        self.audio += pcm
        while len(self.audio) >= FRAME_BYTES:
            frame = np.frombuffer(bytes(self.audio[:FRAME_BYTES]), dtype="<i2")
            del self.audio[:FRAME_BYTES]
            await self.on_frame(frame)

    async def on_function_output(self, event: dict[str, Any]) -> None:
        item = event["item"]
        if item.get("type") != "function_call_output":
            return
        turn = self.current
        if turn is None or item["call_id"] not in turn.pending_calls:
            self.fake.violations.append(f"function_call_output for unknown call id {item['call_id']!r}")
            return
        turn.pending_calls.discard(item["call_id"])
        await self.send({"type": "conversation.item.added", "item": {**item, "id": self.new_id("item"), "object": "realtime.item"}})
        if not turn.pending_calls and "auto_response_after_tool_output" in self.quirks:
            response_id = self.new_id("resp")
            await self.response_created(response_id)  # active from now on
            self.spawn(self.speak(turn, response_id=response_id, hold_done_s=0.3))

    async def on_response_create(self, event: dict[str, Any]) -> None:
        if self.active_response is not None:
            await self.send(
                {
                    "type": "error",
                    "error": {
                        "type": "invalid_request_error",
                        "code": "conversation_already_has_active_response",
                        "message": f"Conversation already has an active response in progress: {self.active_response}.",
                    },
                }
            )
            return
        turn = self.current
        if turn is None:
            return
        if turn.pending_calls:
            self.fake.violations.append(f"response.create with calls unanswered: {sorted(turn.pending_calls)}")
            return
        await self.speak(turn)

    async def on_truncate(self, event: dict[str, Any]) -> None:
        length = self.spoken_items.get(event["item_id"])
        if length is None or event["audio_end_ms"] > length:
            await self.send(
                {"type": "error", "error": {"type": "invalid_request_error", "message": f"cannot truncate {event['item_id']} at {event['audio_end_ms']} ms"}}
            )
            return
        await self.send(
            {"type": "conversation.item.truncated", "item_id": event["item_id"], "content_index": event["content_index"], "audio_end_ms": event["audio_end_ms"]}
        )

    _HANDLERS = {
        "session.update": on_session_update,
        "input_audio_buffer.append": on_append,
        "conversation.item.create": on_function_output,
        "response.create": on_response_create,
        "conversation.item.truncate": on_truncate,
    }

    # -- the scripted agent, on the user-audio timeline -------------------------------------------

    async def on_frame(self, frame: np.ndarray) -> None:
        busy = self.current is not None and bool(self.current.pending_calls or self.active_response is not None)
        for heard in self.listener.hear(frame, busy=busy):
            if heard is Heard.TURN_END:
                item_id = self.new_id("item")
                await self.send({"type": "input_audio_buffer.speech_stopped", "audio_end_ms": self.listener.now_ms, "item_id": item_id})
                await self.send({"type": "input_audio_buffer.committed", "item_id": item_id})
                await self.take_turn()
            else:
                await self.speech_started()

    async def speech_started(self) -> None:
        await self.send({"type": "input_audio_buffer.speech_started", "audio_start_ms": self.listener.now_ms, "item_id": self.new_id("item")})

    async def take_turn(self) -> None:
        if self.next_turn >= len(self.fake.turns):
            return  # the no-op agent, or the script is over
        if "premature_turn_complete" in self.quirks and not self.premature_done:
            self.premature_done = True
            response_id = self.new_id("resp")
            await self.response_created(response_id)
            await self.send({"type": "response.done", "response": {"id": response_id, "object": "realtime.response", "status": "completed", "output": []}})
            return
        turn = _Turn(self.fake.turns[self.next_turn])
        self.next_turn += 1
        self.current = turn
        if turn.turn.tool_calls:
            await self.call_tools(turn)
        else:
            await self.speak(turn)

    async def response_created(self, response_id: str) -> None:
        self.active_response = response_id
        if "no_response_created" not in self.quirks:
            await self.send({"type": "response.created", "response": {"id": response_id, "object": "realtime.response", "status": "in_progress", "output": []}})

    async def call_tools(self, turn: _Turn) -> None:
        response_id = self.new_id("resp")
        await self.response_created(response_id)
        output: list[dict[str, Any]] = []
        if "tool_call_mid_utterance" in self.quirks and turn.turn.text:
            clip = self.fake.clips[turn.turn.text]
            turn.audio_from_ms = clip.duration_ms // 2
            output.append(await self.stream_audio(response_id, turn.turn.text, clip, 0, turn.audio_from_ms, index=0))
        for call in turn.turn.tool_calls:
            call_id, item_id = self.new_id("call"), self.new_id("item")
            item = {"id": item_id, "type": "function_call", "object": "realtime.item", "status": "completed", "call_id": call_id, "name": call.name, "arguments": json.dumps(call.args)}
            index = len(output)
            await self.send({"type": "response.output_item.added", "response_id": response_id, "output_index": index, "item": {**item, "status": "in_progress", "arguments": ""}})
            await self.send({"type": "response.function_call_arguments.delta", "response_id": response_id, "item_id": item_id, "output_index": index, "call_id": call_id, "delta": item["arguments"]})
            await self.send({"type": "response.function_call_arguments.done", "response_id": response_id, "item_id": item_id, "output_index": index, "call_id": call_id, "name": call.name, "arguments": item["arguments"]})
            await self.send({"type": "response.output_item.done", "response_id": response_id, "output_index": index, "item": item})
            turn.pending_calls.add(call_id)
            output.append(item)
        await self.response_done(response_id, output)

    async def speak(self, turn: _Turn, *, response_id: str | None = None, hold_done_s: float = 0.0) -> None:
        """The turn's words (from where a mid-utterance call left them) as one audio response."""
        if response_id is None:
            response_id = self.new_id("resp")
            await self.response_created(response_id)
        output = []
        text = turn.turn.text
        if text:
            clip = self.fake.clips[text]
            output.append(await self.stream_audio(response_id, text, clip, turn.audio_from_ms, clip.duration_ms, index=0))
        if hold_done_s:
            await asyncio.sleep(hold_done_s)  # still active when the client's own create arrives
        await self.response_done(response_id, output)
        self.current = None
        if "close_1011_after_turn" in self.quirks and text:
            await self.ws.close(1011, "keepalive ping timeout")
        elif "session_expired_after_turn" in self.quirks and text:
            await self.send(
                {"type": "error", "error": {"type": "invalid_request_error", "code": "session_expired", "message": "Your session hit the maximum duration of 60 minutes."}}
            )
            await self.ws.close(1000, "session expired")

    async def stream_audio(self, response_id: str, text: str, clip: Clip, from_ms: int, to_ms: int, *, index: int) -> dict[str, Any]:
        item_id = self.new_id("item")
        part_text = text if from_ms == 0 and to_ms == clip.duration_ms else _words_between(clip, from_ms, to_ms) or text
        base = {"response_id": response_id, "item_id": item_id, "output_index": index, "content_index": 0}
        await self.send({"type": "response.output_item.added", "response_id": response_id, "output_index": index, "item": {"id": item_id, "type": "message", "role": "assistant", "object": "realtime.item", "status": "in_progress", "content": []}})
        await self.send({"type": "response.content_part.added", **base, "part": {"type": "audio", "transcript": ""}})
        for word in part_text.split(" "):
            await self.send({"type": "response.output_audio_transcript.delta", **base, "delta": word + " "})
        pcm = clip.pcm[from_ms * SAMPLE_RATE // 1000 : to_ms * SAMPLE_RATE // 1000]
        for start in range(0, len(pcm), _AUDIO_CHUNK_SAMPLES):
            chunk = pcm[start : start + _AUDIO_CHUNK_SAMPLES].astype("<i2").tobytes()
            await self.send({"type": "response.output_audio.delta", **base, "delta": base64.b64encode(chunk).decode()})
        await self.send({"type": "response.output_audio.done", **base})
        await self.send({"type": "response.output_audio_transcript.done", **base, "transcript": part_text})
        await self.send({"type": "response.content_part.done", **base, "part": {"type": "audio", "transcript": part_text}})
        duration_ms = len(pcm) * 1000 // SAMPLE_RATE
        self.listener.speak(duration_ms)
        self.spoken_items[item_id] = duration_ms
        item = {"id": item_id, "type": "message", "role": "assistant", "object": "realtime.item", "status": "completed", "content": [{"type": self.fake.dialect.audio_content_type, "transcript": part_text}]}
        await self.send({"type": "response.output_item.done", "response_id": response_id, "output_index": index, "item": item})
        return item

    async def response_done(self, response_id: str, output: list[dict[str, Any]]) -> None:
        audio_tokens = sum(self.spoken_items.get(item["id"], 0) for item in output) // 50
        usage = {
            "total_tokens": 120 + audio_tokens,
            "input_tokens": 100,
            "output_tokens": 20 + audio_tokens,
            "input_token_details": {"text_tokens": 60, "audio_tokens": 40, "cached_tokens": 32},
            "output_token_details": {"text_tokens": 20, "audio_tokens": audio_tokens},
        }
        self.active_response = None
        await self.send({"type": "response.done", "response": {"id": response_id, "object": "realtime.response", "status": "completed", "output": output, "usage": usage}})

    def spawn(self, coroutine: typing.Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


def _words_between(clip: Clip, from_ms: int, to_ms: int) -> str:
    return " ".join(w.word for w in clip.word_timestamps if from_ms <= w.start_ms < to_ms)


async def _serve_forever(task_dir: str | None) -> None:
    from harness.tasks.loader import load_task

    turns = load_task(task_dir).policy.turns if task_dir else []
    async with OpenAIRealtimeFake(turns) as fake:
        print(fake.url, flush=True)
        await asyncio.Future()


if __name__ == "__main__":  # a fake in its own process (benchmarks): prints its URL, serves until killed
    import sys

    asyncio.run(_serve_forever(sys.argv[1] if len(sys.argv) > 1 else None))
