"""A loopback telephony bot speaking Twilio Media Streams, as a bot behind ``<Connect><Stream>``.

Every message the harness sends is checked against the shapes Twilio documents (field sets,
decimal-string sequence numbers counting from 1, ``chunk`` from 1, 160-byte μ-law payloads,
``mediaFormat`` audio/x-mulaw 8000 mono); a deviation is recorded in ``violations``. The bot's
behaviour is a script run once ``start`` has arrived: it sends media, marks, clears or raw text,
hangs up, and reads the task's MCP endpoint from ``customParameters`` like a real bot would. The
checks are written from Twilio's documentation, not from the harness's wire types.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from harness.audio.g711 import pcm16_to_ulaw, ulaw_to_pcm16

from .provider_mcp import ProviderMcpClient

__all__ = ["BotCall", "TwilioBotFake", "tone"]

_SHAPES = {
    "connected": {"event", "protocol", "version"},
    "start": {"event", "sequenceNumber", "start", "streamSid"},
    "media": {"event", "sequenceNumber", "media", "streamSid"},
    "mark": {"event", "sequenceNumber", "mark", "streamSid"},
    "stop": {"event", "sequenceNumber", "stop", "streamSid"},
}
_START = {"accountSid", "streamSid", "callSid", "tracks", "customParameters", "mediaFormat"}


def tone(ms: int, *, hz: float = 440.0, level: float = 8000.0) -> np.ndarray:
    """``ms`` of a sine at 8 kHz, int16."""
    t = np.arange(8 * ms) / 8000.0
    return (level * np.sin(2 * np.pi * hz * t)).astype(np.int16)


@dataclass
class BotCall:
    """One call as the bot sees it."""

    ws: ServerConnection
    start: dict[str, Any]
    #: Mark names the network sent back, in order.
    marks_back: asyncio.Queue[str] = field(default_factory=asyncio.Queue)
    stack: AsyncExitStack = field(default_factory=AsyncExitStack)

    @property
    def stream_sid(self) -> str:
        return str(self.start["streamSid"])

    async def send(self, message: dict[str, Any] | str) -> None:
        await self.ws.send(message if isinstance(message, str) else json.dumps(message))

    async def media(self, pcm8k: np.ndarray, *, chunk_ms: int = 20, pace_s: float = 0.0) -> None:
        """Speak: μ-law ``media`` frames of ``chunk_ms`` (Pipecat uses 40), ``pace_s`` apart."""
        step = 8 * chunk_ms
        for start in range(0, len(pcm8k), step):
            payload = base64.b64encode(pcm16_to_ulaw(pcm8k[start : start + step])).decode("ascii")
            await self.send({"event": "media", "streamSid": self.stream_sid, "media": {"payload": payload}})
            if pace_s:
                await asyncio.sleep(pace_s)

    async def mark(self, name: str) -> None:
        await self.send({"event": "mark", "streamSid": self.stream_sid, "mark": {"name": name}})

    async def clear(self) -> None:
        await self.send({"event": "clear", "streamSid": self.stream_sid})

    async def tools(self) -> ProviderMcpClient:
        """The task's MCP server, reached from ``customParameters`` as a bot would."""
        params = self.start["start"]["customParameters"]
        headers = {"Authorization": params["mcp_authorization"]} if "mcp_authorization" in params else {}
        return await ProviderMcpClient.connect({"server_url": params["mcp_url"], "headers": headers}, self.stack)


Script = Callable[[BotCall], Awaitable[None]]


