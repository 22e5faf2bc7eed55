"""OpenAI Realtime (GA) over a websocket, and the base of the OpenAI-style dialects.

The model runs its own turn detection (server or semantic VAD from ``SessionConfig``), so it hears
barge-ins itself. When it reports the user speaking over audio that is still playing, the adapter
does what OpenAI's reference clients do: it stops the playout (``PlayoutCleared``) and truncates
the item at the milliseconds actually played, so the model's context holds only what was heard.
Function calls are answered under their call id; the continuation ``response.create`` is sent once,
when the response that asked has finished and every one of its calls has an output (the model
hangs if asked to continue with a call unanswered).

A turn with function calls spans two responses here (the calls, then the continuation), while the
runner takes ``ResponseDone`` as the end of the agent's turn: so the calls' ``ResponseDone`` is held
and delivered just before the continuation's first event (or after ``CONTINUATION_WAIT_MS`` of media
time without one, so a model that never continues still ends its turn).

In native tool mode the session declares the task's MCP server (an ``mcp`` tool) and the provider's
own MCP client calls it: its ``mcp_call`` items and ``response.mcp_call.*`` events are reported to
the runner as :class:`McpCallReported` diagnostics (never executed here, never graded: the task
server's call stream is the record), and the tool listing goes into the adapter's metadata.

Subclasses for other providers change the class attributes (endpoint, key, voices), map their event
names onto the GA ones (``event_aliases``) and build their own session object (``_session``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel

from harness.agents.limits import AGENT_LIMITS
from harness.agents.realtime import (
    AgentEvent,
    AudioDelta,
    McpCallReported,
    PlaybackReport,
    PlayoutCleared,
    ResponseDone,
    SessionConfig,
    SpeechStarted,
    SpeechStopped,
    ToolCallRequested,
    ToolResult,
    TranscriptDelta,
    TranscriptDone,
    TurnDetection,
    Usage,
    UserTranscript,
)
from harness.audio.frames import AudioFrame

from . import openai_wire as wire
from .playout import PlayoutTracker
from .turn_end import LocalTurnEnd
from .ws_adapter import MalformedMessage, WebsocketAdapter, check_bound, with_query

__all__ = ["OPENAI_VOICES", "OpenAICompatibleAdapter", "OpenAIRealtimeAdapter", "allowed_tools", "mcp_tool",
           "tool_output_text"]

#: How long a function-call response's end is held for its continuation (see the module docstring).
CONTINUATION_WAIT_MS = 3000

OPENAI_VOICES = frozenset({"alloy", "ash", "ballad", "coral", "echo", "sage", "shimmer", "verse", "marin", "cedar"})


def tool_output_text(result: ToolResult) -> str:
    """The output as the provider wants it: a string (JSON for structured results)."""
    if isinstance(result.output, str):
        return json.dumps({"error": result.output}) if result.is_error else result.output
    return json.dumps(result.output, ensure_ascii=False, default=str)


def allowed_tools(config: SessionConfig) -> list[str]:
    """The endpoint's own list, else exactly the task's tools (never whatever else a server lists)."""
    assert config.mcp is not None
    return list(config.mcp.allowed_tools) or [tool["name"] for tool in config.tools]


def mcp_tool(config: SessionConfig) -> wire.McpTool:
    """The task's MCP server as OpenAI's remote-MCP tool (Realtime sessions and GPT-Live's backend).

    Approval is never asked for: the harness answers no approval requests, and the task's own
    consent rules (granted through the control plane) are what guards a commit.
    """
    mcp = config.mcp
    assert mcp is not None
    return wire.McpTool(
        server_label=mcp.server_label,
        server_url=mcp.url,
        headers=dict(mcp.headers) or None,
        require_approval="never",
        allowed_tools=allowed_tools(config),
    )


@dataclass
class _CallBatch:
    """The function calls one response asked for, and whether it has finished."""

    pending: set[str] = field(default_factory=set)
    response_done: bool = False
    continued: bool = False


Handler = Callable[[Any, Any], Awaitable[None]]


class OpenAIRealtimeAdapter(WebsocketAdapter):
    model_id: ClassVar[str] = "gpt-realtime"
    provider: ClassVar[str] = "OpenAI"
    api_key_env: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY",)
    endpoint_env: ClassVar[str | None] = "OPENAI_REALTIME_URL"
    default_endpoint: ClassVar[str] = "wss://api.openai.com/v1/realtime"
    default_model: ClassVar[str | None] = "gpt-realtime-2.1"
    voices: ClassVar[frozenset[str]] = OPENAI_VOICES
    default_voice: ClassVar[str] = "marin"
    #: The provider's event names → the GA names handled below (dialects such as StepFun's beta ones).
    event_aliases: ClassVar[dict[str, str]] = {}

    def __init__(self, *, endpoint: str | None = None, model: str | None = None, require_key: bool = True) -> None:
        super().__init__(endpoint=endpoint, model=model, require_key=require_key)
        self._playout = PlayoutTracker()
        self._batches: dict[str | None, _CallBatch] = {}
        self._batch_of_call: dict[str, _CallBatch] = {}
        self._seen_calls: set[str] = set()
        self._held_done: list[tuple[ResponseDone, int]] = []
        self._local_turns: LocalTurnEnd | None = None
        self._voice = self.default_voice
        #: ``mcp_call`` item id → (tool name, response id), from the provider's item events.
        self._mcp_calls: dict[str, tuple[str, str | None]] = {}

    # -- session set-up ------------------------------------------------------------------------

    def _url(self) -> str:
        return with_query(self.endpoint, model=self.provider_model or None)

    def voice_for(self, requested: str) -> str:
        """The requested voice if the provider has it, else its default (an unknown voice makes
        the provider reject the whole session)."""
        return requested if requested in self.voices else self.default_voice

    def _turn_detection(self, turns: TurnDetection) -> wire.ServerVad | wire.SemanticVad | None:
        if turns.type == "semantic_vad":
            return wire.SemanticVad(
                eagerness=turns.eagerness, create_response=turns.create_response, interrupt_response=turns.interrupt_response
            )
        if turns.type == "server_vad":
            return wire.ServerVad(
                threshold=turns.threshold,
                prefix_padding_ms=turns.prefix_padding_ms,
                silence_duration_ms=turns.silence_duration_ms,
                create_response=turns.create_response,
                interrupt_response=turns.interrupt_response,
            )
        return None

    def _tools(self, config: SessionConfig) -> list[Any]:
        """Function tools named and described exactly as the task's MCP server lists them; in
        native tool mode, the task's MCP server itself, for the provider's own MCP client."""
        if config.mcp is not None:
            return [self._mcp_tool(config)]
        return [
            wire.FunctionTool(
                name=tool["name"],
                description=tool.get("description") or "",
                parameters=tool.get("parameters") or {"type": "object", "properties": {}},
            )
            for tool in config.tools
        ]

    def _mcp_tool(self, config: SessionConfig) -> BaseModel:
        return mcp_tool(config)

    def _session(self, config: SessionConfig) -> BaseModel:
        return wire.SessionUpdate(
            session=wire.RealtimeSession(
                instructions=config.instructions,
                audio=wire.SessionAudio(
                    input=wire.AudioInput(turn_detection=self._turn_detection(config.turn_detection)),
                    output=wire.AudioOutput(voice=self._voice),
                ),
                tools=self._tools(config),
            )
        )

    async def _open_session(self, config: SessionConfig) -> None:
        self._voice = self.voice_for(config.voice)
        self._session_meta.update(voice=self._voice, requested_voice=config.voice, turn_detection=config.turn_detection.type)
        if config.turn_detection.type == "none":
            self._local_turns = LocalTurnEnd(config.turn_detection.silence_duration_ms or 500)
        await self._send(self._session(config))

    # -- the runner's side -----------------------------------------------------------------------

    def _emit(self, event: AgentEvent) -> None:
        """Queue an event for the runner, after any held function-call response end."""
        self._emit_held()
        self._events.append(event)

    def _emit_held(self) -> None:
        self._events.extend(done for done, _ in self._held_done)
        self._held_done.clear()

    async def _send_audio(self, frame: AudioFrame) -> None:
        if self._held_done and self.now_ms >= self._held_done[0][1]:
            self._emit_held()
        await self._send(wire.InputAudioBufferAppend(audio=base64.b64encode(frame.to_bytes()).decode("ascii")))
        if self._local_turns is not None and self._local_turns.update(frame.pcm):
            await self._send(wire.InputAudioBufferCommit())
            await self._send(wire.ResponseCreate())

    async def _send_tool_result(self, result: ToolResult) -> None:
        await self._send(
            wire.ConversationItemCreate(item=wire.FunctionCallOutputItem(call_id=result.call_id, output=tool_output_text(result)))
        )
        batch = self._batch_of_call.pop(result.call_id, None)
        if batch is not None:
            batch.pending.discard(result.call_id)
            await self._maybe_continue(batch)

    def playback(self, report: PlaybackReport) -> None:
        self._playout.report(report.item_id, report.played_ms)

    async def _maybe_continue(self, batch: _CallBatch) -> None:
        if batch.response_done and not batch.pending and not batch.continued:
            batch.continued = True
            await self._send(wire.ResponseCreate())

    # -- provider events -------------------------------------------------------------------------

    async def _on_message(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if not isinstance(kind, str):  # a list would make the lookup raise: the peer's error, not ours
            raise MalformedMessage(f"its type is {kind!r}, not a string")
        entry = self._HANDLERS.get(self.event_aliases.get(kind, kind))
        if entry is not None:
            model, handler = entry
            await handler(self, model.model_validate(message))

    async def _on_session_created(self, event: wire.SessionEvent) -> None:
        self._session_meta.update(session_id=event.session.id, resolved_model=event.session.model)

    async def _on_session_updated(self, event: wire.SessionEvent) -> None:
        self._session_ready()

    async def _on_speech_started(self, event: wire.SpeechStartedEvent) -> None:
        self._emit(SpeechStarted(event.audio_start_ms, event.item_id))
        playing = self._playout.playing(self.now_ms)
        if playing is None:
            return
        item_id, response_id, played_ms = playing
        self._playout.cleared(self.now_ms)
        self._emit(PlayoutCleared(response_id))
        if item_id:
            await self._send(wire.ConversationItemTruncate(item_id=item_id, audio_end_ms=played_ms))

    async def _on_speech_stopped(self, event: wire.SpeechStoppedEvent) -> None:
        self._emit(SpeechStopped(event.audio_end_ms, event.item_id))

    async def _on_audio_delta(self, event: wire.OutputAudioDeltaEvent) -> None:
        pcm = base64.b64decode(event.delta)
        check_bound(self._playout.items_after(event.item_id or ""), AGENT_LIMITS.items_per_session, "audio items")
        self._playout.audio(event.item_id or "", event.response_id, len(pcm), self.now_ms)
        self._emit(AudioDelta(pcm, event.response_id, event.item_id))

    async def _on_text_delta(self, event: wire.TextDeltaEvent) -> None:
        if event.delta:
            self._emit(TranscriptDelta(event.delta, event.response_id, event.item_id))

    async def _on_transcript_done(self, event: wire.TranscriptDoneEvent) -> None:
        self._emit(TranscriptDone(event.transcript or event.text or "", event.response_id, event.item_id))

    async def _on_arguments_done(self, event: wire.FunctionCallArgumentsDoneEvent) -> None:
        self._call_requested(event.response_id, event.item_id, event.call_id, event.name or "", event.arguments)

    async def _on_output_item_done(self, event: wire.OutputItemDoneEvent) -> None:
        item = event.item
        if item.type == "mcp_call" and item.id and item.error is not None:
            errors = self._session_meta.setdefault("mcp_call_errors", [])
            check_bound(len(errors) + 1, AGENT_LIMITS.errors_per_session, "MCP call errors reported")
            errors.append(f"{_name(item.name)}: {item.error.message[:200]}")
        if item.type == "function_call" and item.call_id:
            self._call_requested(event.response_id, item.id, item.call_id, item.name or "", item.arguments or "")

    async def _on_output_item_added(self, event: wire.OutputItemAddedEvent) -> None:
        item = event.item
        if item.type == "mcp_call" and item.id:
            if item.id not in self._mcp_calls:
                check_bound(len(self._mcp_calls) + 1, AGENT_LIMITS.items_per_session, "MCP call items")
            check_bound(len(event.response_id or ""), AGENT_LIMITS.tool_name_chars, "characters of a response id")
            self._mcp_calls[_name(item.id)] = (_name(item.name), event.response_id)

    def _mcp_call(self, item_id: str, status: str, error: str | None = None) -> None:
        name, response_id = self._mcp_calls.get(item_id, ("", None))
        self._emit(McpCallReported(item_id, name, status, response_id, error))  # type: ignore[arg-type]

    async def _on_mcp_call_in_progress(self, event: wire.McpCallStatusEvent) -> None:
        self._mcp_call(event.item_id, "started")

    async def _on_mcp_call_completed(self, event: wire.McpCallStatusEvent) -> None:
        self._mcp_call(event.item_id, "completed")

    async def _on_mcp_call_failed(self, event: wire.McpCallStatusEvent) -> None:
        self._mcp_call(event.item_id, "failed")

    async def _on_item_done(self, event: wire.ConversationItemDoneEvent) -> None:
        if event.item.type == "mcp_list_tools":
            self._session_meta["mcp_tools_listed"] = [tool.name for tool in event.item.tools]

    async def _on_mcp_list_tools_failed(self, event: wire.McpListToolsStatusEvent) -> None:
        # The provider could not list the task's tools (unreachable URL, refused token): every
        # call will fail, which the session shows; the metadata says why.
        self._session_meta["mcp_list_tools_failed"] = True

    def _call_requested(self, response_id: str | None, item_id: str | None, call_id: str, name: str, arguments: str) -> None:
        """One call, however many events announce it (arguments.done, output_item.done, response.done)."""
        if call_id in self._seen_calls:
            return
        check_bound(len(self._seen_calls) + 1, AGENT_LIMITS.items_per_session, "function calls")
        check_bound(len(call_id), AGENT_LIMITS.tool_name_chars, "characters of a call id")
        self._seen_calls.add(call_id)
        batch = self._batches.setdefault(response_id, _CallBatch())
        batch.pending.add(call_id)
        self._batch_of_call[call_id] = batch
        self._emit(ToolCallRequested(call_id, name, arguments, response_id, item_id))

    async def _on_response_done(self, event: wire.ResponseDoneEvent) -> None:
        response = event.response
        for item in response.output:
            if item.type == "function_call" and item.call_id:
                self._call_requested(response.id, item.id, item.call_id, item.name or "", item.arguments or "")
        done = ResponseDone(response.id, _usage(response.usage), response.status)
        batch = self._batches.get(response.id)
        if batch is None:
            self._emit(done)
            return
        self._emit_held()
        self._held_done.append((done, self.now_ms + CONTINUATION_WAIT_MS))
        batch.response_done = True
        await self._maybe_continue(batch)

    async def _on_input_transcript(self, event: wire.InputTranscriptionEvent) -> None:
        self._emit(UserTranscript(event.transcript, True, event.item_id))

    async def _on_error(self, event: wire.ErrorEvent) -> None:
        self._provider_error(event.error.type, event.error.code, event.error.message)

    _HANDLERS: ClassVar[dict[str, tuple[type[BaseModel], Handler]]] = {
        "session.created": (wire.SessionEvent, _on_session_created),
        "session.updated": (wire.SessionEvent, _on_session_updated),
        "input_audio_buffer.speech_started": (wire.SpeechStartedEvent, _on_speech_started),
        "input_audio_buffer.speech_stopped": (wire.SpeechStoppedEvent, _on_speech_stopped),
        "response.output_audio.delta": (wire.OutputAudioDeltaEvent, _on_audio_delta),
        "response.output_audio_transcript.delta": (wire.TextDeltaEvent, _on_text_delta),
        "response.output_text.delta": (wire.TextDeltaEvent, _on_text_delta),
        "response.output_audio_transcript.done": (wire.TranscriptDoneEvent, _on_transcript_done),
        "response.output_text.done": (wire.TranscriptDoneEvent, _on_transcript_done),
        "response.function_call_arguments.done": (wire.FunctionCallArgumentsDoneEvent, _on_arguments_done),
        "response.output_item.done": (wire.OutputItemDoneEvent, _on_output_item_done),
        "response.output_item.added": (wire.OutputItemAddedEvent, _on_output_item_added),
        "response.mcp_call.in_progress": (wire.McpCallStatusEvent, _on_mcp_call_in_progress),
        "response.mcp_call.completed": (wire.McpCallStatusEvent, _on_mcp_call_completed),
        "response.mcp_call.failed": (wire.McpCallStatusEvent, _on_mcp_call_failed),
        "conversation.item.done": (wire.ConversationItemDoneEvent, _on_item_done),
        "mcp_list_tools.failed": (wire.McpListToolsStatusEvent, _on_mcp_list_tools_failed),
        "response.done": (wire.ResponseDoneEvent, _on_response_done),
        "conversation.item.input_audio_transcription.completed": (wire.InputTranscriptionEvent, _on_input_transcript),
        "error": (wire.ErrorEvent, _on_error),
    }


def _name(value: str | None) -> str:
    """A name or id the peer gave, as the client keeps it: within ``tool_name_chars`` (the session's
    own check refuses a longer one in the event the client passes on)."""
    text = value or ""
    check_bound(len(text), AGENT_LIMITS.tool_name_chars, "characters of a name or id")
    return text


def _usage(usage: wire.ResponseUsage | None) -> Usage | None:
    if usage is None:
        return None
    return Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        input_audio_tokens=usage.input_token_details.audio_tokens,
        output_audio_tokens=usage.output_token_details.audio_tokens,
        input_text_tokens=usage.input_token_details.text_tokens,
        output_text_tokens=usage.output_token_details.text_tokens,
        cached_tokens=usage.input_token_details.cached_tokens,
    )


class OpenAICompatibleAdapter(OpenAIRealtimeAdapter):
    """Any server speaking the OpenAI Realtime protocol (``--model ws://HOST:PORT/PATH``): the same
    client, named for what it reaches, so its failures are not blamed on OpenAI."""

    model_id: ClassVar[str] = "openai-realtime-compatible"
    provider: ClassVar[str] = "OpenAI-Realtime-compatible agent"
