"""An OpenAI Realtime (GA) websocket server hosting one agent adapter: how an agent becomes a
container agent, and how an out-of-tree adapter is kept out of the harness's process.

``python -m harness.agents.realtime_server --agent native-oracle --port 8765`` serves the
registry's ``native-oracle`` behind the protocol any OpenAI-Realtime client speaks, so the harness
runs it through its OpenAI adapter like any other agent image (docs/agent-containers.md).
``--adapter package.module:Class`` (or an installed entry point's name) hosts an agent author's
adapter the same way: the harness starts this server in a child process or an agent container
(:mod:`harness.agents.adapter_process`, ``--model module:Class`` without ``--trust-adapter``), so
the adapter's code never shares memory or files with the harness; ``--check`` only loads and
describes it (one JSON line; exit 2 with the reason when it does not load). Each connection gets
a fresh adapter:

- ``session.update`` configures it: instructions, voice, turn detection, function tools, and the
  task's MCP endpoint from the ``{"type": "mcp", "server_url", "headers", "allowed_tools", ...}``
  tool (native tool mode). A privileged registry entry is also sent its task's reference policy,
  in the extension field ``apex_voice.reference_policy`` beside ``session`` (no other agent ever
  receives it). The adapter connects, then ``session.updated`` acknowledges.
- ``input_audio_buffer.append`` (base64 PCM16 24 kHz) is cut into 20 ms frames fed to the adapter.
  The hosted agent's clock is the audio it received (frame ``n`` starts at ``20·n`` ms), so a
  virtual-clock agent behaves as in-process, just paced by the client's wall-clock stream.
- What the adapter emits becomes server events: ``response.created``, ``response.output_audio.delta``
  and ``response.output_audio_transcript.delta``, then ``response.done``; the agent stopping its own
  speech (``PlayoutCleared``) is ``input_audio_buffer.speech_started``, after which the client stops
  playout and truncates (``conversation.item.truncate`` is acknowledged). The agent hanging up
  (``CallEnded``) closes the socket with code 1000 once its last response is sent.
- The agent's account of its own MCP calls (``McpCallReported``) becomes an ``mcp_call`` output
  item and ``response.mcp_call.in_progress`` / ``.completed`` / ``.failed``, as OpenAI reports the
  calls of its own MCP client (diagnostics: the task server's call stream is the record).
- A function call the agent asks for (``ToolCallRequested``, bridge tool mode) is a
  ``function_call`` output item, as OpenAI sends one: ``response.output_item.added``,
  ``conversation.item.added``, ``response.function_call_arguments.done``,
  ``response.output_item.done``; a response holding only calls is done at once (the agent speaks
  again in a new response, as OpenAI continues after ``response.create``). The client's
  ``conversation.item.create`` with a ``function_call_output`` item goes to the adapter's
  ``send_tool_result`` (its output parsed back from JSON when it is JSON; the protocol carries no
  error flag, so the client's ``{"error": ...}`` object is the one output taken as ``is_error``).
- Anything malformed or unsupported is answered with an ``error`` event naming it. A client
  message over ``AGENT_LIMITS.ws_message_bytes`` closes the socket with 1009, and one append is
  cut into frames in time linear in its size.

"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import itertools
import json
import logging
import os
import socket
import sys
from collections.abc import Callable
from http import HTTPStatus
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from harness.agents.limits import AGENT_LIMITS
from harness.audio.frames import FRAME_BYTES, FRAME_MS, AudioFrame
from harness.tasks.models import ReferencePolicy

from .providers import openai_wire as wire
from .realtime import (
    REALTIME_PATH,
    AdapterError,
    AdapterInfo,
    AgentEvent,
    AudioDelta,
    CallEnded,
    McpCallReported,
    McpEndpoint,
    PlaybackReport,
    PlayoutCleared,
    RealtimeAdapter,
    ResponseDone,
    SessionConfig,
    SpeechStarted,
    SpeechStopped,
    ToolCallCancelled,
    ToolCallRequested,
    ToolResult,
    TranscriptDelta,
    TranscriptDone,
    TurnDetection,
    UserTranscript,
)

__all__ = ["REALTIME_PATH", "AgentFactory", "RealtimeAgentServer", "session_config"]

log = logging.getLogger(__name__)

#: Agent speech is sent in pieces of this many bytes (100 ms at 24 kHz), as providers stream it.
AUDIO_CHUNK_BYTES = 4800
#: The ``apex_voice`` extension's key in ``session.update`` (beside ``session``).
EXTENSION_KEY = "apex_voice"

AgentFactory = Callable[[], RealtimeAdapter]

# -- client → server: what a session.update may carry (unknown fields are ignored) ------------


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class McpToolFilter(_Lenient):
    tool_names: list[str] = Field(default_factory=list)


class McpToolDeclaration(_Lenient):
    """The GA remote-MCP tool: where the task's tools are, and which of them to use."""

    type: Literal["mcp"]
    server_label: str
    server_url: str
    headers: dict[str, str] = Field(default_factory=dict)
    require_approval: str | dict[str, Any] = "never"
    allowed_tools: list[str] | McpToolFilter | None = None

    def endpoint(self) -> McpEndpoint:
        allowed = self.allowed_tools.tool_names if isinstance(self.allowed_tools, McpToolFilter) else self.allowed_tools
        approval = self.require_approval if isinstance(self.require_approval, str) else "never"
        return McpEndpoint(
            url=self.server_url,
            headers=dict(self.headers),
            server_label=self.server_label,
            allowed_tools=tuple(allowed or ()),
            require_approval=approval,
        )


