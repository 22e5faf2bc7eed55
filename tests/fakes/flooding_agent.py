"""A hostile OpenAI-Realtime agent on a loopback websocket: it opens its session, then floods.

It answers ``session.update`` with ``session.updated`` like any agent (so the flood comes from an
agent the harness has accepted), then, per ``mode``:

``huge_frame``
    Writes the header of one text frame announcing ``announced_bytes`` (3 GiB by default) straight
    to the socket, then up to ``payload_bytes`` of its payload, as fast as the client reads it.
``audio``
    ``response.output_audio.delta`` events of ``delta_ms`` each, as fast as the socket takes them,
    until ``audio_ms`` of media are sent or the client closes.
``transcript``
    ``transcript_deltas`` deltas of ``transcript_bytes`` characters each, then ``response.done``.
``mcp_names``
    ``response.output_item.added`` / ``.done`` ``mcp_call`` items with fresh ids, each named with
    ``name_chars`` characters (3 MB: under the message bound), each failing with an error
    (``mcp_errors``).
``responses``
    ``response.done`` with a fresh response id, as fast as the socket takes them.
``one_sample``
    ``response.output_audio.delta`` events of one sample each, as fast as the socket takes them.
``odd_text``
    An ``error`` event whose message and code carry a lone surrogate, NUL, controls and bidi
    overrides, transcript deltas and a final transcript with the same, then a close frame whose
    reason is such text (``close_raw=True``: the reason's bytes encode a lone surrogate, which is
    not UTF-8).

Input audio is accepted and ignored. Every connection is flooded; ``sent`` counts the flood's messages (or payload bytes) and
``close_code`` is the code of the client's close frame, once it closed. Used by
``tests/adversarial/test_bounded_input.py`` and ``benchmarks/bench_agent_flood.py``.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import struct
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from harness.audio.frames import SAMPLE_RATE

__all__ = ["FloodPlan", "FloodingAgent"]

PATH = "/v1/realtime"
_WORDS = "the plan covers dental and vision for the employee and the spouse starting next month ".split()


@dataclass(frozen=True)
class FloodPlan:
    mode: Literal["huge_frame", "audio", "transcript", "mcp_names", "responses", "one_sample", "odd_text"]
    announced_bytes: int = 3 * 1024**3
    payload_bytes: int = 256 * 1024**2
    delta_ms: int = 200
    audio_ms: int = 25_000 * 60  # far past any queue bound: the client must stop it
    transcript_deltas: int = 1_000
    transcript_bytes: int = 1024
    #: Each transcript delta in an item of its own (stays under the per-item bound, not the session's).
    item_per_delta: bool = False
    #: Characters of each MCP call's name (``mcp_names``).
    name_chars: int = 3 * 1024 * 1024
    #: ``mcp_names``: each item fails with an error (else it completes).
    mcp_errors: bool = True
    #: Messages of an endless flood (``mcp_names``, ``responses``, ``one_sample``) at most.
    flood_messages: int = 5_000_000
    #: ``odd_text``: the text put in every field.
    odd_text: str = "a\ud800b\x00c\x1b[2J\u202ed\u2066e\udfff"
    #: ``odd_text``: the close reason's bytes encode a lone surrogate (not UTF-8) instead.
    close_raw: bool = False


def transcript_chunk(index: int, size: int) -> str:
    words = itertools.islice(itertools.cycle(_WORDS), index % len(_WORDS), None)
    text = ""
    while len(text) < size:
        text += next(words) + " "
    return text[:size]


class FloodingAgent:
    """``async with FloodingAgent(plan) as agent:`` then point the harness at ``agent.url``."""

    def __init__(self, plan: FloodPlan) -> None:
        self.plan = plan
        self.sent = 0
        self.close_code: int | None = None
        self.flood_done = asyncio.Event()
        self._server: Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        assert self._server is not None, "start the agent first"
        port = next(iter(self._server.sockets)).getsockname()[1]
        return f"ws://127.0.0.1:{port}{PATH}"

    async def __aenter__(self) -> FloodingAgent:
        self._server = await serve(self._serve, "127.0.0.1", 0, max_size=None, compression=None)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        for task in self._tasks:
            task.cancel()
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, ws: ServerConnection) -> None:
        await send_event(ws, "session.created", session={"id": "sess_flood", "model": "flood", "type": "realtime"})
        flooding = False
        try:
            async for raw in ws:
                message = json.loads(raw)
                if message.get("type") == "session.update":
                    await send_event(ws, "session.updated", session=message.get("session", {}))
                    if not flooding:  # every connection (a campaign's every repetition) is flooded
                        flooding = True
                        task = asyncio.create_task(self._flood(ws))
                        self._tasks.add(task)
        except ConnectionClosed:
            pass
        finally:
            received = ws.protocol.close_rcvd
            self.close_code = received.code if received is not None else None

    async def _flood(self, ws: ServerConnection) -> None:
        try:
            await {"huge_frame": self._huge_frame, "audio": self._audio, "transcript": self._transcript,
                   "mcp_names": self._mcp_names, "responses": self._responses, "one_sample": self._one_sample,
                   "odd_text": self._odd_text}[self.plan.mode](ws)
        except (ConnectionClosed, ConnectionError):
            pass
        finally:
            self.flood_done.set()

    async def _huge_frame(self, ws: ServerConnection) -> None:
        """The header of one unmasked text frame with a 64-bit length, then payload while read."""
        transport = ws.transport
        transport.write(bytes([0x81, 127]) + struct.pack("!Q", self.plan.announced_bytes))
        block = b"x" * (1024 * 1024)
        while self.sent < self.plan.payload_bytes and not transport.is_closing():
            transport.write(block)
            self.sent += len(block)
            while transport.get_write_buffer_size() > 4 * len(block) and not transport.is_closing():
                await asyncio.sleep(0.001)  # the client reads (or has stopped): never buffer it here

    async def _audio(self, ws: ServerConnection) -> None:
        await send_event(ws, "response.created", response={"id": "resp_flood", "object": "realtime.response", "status": "in_progress"})
        samples = SAMPLE_RATE * self.plan.delta_ms // 1000
        tone = (np.sin(np.arange(samples) * 2 * np.pi * 220 / SAMPLE_RATE) * 8000).astype("<i2").tobytes()
        delta = base64.b64encode(tone).decode()
        for _ in range(self.plan.audio_ms // self.plan.delta_ms):
            await send_event(ws, "response.output_audio.delta", response_id="resp_flood", item_id="item_flood", output_index=0,
                        content_index=0, delta=delta)
            self.sent += 1

    async def _transcript(self, ws: ServerConnection) -> None:
        await send_event(ws, "response.created", response={"id": "resp_flood", "object": "realtime.response", "status": "in_progress"})
        for index in range(self.plan.transcript_deltas):
            item_id = f"item_{index}" if self.plan.item_per_delta else "item_flood"
            await send_event(ws, "response.output_audio_transcript.delta", response_id="resp_flood", item_id=item_id,
                        output_index=0, content_index=0, delta=transcript_chunk(index, self.plan.transcript_bytes))
            self.sent += 1
        await send_event(ws, "response.done", response={"id": "resp_flood", "object": "realtime.response", "status": "completed",
                                                   "output": []})

    async def _mcp_names(self, ws: ServerConnection) -> None:
        await send_event(ws, "response.created", response={"id": "resp_flood", "object": "realtime.response", "status": "in_progress"})
        name = "n" * self.plan.name_chars
        for index in range(self.plan.flood_messages):
            item = {"id": f"mcp_{index}", "type": "mcp_call", "name": name, "server_label": "task", "arguments": "{}"}
            await send_event(ws, "response.output_item.added", response_id="resp_flood", output_index=0, item=item)
            error = {"error": {"type": "tool_execution_error", "message": "x" * 200}} if self.plan.mcp_errors else {}
            await send_event(ws, "response.output_item.done", response_id="resp_flood", output_index=0,
                             item={**item, **error})
            self.sent += 2

    async def _responses(self, ws: ServerConnection) -> None:
        for index in range(self.plan.flood_messages):
            await send_event(ws, "response.done", response={"id": f"resp_{index}", "object": "realtime.response",
                                                           "status": "completed", "output": []})
            self.sent += 1

    async def _one_sample(self, ws: ServerConnection) -> None:
        await send_event(ws, "response.created", response={"id": "resp_flood", "object": "realtime.response", "status": "in_progress"})
        delta = base64.b64encode(np.array([1000], dtype="<i2").tobytes()).decode()
        for _ in range(self.plan.flood_messages):
            await send_event(ws, "response.output_audio.delta", response_id="resp_flood", item_id="item_flood",
                             output_index=0, content_index=0, delta=delta)
            self.sent += 1

    async def _odd_text(self, ws: ServerConnection) -> None:
        text = self.plan.odd_text
        await send_event(ws, "error", error={"type": "invalid_request_error", "code": text, "message": text})
        await send_event(ws, "response.created", response={"id": text, "object": "realtime.response", "status": "in_progress"})
        await send_event(ws, "response.output_audio_transcript.delta", response_id=text, item_id=text,
                         output_index=0, content_index=0, delta=f"I hear {text} you")
        await send_event(ws, "response.output_audio_transcript.done", response_id=text, item_id=text,
                         output_index=0, content_index=0, transcript=f"I hear {text} you")
        await send_event(ws, "response.done", response={"id": text, "object": "realtime.response", "status": "completed",
                                                       "output": []})
        self.sent += 5
        await asyncio.sleep(1.0)  # a second of the session on the realtime clock, then the close
        if self.plan.close_raw:  # a close frame whose reason is not UTF-8: written to the socket as is
            reason = text.encode("utf-8", "surrogatepass")[:120]
            ws.transport.write(bytes([0x88, 2 + len(reason)]) + struct.pack("!H", 1011) + reason)
            ws.transport.close()
        else:
            # What a close reason can carry: the same text without its surrogates (NUL, controls, bidi).
            await ws.close(1011, "".join(c for c in text if not "\ud800" <= c <= "\udfff"))


_ids = itertools.count(1)


async def send_event(ws: ServerConnection, event_type: str, **fields: Any) -> None:
    await ws.send(json.dumps({"type": event_type, "event_id": f"event_{next(_ids)}", **fields}))
