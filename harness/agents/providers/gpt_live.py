"""OpenAI GPT-Live (``gpt-live-1``) over the Live sessions websocket, with Responses delegation.

GPT-Live is the voice; the task is delegated to a backend Responses model (``backend_model``,
default from ``APEX_GPTLIVE_BACKEND``, else ``gpt-4o``) that gets the runner's instructions and the
task's tools. The backend's function calls arrive inside ``response.event`` envelopes and are
relayed through the harness's tool bridge: outputs go back as ``response.item.create``
``function_call_output`` under the call id, and one ``response.create`` continues the backend once
every call of its response is answered. In native tool mode the backend gets the task's MCP server
instead (the Live delegation config's ``mcp`` tool): its own MCP client calls the tools, and the
harness observes the calls at the server.

GPT-Live's turns are server-driven and model-interrupted: nothing in the stream marks the end of a
spoken response, and no client event truncates one. The adapter therefore ends a response when the
output audio has paused for ``SEGMENT_GAP_MS`` of media time, and attaches the backend usage of that
response to it.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel

from harness.agents.realtime import (
    AudioDelta,
    ResponseDone,
    SessionConfig,
    ToolCallRequested,
    ToolResult,
    TranscriptDelta,
    Usage,
    UserTranscript,
)
from harness.audio.frames import AudioFrame

from . import live_wire as wire
from .openai_realtime import OPENAI_VOICES, mcp_tool, tool_output_text
from .openai_wire import FunctionTool
from .ws_adapter import MalformedMessage, WebsocketAdapter

__all__ = ["GptLiveAdapter"]

#: A pause in GPT-Live's output audio this long ends the agent's response.
SEGMENT_GAP_MS = 300
VOICE_LAYER_INSTRUCTIONS = (
    "You are the voice of a phone assistant. Speak naturally and briefly. Delegate the task's work "
    "and every tool use to your backend, and say what it finds."
)

Handler = Callable[[Any, Any], Awaitable[None]]


@dataclass
class _Calls:
    pending: set[str] = field(default_factory=set)
    done: bool = False
    continued: bool = False


class GptLiveAdapter(WebsocketAdapter):
    model_id: ClassVar[str] = "gpt-live-1"
    provider: ClassVar[str] = "OpenAI Live"
    api_key_env: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY",)
    endpoint_env: ClassVar[str | None] = "OPENAI_LIVE_URL"
    default_endpoint: ClassVar[str] = "wss://api.openai.com/v1/live/sessions"
    default_model: ClassVar[str | None] = "gpt-live-1"
    default_voice: ClassVar[str] = "marin"

    def __init__(
        self, *, endpoint: str | None = None, model: str | None = None, require_key: bool = True, backend_model: str | None = None
    ) -> None:
        super().__init__(endpoint=endpoint, model=model, require_key=require_key)
        self.backend_model = backend_model or os.environ.get("APEX_GPTLIVE_BACKEND", "").strip() or "gpt-4o"
        self._segment = 0
        self._speaking_since: int | None = None
        self._last_output_ms = 0
        self._usage: list[wire.BackendUsage] = []
        self._calls: dict[str | None, _Calls] = {}
        self._call_batch: dict[str, _Calls] = {}

    async def _open_session(self, config: SessionConfig) -> None:
        voice = config.voice if config.voice in OPENAI_VOICES else self.default_voice
        self._session_meta.update(voice=voice, requested_voice=config.voice, backend_model=self.backend_model)
        tools: list[Any] = [
            FunctionTool(name=t["name"], description=t.get("description") or "", parameters=t.get("parameters") or {"type": "object", "properties": {}})
            for t in config.tools
        ] if config.mcp is None else [mcp_tool(config)]  # fmt: skip
        await self._send(
            wire.SessionStart(
                session=wire.LiveSession(
                    model=self.provider_model or "gpt-live-1",
                    instructions=VOICE_LAYER_INSTRUCTIONS,
                    audio=wire.LiveAudio(output=wire.LiveVoice(voice=voice)),
                    delegation=wire.ResponsesDelegation(
                        responses=wire.ResponsesBackend(model=self.backend_model, instructions=config.instructions, tools=tools)
                    ),
                )
            )
        )

    # -- the runner's side -----------------------------------------------------------------------

    async def _send_audio(self, frame: AudioFrame) -> None:
        await self._send(wire.InputAudioAppend(audio=base64.b64encode(frame.to_bytes()).decode("ascii")))
        if self._speaking_since is not None and self.now_ms - self._last_output_ms >= SEGMENT_GAP_MS:
            self._end_segment()

    async def _send_tool_result(self, result: ToolResult) -> None:
        await self._send(wire.ResponseItemCreate(item=wire.FunctionCallOutput(call_id=result.call_id, output=tool_output_text(result))))
        batch = self._call_batch.pop(result.call_id, None)
        if batch is not None:
            batch.pending.discard(result.call_id)
            await self._maybe_continue(batch)

    async def _maybe_continue(self, batch: _Calls) -> None:
        if batch.done and not batch.pending and not batch.continued:
            batch.continued = True
            await self._send(wire.ResponseCreate())

    async def close(self) -> None:
        await self._send(wire.SessionClose())
        await super().close()

    # -- the spoken stream -----------------------------------------------------------------------

    def _segment_id(self) -> str:
        if self._speaking_since is None:
            self._segment += 1
            self._speaking_since = self.now_ms
        self._last_output_ms = self.now_ms
        return f"segment_{self._segment}"

    def _end_segment(self) -> None:
        usage, self._usage = self._usage, []
        self._events.append(ResponseDone(f"segment_{self._segment}", _usage(usage), "completed"))
        self._speaking_since = None

    # -- provider events -------------------------------------------------------------------------

    async def _on_message(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if not isinstance(kind, str):  # a list would make the lookup raise: the peer's error, not ours
            raise MalformedMessage(f"its type is {kind!r}, not a string")
        entry = self._HANDLERS.get(kind)
        if entry is not None:
            model, handler = entry
            await handler(self, model.model_validate(message))

    async def _on_started(self, event: wire.SessionStarted) -> None:
        self._session_ready(session_id=event.session.id, resolved_model=event.session.model)

    async def _on_audio(self, event: wire.Delta) -> None:
        segment = self._segment_id()
        self._events.append(AudioDelta(base64.b64decode(event.delta), segment, segment))

    async def _on_transcript(self, event: wire.Delta) -> None:
        if event.delta:
            segment = self._segment_id()
            self._events.append(TranscriptDelta(event.delta, segment, segment))

    async def _on_input_transcript(self, event: wire.Delta) -> None:
        if event.delta:
            self._events.append(UserTranscript(event.delta, final=False))

    async def _on_backend(self, event: wire.ResponseEvent) -> None:
        kind = event.event.get("type")
        if kind == "response.output_item.done":
            done = wire.BackendItemDone.model_validate(event.event)
            if done.item.type == "function_call" and done.item.call_id:
                batch = self._calls.setdefault(done.response_id, _Calls())
                batch.pending.add(done.item.call_id)
                self._call_batch[done.item.call_id] = batch
                self._events.append(ToolCallRequested(done.item.call_id, done.item.name or "", done.item.arguments or "", done.response_id))
        elif kind in ("response.completed", "response.failed", "response.incomplete"):
            response = wire.BackendResponseDone.model_validate(event.event).response
            if response.usage is not None:
                self._usage.append(response.usage)
            finished = self._calls.get(response.id)
            if finished is not None:
                finished.done = True
                await self._maybe_continue(finished)

    async def _on_error(self, event: wire.ErrorEvent) -> None:
        self._provider_error(event.error.type, event.error.code, event.error.message)

    _HANDLERS: ClassVar[dict[str, tuple[type[BaseModel], Handler]]] = {
        "session.started": (wire.SessionStarted, _on_started),
        "session.output_audio.delta": (wire.Delta, _on_audio),
        "session.output_transcript.delta": (wire.Delta, _on_transcript),
        "session.input_transcript.delta": (wire.Delta, _on_input_transcript),
        "response.event": (wire.ResponseEvent, _on_backend),
        "error": (wire.ErrorEvent, _on_error),
    }


def _usage(usages: list[wire.BackendUsage]) -> Usage | None:
    """The backend's token usage (GPT-Live's own audio is billed by the second, not reported per turn)."""
    if not usages:
        return None
    return Usage(
        input_tokens=sum(u.input_tokens or 0 for u in usages),
        output_tokens=sum(u.output_tokens or 0 for u in usages),
        cached_tokens=sum(u.input_tokens_details.cached_tokens or 0 for u in usages),
    )