class FunctionToolDeclaration(_Lenient):
    type: Literal["function"]
    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class TurnDetectionIn(_Lenient):
    type: Literal["server_vad", "semantic_vad"]
    threshold: float | None = None
    prefix_padding_ms: int | None = None
    silence_duration_ms: int | None = None
    eagerness: Literal["low", "medium", "high", "auto"] | None = None
    create_response: bool = True
    interrupt_response: bool = True


class AudioInputIn(_Lenient):
    turn_detection: TurnDetectionIn | None = None


class AudioOutputIn(_Lenient):
    voice: str | None = None


class SessionAudioIn(_Lenient):
    input: AudioInputIn = Field(default_factory=AudioInputIn)
    output: AudioOutputIn = Field(default_factory=AudioOutputIn)


class SessionIn(_Lenient):
    type: Literal["realtime"] = "realtime"
    instructions: str = ""
    audio: SessionAudioIn = Field(default_factory=SessionAudioIn)
    tools: list[Annotated[McpToolDeclaration | FunctionToolDeclaration, Field(discriminator="type")]] = Field(
        default_factory=list
    )


class FunctionCallOutputIn(_Lenient):
    type: Literal["function_call_output"]
    call_id: str
    output: str
    id: str | None = None


class ConversationItemCreateIn(_Lenient):
    """The one item a client may add: the output of a function call the agent asked for."""

    type: Literal["conversation.item.create"]
    event_id: str | None = None
    previous_item_id: str | None = None
    item: FunctionCallOutputIn


def tool_result(call_id: str, name: str, output: str) -> ToolResult:
    """The adapter's result from a ``function_call_output``: JSON output parsed back, and the
    client's ``{"error": ...}`` object (how it sends an error result) taken as ``is_error``."""
    try:
        value: Any = json.loads(output)
    except ValueError:
        return ToolResult(call_id, name, output)
    if isinstance(value, dict) and set(value) == {"error"}:
        return ToolResult(call_id, name, value["error"], is_error=True)
    return ToolResult(call_id, name, value)


class ApexVoiceExtension(_Lenient):
    """What the harness adds for privileged registry entries only (the oracle)."""

    reference_policy: ReferencePolicy | None = None


class SessionUpdateIn(_Lenient):
    type: Literal["session.update"]
    event_id: str | None = None
    session: SessionIn
    apex_voice: ApexVoiceExtension | None = None


def session_config(update: SessionUpdateIn) -> SessionConfig:
    """The adapter's session from a client's ``session.update``.

    Raises:
        ValueError: more than one MCP tool (one task, one endpoint).
    """
    session = update.session
    mcp_tools = [tool for tool in session.tools if isinstance(tool, McpToolDeclaration)]
    if len(mcp_tools) > 1:
        raise ValueError(f"session.tools declares {len(mcp_tools)} MCP servers; a session has one task endpoint")
    detection = session.audio.input.turn_detection
    turns = (
        TurnDetection(type="none")
        if detection is None
        else TurnDetection(**detection.model_dump())
    )
    config = SessionConfig(
        instructions=session.instructions,
        tools=[
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in session.tools
            if isinstance(t, FunctionToolDeclaration)
        ],
        turn_detection=turns,
        tool_mode="native" if mcp_tools else "bridge",
        mcp=mcp_tools[0].endpoint() if mcp_tools else None,
        reference_policy=update.apex_voice.reference_policy if update.apex_voice else None,
    )
    if session.audio.output.voice:
        config.voice = session.audio.output.voice
    return config


