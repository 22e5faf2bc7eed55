"""A telephony media-stream bot (``--model twilio+ws://HOST:PORT/PATH``): the harness plays the
phone network, speaking Twilio Media Streams to the bot as Twilio does for a ``<Connect><Stream>``.

The call: ``connected``, then ``start`` (stream and call ids, ``mediaFormat`` audio/x-mulaw 8000
mono, and ``customParameters`` with the task's MCP endpoint and its ``Authorization`` value —
nothing else of the task), then the caller's audio as one 20 ms ``media`` frame per session frame
(160 G.711 μ-law bytes, resampled from the harness's 24 kHz), and ``stop`` when the session ends.
The bot's tools are native: it calls the task's MCP server itself (the server's record is the
truth), so this adapter has no tool results to send.

What the bot sends:

- ``media`` is its speech: decoded, resampled to 24 kHz and queued on the agent channel, which
  plays it at media speed. The wire has no responses, so they are cut from the audio: the first
  audible chunk opens one, and it is done (``ResponseDone``) once nothing audible has arrived for
  ``RESPONSE_GAP_MS`` of media time. Quiet chunks between responses (a bot that streams silence)
  are not queued, so they never hold the floor.
- ``clear`` drops its queued audio unplayed (``PlayoutCleared``, then the response is done): the
  yield is measured on the audio that did play.
- ``mark`` is answered with the same ``mark`` once the audio queued before it has played (at once
  if none is queued, and when a ``clear`` drops it, as Twilio does).
- There is no transcript: the user hears what played through local ASR, as for any agent that
  gives no words.

A socket closed with 1000 is the bot hanging up. Anything else — a message that does not parse
or names another stream, a dropped socket, too many marks pending — is the bot's failure, graded
with what the environment holds; its audio is bounded like every agent's (``AGENT_LIMITS``).
"""

from __future__ import annotations

import base64
import itertools
import secrets
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from harness.audio.frames import SAMPLE_RATE, AudioFrame, samples_to_ms
from harness.audio.g711 import pcm16_to_ulaw, ulaw_to_pcm16
from harness.audio.resample import StreamingResampler
from harness.blame.codes import AdapterErrorCode

from .container_agent import AgentEndsCall
from .providers import twilio_wire as wire
from .providers.ws_adapter import MalformedMessage
from .realtime import (
    AudioDelta,
    PlaybackReport,
    PlayoutCleared,
    ResponseDone,
    SessionConfig,
    ToolResult,
)

__all__ = ["MARKS_PENDING_LIMIT", "MEDIA_STREAM_SCHEMES", "QUIET_PEAK", "RESPONSE_GAP_MS", "TwilioMediaStreamAdapter",
           "custom_parameters", "websocket_url"]

#: ``--model`` schemes of a Twilio Media Streams bot → the websocket scheme it is reached on.
MEDIA_STREAM_SCHEMES = {"twilio+ws://": "ws://", "twilio+wss://": "wss://"}
#: Media time without audible bot audio after which its response is over: longer than the pause
#: between two sentences of a bot that synthesizes sentence by sentence (Pipecat's TTS services).
RESPONSE_GAP_MS = 1000
#: A chunk whose loudest 8 kHz sample is at most this (about -54 dBFS) is quiet: line silence.
QUIET_PEAK = 64
#: Marks the bot may have waiting at once (an honest bot has a few per answer).
MARKS_PENDING_LIMIT = 1_000


def websocket_url(key: str) -> str:
    """``twilio+ws://h:p/path`` → ``ws://h:p/path`` (the bot's own websocket address)."""
    for scheme, transport in MEDIA_STREAM_SCHEMES.items():
        if key.startswith(scheme):
            return transport + key[len(scheme):]
    raise ValueError(f"{key!r} is not a media-stream address ({' or '.join(MEDIA_STREAM_SCHEMES)}HOST:PORT/PATH)")