class TwilioBotFake:
    """``async with TwilioBotFake(script) as bot:`` then ``--model bot.model``."""

    def __init__(self, script: Script | None = None, *, path: str = "/media", close_code: int = 1000,
                 host: str = "127.0.0.1", port: int = 0) -> None:
        self.script = script
        self.path = path
        self.host, self.port = host, port
        self.close_code = close_code
        #: Every message received, in order (JSON-decoded).
        self.received: list[dict[str, Any]] = []
        self.violations: list[str] = []
        #: The caller audio received, decoded (8 kHz int16).
        self.caller_audio: list[np.ndarray] = []
        self.calls: list[BotCall] = []
        self.script_errors: list[BaseException] = []
        self._server: Server | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start the fake first"
        return f"ws://127.0.0.1:{next(iter(self._server.sockets)).getsockname()[1]}{self.path}"

    @property
    def model(self) -> str:
        """The ``--model`` key that reaches this bot."""
        return "twilio+" + self.url

    def of(self, event: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("event") == event]

    async def __aenter__(self) -> TwilioBotFake:
        self._server = await serve(self._serve, self.host, self.port, max_size=None, compression=None)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, ws: ServerConnection) -> None:
        call: BotCall | None = None
        script: asyncio.Task[None] | None = None
        seen: list[dict[str, Any]] = []  # this call's messages (the checks are per call)
        try:
            async for raw in ws:
                message = json.loads(raw)
                self._check(message, seen)
                seen.append(message)
                self.received.append(message)
                event = message.get("event")
                if event == "start" and call is None:
                    call = BotCall(ws, message)
                    self.calls.append(call)
                    if self.script is not None:
                        script = asyncio.create_task(self._run(call))
                elif event == "mark" and call is not None:
                    call.marks_back.put_nowait(message["mark"]["name"])
                elif event == "media":
                    self.caller_audio.append(ulaw_to_pcm16(base64.b64decode(message["media"]["payload"])))
                elif event == "stop":
                    break
        except ConnectionClosed:
            pass
        finally:
            if script is not None:
                await script

    async def _run(self, call: BotCall) -> None:
        assert self.script is not None
        try:
            await self.script(call)
        except ConnectionClosed:
            pass
        except Exception as exc:  # the test reads it
            self.script_errors.append(exc)
        finally:  # the MCP client's scopes are left in the task that entered them
            await call.stack.aclose()

    def _check(self, message: dict[str, Any], seen: list[dict[str, Any]]) -> None:
        event = message.get("event")
        if event not in _SHAPES:
            self.violations.append(f"unknown event {event!r}")
            return
        if set(message) != _SHAPES[event]:
            self.violations.append(f"{event}: fields {sorted(message)}")
        if not seen and event != "connected":
            self.violations.append(f"the first message is {event!r}, not connected")
        if len(seen) == 1 and event != "start":
            self.violations.append(f"the second message is {event!r}, not start")
        if event == "connected":
            return
        expected = sum(1 for m in seen if m.get("event") != "connected") + 1
        if message.get("sequenceNumber") != str(expected):
            self.violations.append(f"{event}: sequenceNumber {message.get('sequenceNumber')!r}, expected {expected}")
        starts = [m for m in seen if m.get("event") == "start"]
        if starts and message.get("streamSid") != starts[0]["streamSid"]:
            self.violations.append(f"{event}: another streamSid")
        if event == "start":
            body = message["start"]
            if not _START <= set(body) or body.get("streamSid") != message.get("streamSid"):
                self.violations.append(f"start: body {sorted(body)}")
            if body.get("mediaFormat") != {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}:
                self.violations.append(f"start: mediaFormat {body.get('mediaFormat')}")
            if not all(isinstance(v, str) for v in body.get("customParameters", {}).values()):
                self.violations.append("start: customParameters must be strings")
        elif event == "media":
            media = message["media"]
            chunk = len([m for m in seen if m.get("event") == "media"]) + 1
            if set(media) != {"track", "chunk", "timestamp", "payload"} or media.get("track") != "inbound":
                self.violations.append(f"media: body {sorted(media)}")
            elif media["chunk"] != str(chunk) or not media["timestamp"].isdigit():
                self.violations.append(f"media: chunk {media['chunk']!r} timestamp {media['timestamp']!r}")
            elif len(base64.b64decode(media["payload"])) != 160:
                self.violations.append("media: payload is not 20 ms of 8 kHz mu-law")
        elif event == "stop" and set(message["stop"]) != {"accountSid", "callSid"}:
            self.violations.append(f"stop: body {sorted(message['stop'])}")