def _echo(session: dict[str, Any]) -> dict[str, Any]:
    """The session as acknowledged: as sent, without the MCP tool's headers (they hold a secret)."""
    tools = [{k: v for k, v in tool.items() if k != "headers"} if isinstance(tool, dict) else tool
             for tool in session.get("tools") or []]
    return {**session, "type": "realtime", "tools": tools}


# -- one connection ------------------------------------------------------------------------------


class _Connection:
    """One client: a fresh adapter, its audio timeline and the response being streamed."""

    def __init__(self, ws: ServerConnection, factory: AgentFactory, agent_name: str, ids: itertools.count[int]) -> None:
        self.ws = ws
        self.factory = factory
        self.agent_name = agent_name
        self._ids = ids
        self.adapter: RealtimeAdapter | None = None
        self._pending = b""
        self._media_ms = 0
        self._response: tuple[str, str] | None = None  # (response id, message item id)
        self._transcript: list[str] = []
        self._spoke = False  # the open response has audio or words (its message item is real)
        self._response_calls: list[dict[str, Any]] = []  # function_call items of the open response
        self._closed_for_calls = False  # the last response held only calls: the agent's ResponseDone is spent
        self._calls: dict[str, str] = {}  # call id → function name, until its output arrives
        self._last_item: str | None = None
        self._mcp_items: dict[str, str] = {}  # the agent's call id → its mcp_call item id
        self._server_label = "task"
        self._ended = False

    def _id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"

    async def _send(self, event_type: str, **fields: Any) -> None:
        await self.ws.send(json.dumps({"type": event_type, "event_id": self._id("event"), **fields}))

    async def _error(self, message: str, *, error_type: str = "invalid_request_error", code: str | None = None,
                     event_id: str | None = None) -> None:
        body: dict[str, Any] = {"type": error_type, "message": message}
        if code is not None:
            body["code"] = code
        if event_id is not None:
            body["event_id"] = event_id
        await self._send("error", error=body)

    async def run(self) -> None:
        await self._send("session.created", session={"type": "realtime", "id": self._id("sess"), "model": self.agent_name,
                                                      "object": "realtime.session"})
        try:
            async for raw in self.ws:
                await self._on_raw(raw)
                if self._ended:
                    await self.ws.close(1000, "call ended")
                    return
        except ConnectionClosed:
            pass
        finally:
            if self.adapter is not None:
                await self.adapter.close()

    async def _on_raw(self, raw: str | bytes) -> None:
        try:
            message = json.loads(raw)
        except (TypeError, ValueError):
            await self._error(f"frame is not JSON: {str(raw)[:80]!r}")
            return
        if not isinstance(message, dict):
            await self._error("an event must be a JSON object with a type")
            return
        kind = message.get("type")
        handler = self._HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            await self._error(f"unsupported event type {kind!r}", code="unknown_event", event_id=message.get("event_id"))
            return
        try:
            await handler(self, message)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(event)"
            await self._error(f"invalid {kind}: {where}: {first['msg']}", code="invalid_value",
                              event_id=message.get("event_id"))

    async def _on_session_update(self, message: dict[str, Any]) -> None:
        update = SessionUpdateIn.model_validate(message)
        if self.adapter is None:
            try:
                config = session_config(update)
            except ValueError as exc:
                await self._error(str(exc), code="invalid_value", event_id=update.event_id)
                return
            adapter = self.factory()
            try:
                await adapter.connect(config)
            except ValueError as exc:  # the agent says what its session lacks
                await adapter.close()
                await self._error(f"{self.agent_name}: {exc}", code="invalid_value", event_id=update.event_id)
                return
            except Exception as exc:  # it could not start (e.g. its MCP endpoint does not answer)
                await adapter.close()
                log.exception("%s could not start its session", self.agent_name)
                await self._error(f"{self.agent_name} could not start: {type(exc).__name__}: {exc}",
                                  error_type="server_error", event_id=update.event_id)
                return
            self.adapter = adapter
            self._server_label = config.mcp.server_label if config.mcp else self._server_label
        await self._send("session.updated", session=_echo(message["session"]))

    async def _on_audio_append(self, message: dict[str, Any]) -> None:
        event = wire.InputAudioBufferAppend.model_validate(message)
        if self.adapter is None:
            await self._error("input_audio_buffer.append before session.update", code="session_not_configured",
                              event_id=event.event_id)
            return
        try:
            self._pending += base64.b64decode(event.audio, validate=True)
        except (binascii.Error, ValueError):
            await self._error("input_audio_buffer.append: audio is not base64", code="invalid_value",
                              event_id=event.event_id)
            return
        # Frames are read at an offset and the remainder kept once: slicing the rest off per frame
        # would copy a large append once per frame.
        offset = 0
        while len(self._pending) - offset >= FRAME_BYTES and not self._ended:
            frame = self._pending[offset : offset + FRAME_BYTES]
            offset += FRAME_BYTES
            await self.adapter.send_audio(AudioFrame.from_bytes(frame, self._media_ms))
            self._media_ms += FRAME_MS
            await self._deliver(self.adapter.poll_events())
        self._pending = self._pending[offset:]

    async def _on_truncate(self, message: dict[str, Any]) -> None:
        event = wire.ConversationItemTruncate.model_validate(message)
        if self.adapter is not None:
            self.adapter.playback(PlaybackReport(None, event.item_id, event.audio_end_ms))
        await self._send("conversation.item.truncated", item_id=event.item_id, content_index=event.content_index,
                         audio_end_ms=event.audio_end_ms)

    async def _on_accepted(self, message: dict[str, Any]) -> None:
        """``response.create`` / ``input_audio_buffer.commit``: the hosted agent decides when to speak."""

    async def _on_item_create(self, message: dict[str, Any]) -> None:
        event = ConversationItemCreateIn.model_validate(message)
        name = self._calls.pop(event.item.call_id, None)
        if self.adapter is None or name is None:
            await self._error(f"no function call {event.item.call_id!r} is waiting for its output",
                              code="invalid_value", event_id=event.event_id)
            return
        item = {"id": event.item.id or self._id("item"), "type": "function_call_output", "object": "realtime.item",
                "status": "completed", "call_id": event.item.call_id, "output": event.item.output}
        await self._send("conversation.item.added", previous_item_id=self._last_item, item=item)
        await self._send("conversation.item.done", previous_item_id=self._last_item, item=item)
        self._last_item = item["id"]
        await self.adapter.send_tool_result(tool_result(event.item.call_id, name, event.item.output))
        await self._deliver(self.adapter.poll_events())

    _HANDLERS = {
        "session.update": _on_session_update,
        "input_audio_buffer.append": _on_audio_append,
        "input_audio_buffer.commit": _on_accepted,
        "input_audio_buffer.clear": _on_accepted,
        "response.create": _on_accepted,
        "response.cancel": _on_accepted,
        "conversation.item.truncate": _on_truncate,
        "conversation.item.create": _on_item_create,
    }

    # -- adapter events → server events ----------------------------------------------------------

    async def _deliver(self, events: list[AgentEvent]) -> None:
        for event in events:
            if isinstance(event, AudioDelta):
                response_id, item_id = await self._open_response()
                self._spoke, self._closed_for_calls = True, False
                for start in range(0, len(event.pcm), AUDIO_CHUNK_BYTES):
                    chunk = base64.b64encode(event.pcm[start : start + AUDIO_CHUNK_BYTES]).decode("ascii")
                    await self._send("response.output_audio.delta", response_id=response_id, item_id=item_id,
                                     output_index=0, content_index=0, delta=chunk)
            elif isinstance(event, TranscriptDelta):
                response_id, item_id = await self._open_response()
                self._spoke, self._closed_for_calls = True, False
                self._transcript.append(event.text)
                await self._send("response.output_audio_transcript.delta", response_id=response_id, item_id=item_id,
                                 output_index=0, content_index=0, delta=event.text)
            elif isinstance(event, TranscriptDone):
                self._transcript = [event.text]
            elif isinstance(event, ResponseDone):
                if self._response is None and self._closed_for_calls:
                    self._closed_for_calls = False  # its calls' response is already done
                    continue
                await self._close_response(event.status or "completed")
            elif isinstance(event, McpCallReported):
                await self._mcp_call(event)
            elif isinstance(event, PlayoutCleared | SpeechStarted):
                await self._send("input_audio_buffer.speech_started", audio_start_ms=self._media_ms,
                                 item_id=self._id("item"))
            elif isinstance(event, SpeechStopped):
                await self._send("input_audio_buffer.speech_stopped", audio_end_ms=self._media_ms,
                                 item_id=event.item_id or self._id("item"))
            elif isinstance(event, UserTranscript) and event.final:
                await self._send("conversation.item.input_audio_transcription.completed", content_index=0,
                                 item_id=event.item_id or self._id("item"), transcript=event.text)
            elif isinstance(event, CallEnded):
                if self._response is not None:
                    await self._close_response("completed")
                self._ended = True
            elif isinstance(event, AdapterError):
                await self._error(event.message, error_type="server_error" if event.transient else "invalid_request_error",
                                  code=event.code)
            elif isinstance(event, ToolCallRequested):
                await self._function_call(event)
            elif not isinstance(event, AdapterInfo | ToolCallCancelled | UserTranscript):
                raise TypeError(f"no server event for {type(event).__name__}")
        if self._response is not None and self._response_calls and not self._spoke:
            await self._close_response("completed")  # OpenAI ends a response once it has asked for calls
            self._closed_for_calls = True

    async def _function_call(self, event: ToolCallRequested) -> None:
        response_id, _ = await self._open_response()
        item_id = self._id("item")
        output_index = len(self._response_calls) + (1 if self._spoke else 0)
        item = {"id": item_id, "type": "function_call", "object": "realtime.item", "call_id": event.call_id,
                "name": event.name, "arguments": event.arguments}
        await self._send("response.output_item.added", response_id=response_id, output_index=output_index,
                         item={**item, "status": "in_progress", "arguments": ""})
        await self._send("conversation.item.added", previous_item_id=self._last_item,
                         item={**item, "status": "in_progress", "arguments": ""})
        await self._send("response.function_call_arguments.done", response_id=response_id, item_id=item_id,
                         output_index=output_index, call_id=event.call_id, name=event.name, arguments=event.arguments)
        done = {**item, "status": "completed"}
        await self._send("response.output_item.done", response_id=response_id, output_index=output_index, item=done)
        await self._send("conversation.item.done", previous_item_id=self._last_item, item=done)
        self._last_item = item_id
        self._response_calls.append(done)
        self._calls[event.call_id] = event.name

    async def _mcp_call(self, event: McpCallReported) -> None:
        response_id, _ = await self._open_response()
        if event.status == "started":
            item_id = self._mcp_items[event.call_id] = self._id("mcp")
            item = {"id": item_id, "type": "mcp_call", "server_label": self._server_label, "name": event.name,
                    "arguments": ""}
            await self._send("response.output_item.added", response_id=response_id, output_index=0, item=item)
            await self._send("response.mcp_call.in_progress", item_id=item_id, output_index=0)
            return
        item_id = self._mcp_items.pop(event.call_id, "") or self._id("mcp")
        await self._send(f"response.mcp_call.{event.status}", item_id=item_id, output_index=0)

    async def _open_response(self) -> tuple[str, str]:
        if self._response is None:
            self._response = (self._id("resp"), self._id("item"))
            self._transcript = []
            await self._send("response.created", response={"id": self._response[0], "object": "realtime.response",
                                                           "status": "in_progress", "output": []})
        return self._response

    async def _close_response(self, status: str) -> None:
        response_id, item_id = await self._open_response()
        output = list(self._response_calls)
        if self._spoke or not output:
            transcript = "".join(self._transcript)
            item = {"id": item_id, "type": "message", "role": "assistant", "status": "completed",
                    "object": "realtime.item", "content": [{"type": "output_audio", "transcript": transcript}]}
            await self._send("response.output_audio.done", response_id=response_id, item_id=item_id, output_index=0,
                             content_index=0)
            await self._send("response.output_audio_transcript.done", response_id=response_id, item_id=item_id,
                             output_index=0, content_index=0, transcript=transcript)
            await self._send("response.output_item.done", response_id=response_id, output_index=0, item=item)
            output.insert(0, item)
            self._last_item = item_id
        await self._send("response.done", response={"id": response_id, "object": "realtime.response",
                                                    "status": status, "output": output})
        self._response = None
        self._transcript = []
        self._spoke = False
        self._response_calls = []


