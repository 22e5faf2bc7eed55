"""Google Gemini Live (BidiGenerateContent) over a websocket.

User audio goes out at 16 kHz through the polyphase streaming resampler (never per-chunk linear
interpolation); agent audio comes back at 24 kHz. Gemini runs its own activity detection with
``START_OF_ACTIVITY_INTERRUPTS``, so the model hears barge-ins itself and says so with
``serverContent.interrupted`` (there is no server-side truncation: the unplayed audio is simply
dropped, ``PlayoutCleared``). Calls come as ``toolCall`` with ids and names; every call of one
``toolCall`` is answered in a single ``toolResponse`` under its id and name, with explicit
``INTERRUPT`` scheduling (the default, WHEN_IDLE, may never fire while audio streams).

Sessions are resumable: the adapter keeps the newest ``sessionResumptionUpdate`` handle and, when
the server closes the socket (after a ``goAway``, or a 1011 keepalive failure right after a turn),
reconnects with it transparently (``AdapterInfo`` records each resumption). Without a handle the
close is infrastructure (transient). Usage is cumulative on the wire and reported per turn.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

import numpy as np

from harness.agents.realtime import (
    AdapterInfo,
    AudioDelta,
    PlayoutCleared,
    ResponseDone,
    SessionConfig,
    SpeechStarted,
    ToolCallCancelled,
    ToolCallRequested,
    ToolResult,
    TranscriptDelta,
    Usage,
    UserTranscript,
)
from harness.audio.frames import SAMPLE_RATE, AudioFrame
from harness.audio.resample import StreamingResampler

from . import gemini_wire as wire
from .errors import ProviderRefused, ProviderUnavailable
from .ws_adapter import MalformedMessage, WebsocketAdapter

__all__ = ["GEMINI_VOICES", "GeminiLiveAdapter"]

GEMINI_VOICES = frozenset({"Puck", "Charon", "Kore", "Fenrir", "Aoede", "Leda", "Orus", "Zephyr"})
INPUT_RATE = 16_000
#: Resumptions one session may use before a close counts as an infrastructure failure.
MAX_RESUMPTIONS = 3

Handler = Callable[[Any, Any], Awaitable[None]]


class GeminiLiveAdapter(WebsocketAdapter):
    model_id: ClassVar[str] = "gemini-live"
    provider: ClassVar[str] = "Gemini"
    api_key_env: ClassVar[tuple[str, ...]] = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    endpoint_env: ClassVar[str | None] = "GEMINI_LIVE_URL"
    default_endpoint: ClassVar[str] = (
        "wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
    )
    default_model: ClassVar[str | None] = "gemini-3.8-live"
    default_voice: ClassVar[str] = "Puck"

    def __init__(self, *, endpoint: str | None = None, model: str | None = None, require_key: bool = True) -> None:
        super().__init__(endpoint=endpoint, model=model, require_key=require_key)
        self._to_provider = StreamingResampler(SAMPLE_RATE, INPUT_RATE)
        self._from_provider: dict[int, StreamingResampler] = {}
        self._setup: wire.Setup | None = None
        self._handle: str | None = None
        self._resumptions = 0
        self._turn = 0
        self._usage_so_far = wire.UsageMetadata()
        self._usage_now: wire.UsageMetadata | None = None
        #: Call id → name, and the unanswered calls of each toolCall message.
        self._call_names: dict[str, str] = {}
        self._batches: list[dict[str, wire.FunctionResponse | None]] = []

    def _headers(self, api_key: str | None) -> dict[str, str]:
        return {"x-goog-api-key": api_key} if api_key else {}

    # -- session set-up --------------------------------------------------------------------------

    async def _open_session(self, config: SessionConfig) -> None:
        voice = config.voice if config.voice in GEMINI_VOICES else self.default_voice
        turns = config.turn_detection
        self._session_meta.update(voice=voice, requested_voice=config.voice, turn_detection=turns.type)
        self._setup = wire.Setup(
            model=f"models/{self.provider_model}",
            generation_config=wire.GenerationConfig(
                speech_config=wire.SpeechConfig(voice_config=wire.VoiceConfig(prebuilt_voice_config=wire.PrebuiltVoice(voice_name=voice)))
            ),
            system_instruction=wire.Content(parts=[wire.Part(text=config.instructions)]),
            tools=[
                wire.Tool(
                    function_declarations=[
                        wire.FunctionDeclaration(
                            name=tool["name"],
                            description=tool.get("description") or "",
                            parameters_json_schema=tool.get("parameters") or {"type": "object", "properties": {}},
                        )
                        for tool in config.tools
                    ]
                )
            ],
            realtime_input_config=wire.RealtimeInputConfig(
                automatic_activity_detection=wire.AutomaticActivityDetection(
                    disabled=turns.type == "none",
                    prefix_padding_ms=turns.prefix_padding_ms,
                    silence_duration_ms=turns.silence_duration_ms,
                ),
                activity_handling="START_OF_ACTIVITY_INTERRUPTS" if turns.interrupt_response else "NO_INTERRUPTION",
            ),
        )
        await self._send(wire.SetupMessage(setup=self._setup))

    async def _resume(self) -> bool:
        if self._handle is None or self._setup is None or self._resumptions >= MAX_RESUMPTIONS:
            return False
        self._resumptions += 1
        try:
            self._ws = await self._open()
            self._start_reader()
            setup = self._setup.model_copy(update={"session_resumption": wire.SessionResumption(handle=self._handle)})
            await self._send(wire.SetupMessage(setup=setup))
            await self._await_ready()
        except (ProviderRefused, ProviderUnavailable):
            return False
        self._events.append(AdapterInfo({"resumed_session": self._resumptions, "resumption_handle": self._handle}))
        return True

    # -- the runner's side -----------------------------------------------------------------------

    async def _send_audio(self, frame: AudioFrame) -> None:
        pcm16k = self._to_provider.process(frame.pcm)
        if self._ready is None or not self._ready.done():
            return  # (re)connecting: Gemini takes nothing before setupComplete
        data = np.clip(np.round(pcm16k), -32768, 32767).astype("<i2").tobytes()
        blob = wire.Blob(data=base64.b64encode(data).decode("ascii"), mime_type=f"audio/pcm;rate={INPUT_RATE}")
        await self._send(wire.RealtimeInputMessage(realtime_input=wire.RealtimeInput(audio=blob)))

    async def _send_tool_result(self, result: ToolResult) -> None:
        name = self._call_names.get(result.call_id, result.name)
        output = result.output if isinstance(result.output, dict) else {"result": result.output}
        response = wire.FunctionResponse(
            id=result.call_id if result.call_id != name else None,
            name=name,
            response={"error": output} if result.is_error else {"output": output},
        )
        for batch in self._batches:
            if result.call_id in batch and batch[result.call_id] is None:
                batch[result.call_id] = response
                if all(batch.values()):
                    self._batches.remove(batch)
                    responses = [r for r in batch.values() if r is not None]
                    await self._send(wire.ToolResponseMessage(tool_response=wire.ToolResponse(function_responses=responses)))
                return

    # -- provider messages -------------------------------------------------------------------------

    async def _on_message(self, message: dict[str, Any]) -> None:
        parsed = wire.ServerMessage.model_validate(message)
        for name, handler in self._HANDLERS:
            part = getattr(parsed, name)
            if part is not None:
                await handler(self, part)

    async def _on_setup_complete(self, part: wire.SetupComplete) -> None:
        self._session_ready(session_id=part.session_id)

    async def _on_server_content(self, content: wire.ServerContent) -> None:
        turn_id = f"turn_{self._turn}"
        if content.interrupted:
            self._events.append(SpeechStarted())
            self._events.append(PlayoutCleared(turn_id))
        if content.input_transcription and content.input_transcription.text:
            self._events.append(UserTranscript(content.input_transcription.text, bool(content.input_transcription.finished)))
        if content.output_transcription and content.output_transcription.text:
            self._events.append(TranscriptDelta(content.output_transcription.text, turn_id, turn_id))
        for part in content.model_turn.parts if content.model_turn else []:
            if part.inline_data is not None and part.inline_data.data:
                self._events.append(AudioDelta(self._agent_pcm(part.inline_data), turn_id, turn_id))
        if content.turn_complete or content.interrupted:
            self._events.append(ResponseDone(turn_id, self._turn_usage(), "interrupted" if content.interrupted else "completed"))
            self._turn += 1

    def _agent_pcm(self, blob: wire.InlineData) -> bytes:
        pcm = base64.b64decode(blob.data)
        if len(pcm) % 2:
            raise MalformedMessage(f"inline audio of {len(pcm)} bytes is not PCM16")
        rate = _rate(blob.mime_type)
        if rate == SAMPLE_RATE:
            return pcm
        resampler = self._from_provider.setdefault(rate, StreamingResampler(rate, SAMPLE_RATE))
        out = resampler.process(np.frombuffer(pcm, dtype="<i2"))
        return np.clip(np.round(out), -32768, 32767).astype("<i2").tobytes()

    async def _on_tool_call(self, part: wire.ToolCall) -> None:
        batch: dict[str, wire.FunctionResponse | None] = {}
        for call in part.function_calls:
            call_id = call.id or call.name
            self._call_names[call_id] = call.name
            batch[call_id] = None
            self._events.append(ToolCallRequested(call_id, call.name, json.dumps(call.args), f"turn_{self._turn}"))
        if batch:
            self._batches.append(batch)

    async def _on_cancellation(self, part: wire.ToolCallCancellation) -> None:
        for batch in self._batches:
            for call_id in part.ids:
                batch.pop(call_id, None)
        self._batches = [b for b in self._batches if b]
        self._events.append(ToolCallCancelled(tuple(part.ids)))

    async def _on_usage(self, part: wire.UsageMetadata) -> None:
        self._usage_now = part

    async def _on_go_away(self, part: wire.GoAway) -> None:
        self._session_meta["go_away_time_left"] = part.time_left

    async def _on_resumption(self, part: wire.ResumptionUpdate) -> None:
        if part.resumable and part.new_handle:
            self._handle = part.new_handle

    def _turn_usage(self) -> Usage | None:
        now, before = self._usage_now, self._usage_so_far
        if now is None:
            return None
        self._usage_so_far = now
        return Usage(
            input_tokens=_delta(now.prompt_token_count, before.prompt_token_count),
            output_tokens=_delta(now.response_token_count, before.response_token_count),
            input_audio_tokens=_delta(_modality(now.prompt_tokens_details, "AUDIO"), _modality(before.prompt_tokens_details, "AUDIO")),
            output_audio_tokens=_delta(_modality(now.response_tokens_details, "AUDIO"), _modality(before.response_tokens_details, "AUDIO")),
            input_text_tokens=_delta(_modality(now.prompt_tokens_details, "TEXT"), _modality(before.prompt_tokens_details, "TEXT")),
            output_text_tokens=_delta(_modality(now.response_tokens_details, "TEXT"), _modality(before.response_tokens_details, "TEXT")),
            cached_tokens=_delta(now.cached_content_token_count, before.cached_content_token_count),
        )

    #: ServerMessage field → handler, in the order a combined message is handled.
    _HANDLERS: ClassVar[tuple[tuple[str, Handler], ...]] = (
        ("setup_complete", _on_setup_complete),
        ("session_resumption_update", _on_resumption),
        ("usage_metadata", _on_usage),
        ("tool_call", _on_tool_call),
        ("tool_call_cancellation", _on_cancellation),
        ("server_content", _on_server_content),
        ("go_away", _on_go_away),
    )


def _rate(mime_type: str) -> int:
    for piece in mime_type.split(";"):
        key, _, value = piece.strip().partition("=")
        if key == "rate" and value.isdigit():
            return int(value)
    return SAMPLE_RATE


def _modality(details: list[wire.ModalityCount], modality: str) -> int | None:
    counts = [d.token_count for d in details if d.modality == modality]
    return sum(counts) if counts else None


def _delta(now: int | None, before: int | None) -> int | None:
    return None if now is None else now - (before or 0)