def custom_parameters(config: SessionConfig) -> dict[str, str]:
    """What the bot is told about its call: where the task's tools are and how to authenticate.

    ``mcp_url`` and ``mcp_authorization`` (the header value, ``Bearer …``, when the server wants
    one); nothing of the task's grading, policy or instructions.
    """
    if config.mcp is None:
        raise ValueError("a media-stream bot calls the task's tools itself: run it with --tool-mode native")
    parameters = {"mcp_url": config.mcp.url}
    authorization = config.mcp.headers.get("Authorization")
    if authorization:
        parameters["mcp_authorization"] = authorization
    return parameters


@dataclass(slots=True)
class _Mark:
    name: str
    response_id: str | None
    #: Milliseconds of ``response_id`` queued before the mark: it is due once they have played.
    at_ms: int


def _sid(prefix: str) -> str:
    """A Twilio-shaped id: two letters and 32 hex digits."""
    return prefix + secrets.token_hex(16)


class TwilioMediaStreamAdapter(AgentEndsCall):
    model_id: ClassVar[str] = "twilio-media-stream"
    provider: ClassVar[str] = "media-stream bot"
    agent_label: ClassVar[str] = "the media-stream bot"
    default_endpoint: ClassVar[str] = ""
    #: A bot answers the websocket handshake; it acknowledges nothing after it.
    open_timeout_s: ClassVar[float] = 20.0
    mcp_client: ClassVar[Literal["agent", "provider"]] = "agent"

    def __init__(self, *, endpoint: str | None = None, model: str | None = None, require_key: bool = False) -> None:
        # ``endpoint`` None: a bot in its container, whose address is known once it runs (the
        # campaign makes the session's client then); ``twilio+ws://`` keys always carry theirs.
        super().__init__(endpoint=endpoint, model=model or "", require_key=False)
        self.account_sid, self.call_sid, self.stream_sid = _sid("AC"), _sid("CA"), _sid("MZ")
        self._sequence = itertools.count(1)
        self._chunk = itertools.count(1)
        self._to_line = StreamingResampler(SAMPLE_RATE, wire.MEDIA_RATE)
        self._from_line = StreamingResampler(wire.MEDIA_RATE, SAMPLE_RATE)
        self._responses = itertools.count(1)
        self._response: str | None = None  # open: audible audio arrived within the gap
        self._last_response: str | None = None  # the newest response, open or done
        self._queued_ms: dict[str, int] = {}  # response id → ms of its audio queued
        self._queued_samples = 0  # of the open response, at 24 kHz
        self._played_ms: dict[str, int] = {}
        self._last_audible_ms = 0
        self._marks: list[_Mark] = []
        self._marks_due: list[str] = []
        self._started = False
        self.counts = {"media_in": 0, "media_out": 0, "marks": 0, "clears": 0}

    # -- the call ------------------------------------------------------------------------------

    async def _open_session(self, config: SessionConfig) -> None:
        start = wire.Start(
            sequenceNumber=str(next(self._sequence)), streamSid=self.stream_sid,
            start=wire.StartBody(accountSid=self.account_sid, streamSid=self.stream_sid, callSid=self.call_sid,
                                 customParameters=custom_parameters(config)),
        )
        await self._send(wire.Connected())
        await self._send(start)
        self._started = True
        self._session_ready(stream_sid=self.stream_sid, call_sid=self.call_sid)

    async def _send_audio(self, frame: AudioFrame) -> None:
        """One 20 ms frame of the caller; then marks that came due and a response that is over."""
        line = np.clip(np.rint(self._to_line.process(frame.pcm)), -32768, 32767).astype(np.int16)
        media = wire.CallerMedia(
            sequenceNumber=str(next(self._sequence)), streamSid=self.stream_sid,
            media=wire.CallerMediaBody(chunk=str(next(self._chunk)), timestamp=str(frame.start_ms),
                                       payload=base64.b64encode(pcm16_to_ulaw(line)).decode("ascii")),
        )
        await self._send(media)
        self.counts["media_out"] += 1
        self._due_marks()
        await self._answer_marks()
        if self._response is not None and self.now_ms - self._last_audible_ms >= RESPONSE_GAP_MS:
            self._end_response("completed")

    async def _send_tool_result(self, result: ToolResult) -> None:
        raise RuntimeError("native tool mode: the harness never sends tool results to a media-stream bot")

    async def close(self) -> None:
        if self._started and self._ws is not None and not self._failed and not self._closing:
            await self._send(wire.Stop(sequenceNumber=str(next(self._sequence)), streamSid=self.stream_sid,
                                       stop=wire.StopBody(accountSid=self.account_sid, callSid=self.call_sid)))
        await super().close()

    # -- what the bot sends --------------------------------------------------------------------

    async def _on_message(self, message: dict[str, Any]) -> None:
        event = wire.bot_message(message)
        if event.streamSid != self.stream_sid:
            raise MalformedMessage(f"streamSid {event.streamSid!r} is not this call's {self.stream_sid!r}")
        if isinstance(event, wire.BotMedia):
            self._on_media(base64.b64decode(event.media.payload, validate=True))
        elif isinstance(event, wire.BotMark):
            self._on_mark(event.mark.name)
        else:
            self._on_clear()

    def _on_media(self, payload: bytes) -> None:
        self.counts["media_in"] += 1
        line = ulaw_to_pcm16(payload)
        audible = bool(line.size) and int(np.abs(line.astype(np.int32)).max()) > QUIET_PEAK
        if self._response is None and not audible:
            return  # line silence between answers: nothing to play
        if audible:
            self._last_audible_ms = self.now_ms
        if self._response is None:
            self._response = self._last_response = f"tw{next(self._responses):04d}"
            self._queued_samples = 0
        pcm = np.clip(np.rint(self._from_line.process(line)), -32768, 32767).astype("<i2")
        self._queued_samples += len(pcm)
        self._queued_ms[self._response] = samples_to_ms(self._queued_samples)
        self._emit(AudioDelta(pcm.tobytes(), response_id=self._response))

    def _on_mark(self, name: str) -> None:
        self.counts["marks"] += 1
        if len(self._marks) >= MARKS_PENDING_LIMIT:
            self._agent_failed(f"{MARKS_PENDING_LIMIT} marks are waiting for their audio to play", code=AdapterErrorCode.OVER_LIMIT)
            return
        response = self._last_response
        self._marks.append(_Mark(name, response, self._queued_ms.get(response, 0) if response else 0))
        self._due_marks()

    def _on_clear(self) -> None:
        self.counts["clears"] += 1
        self._emit(PlayoutCleared(response_id=self._response or self._last_response))
        if self._response is not None:
            self._end_response("cancelled")
        if self._last_response is not None:  # what was queued will never play: no mark waits on it
            self._queued_ms[self._last_response] = 0
        # Twilio answers every mark still waiting when its audio is cleared.
        self._marks_due.extend(mark.name for mark in self._marks)
        self._marks.clear()

    def _end_response(self, status: str) -> None:
        assert self._response is not None
        self._emit(ResponseDone(response_id=self._response, status=status))
        self._response = None

    # -- marks ---------------------------------------------------------------------------------

    def playback(self, report: PlaybackReport) -> None:
        if report.response_id is not None:
            self._played_ms[report.response_id] = report.played_ms

    def _due_marks(self) -> None:
        """Marks whose audio has played (or that followed none) move to the answer queue, in order."""
        while self._marks:
            mark = self._marks[0]
            played = self._played_ms.get(mark.response_id, 0) if mark.response_id else 0
            if mark.response_id is not None and played < mark.at_ms:
                return
            self._marks_due.append(self._marks.pop(0).name)

    async def _answer_marks(self) -> None:
        due, self._marks_due = self._marks_due, []
        for name in due:
            await self._send(wire.CallerMark(sequenceNumber=str(next(self._sequence)), streamSid=self.stream_sid,
                                             mark=wire.MarkBody(name=name)))

    def metadata(self) -> dict[str, Any]:
        return {**super().metadata(), "stream_sid": self.stream_sid, "call_sid": self.call_sid, **self.counts}