class RealtimeAgentServer:
    """``async with RealtimeAgentServer(factory, port=0) as server:`` then connect to ``server.url``."""

    def __init__(self, factory: AgentFactory, *, agent_name: str, host: str = "127.0.0.1", port: int = 8765,
                 sock: socket.socket | None = None) -> None:
        self.factory = factory
        self.agent_name = agent_name
        self.host = host
        self.port = port
        #: A listening socket made by whoever started us (a sandboxed host has no network to bind in).
        self.sock = sock
        self._ids = itertools.count(1)
        self._server: Server | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "the server is not started"
        host, port = next(iter(self._server.sockets)).getsockname()[:2]
        return f"ws://{host}:{port}{REALTIME_PATH}"

    def _check_path(self, connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.partition("?")[0]
        if path != REALTIME_PATH:
            return connection.respond(HTTPStatus.NOT_FOUND, f"no realtime endpoint at {path}; use {REALTIME_PATH}\n")
        return None

    async def _serve(self, ws: ServerConnection) -> None:
        await _Connection(ws, self.factory, self.agent_name, self._ids).run()

    async def __aenter__(self) -> RealtimeAgentServer:
        where: dict[str, Any] = {"sock": self.sock} if self.sock is not None else {"host": self.host, "port": self.port}
        self._server = await serve(self._serve, **where, process_request=self._check_path,
                                   max_size=AGENT_LIMITS.ws_message_bytes, compression=None)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def serve_forever(self, *, announce: Callable[[dict[str, Any]], None] | None = None,
                            exit_with_stdin: bool = False) -> None:
        """Serve until cancelled; ``announce`` is given the URL once it listens (``--port 0``);
        with ``exit_with_stdin`` it stops when its stdin closes (the harness that started it is gone)."""
        async with self:
            log.info("%s serving the OpenAI Realtime protocol at %s", self.agent_name, self.url)
            if announce is not None:
                announce({"url": self.url})
            await (_stdin_closed() if exit_with_stdin else asyncio.Future())


async def _stdin_closed() -> None:
    """Returns once stdin reaches end of file (read on the loop: no thread is left blocked)."""
    reader = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while await reader.read(4096):
        pass


def _announcer() -> Callable[[dict[str, Any]], None]:
    """Where the URL is printed: the original stdout, as one JSON line, then closed. Everything the
    hosted code prints goes to stderr from here on, so the line the harness reads is ours alone."""
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())

    def announce(payload: dict[str, Any]) -> None:
        with channel:
            channel.write(json.dumps(payload) + "\n")

    return announce


def main(argv: list[str] | None = None) -> None:
    from .registry import UnknownModelError, get_model

    parser = argparse.ArgumentParser(description="Serve an agent adapter over the OpenAI Realtime protocol.")
    parser.add_argument("--agent", "--adapter", dest="agent", required=True,
                        help="registry key (e.g. native-oracle), package.module:Class, or an installed entry point")
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8765, help="0: any free port (the URL is printed as JSON)")
    parser.add_argument("--check", action="store_true",
                        help="load the adapter, print what it is as one JSON line and exit (2 when it does not load)")
    parser.add_argument("--exit-with-stdin", action="store_true", help="stop when stdin closes")
    parser.add_argument("--listen-fd", type=int, default=None,
                        help="serve on this inherited listening socket instead of --host/--port (the URL is printed)")
    args = parser.parse_args(argv)
    announce = _announcer()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        # Loaded here, in the host: whatever the code does, it does in this process (or container).
        spec = get_model(args.agent, trust_adapter=True)
    except UnknownModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if spec.interface != "realtime":
        print(f"error: {args.agent} is a {spec.interface} agent, not a realtime one", file=sys.stderr)
        raise SystemExit(2)
    if args.check:
        announce({"key": spec.key, "display_name": spec.display_name, "tool_modes": list(spec.tool_modes),
                  "clock": spec.clock})
        return
    sock = socket.socket(fileno=args.listen_fd) if args.listen_fd is not None else None
    server = RealtimeAgentServer(spec.create_adapter, agent_name=spec.key, host=args.host, port=args.port, sock=sock)
    announcing = args.port == 0 or sock is not None
    asyncio.run(server.serve_forever(announce=announce if announcing else None, exit_with_stdin=args.exit_with_stdin))


if __name__ == "__main__":
    main()
