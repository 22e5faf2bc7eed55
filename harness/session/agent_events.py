"""Routes each event the agent sends to the part it concerns, within the frame it arrived in.

Audio goes to the agent channel's queue (and the user's hearing), transcripts to the hearing, tool
calls to the tool executor, turn-taking facts (the agent acted, answered, hung up) to the
:class:`TurnLedger`, and everything the adapter merely reports to the log as ``AGENT_SIGNAL``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from harness.agents.realtime import (
    AdapterError,
    AdapterInfo,
    AudioDelta,
    CallEnded,
    McpCallReported,
    PlayoutCleared,
    ResponseDone,
    SpeechStarted,
    SpeechStopped,
    ToolCallCancelled,
    ToolCallRequested,
    TranscriptDelta,
    TranscriptDone,
    UserTranscript,
)
from harness.events import EventBus, EventType

from .agent_boundary import AgentBoundary
from .agent_listener import AgentListener
from .channels import AgentChannel, AgentResponse
from .duplex_delivery import DeliveryTracker
from .tool_executor import ToolExecutor
from .turn_policy import TurnLedger

__all__ = ["AgentEventRouter"]


class AgentEventRouter:
    def __init__(self, agent: AgentBoundary, log: EventBus, ledger: TurnLedger, channel: AgentChannel,
                 listener: AgentListener, tools: ToolExecutor, deliveries: DeliveryTracker) -> None:
        self._agent, self._log, self._ledger, self._channel = agent, log, ledger, channel
        self._listener, self._tools, self._deliveries = listener, tools, deliveries
        self._responses: dict[str, AgentResponse] = {}
        self._current: AgentResponse | None = None
        #: Per response, the usage the adapter reported (token counts).
        self.usage: list[dict[str, Any]] = []
        #: The agent's own error events (its provider's, its socket's): the agent's, never infrastructure.
        self.agent_errors: list[str] = []
        self._handlers: dict[type, Callable[[Any, int], Awaitable[None]]] = {
            AudioDelta: self._on_audio, TranscriptDelta: self._on_transcript,
            TranscriptDone: self._on_transcript_done, ToolCallRequested: self._on_tool_call,
            ToolCallCancelled: self._on_tool_cancelled, McpCallReported: self._on_mcp_call_reported,
            PlayoutCleared: self._on_playout_cleared, SpeechStarted: self._on_speech_started,
            SpeechStopped: self._on_speech_stopped, UserTranscript: self._on_user_transcript,
            ResponseDone: self._on_response_done, CallEnded: self._on_call_ended,
            AdapterInfo: self._on_adapter_info, AdapterError: self._on_error,
        }

    @property
    def mid_response(self) -> bool:
        """A response has started and is not done."""
        return self._current is not None and not self._current.done

    async def route(self, event: object, t: int) -> None:
        handler = self._handlers.get(type(event))
        if handler is not None:
            await handler(event, t)

    def _response(self, response_id: str | None) -> AgentResponse:
        """The response an event belongs to: by the adapter's id, else the one in progress."""
        if response_id is not None:
            response = self._responses.get(response_id)
            if response is None:
                response = self._responses[response_id] = AgentResponse(response_id=response_id)
                self._current = response
            return response
        if self._current is None or self._current.done:
            self._current = AgentResponse(response_id=f"r{len(self._responses)}")
            self._responses[self._current.response_id] = self._current
        return self._current

    async def _on_audio(self, event: AudioDelta, t: int) -> None:
        self._ledger.agent_acted = True
        response = self._response(event.response_id)
        samples = self._channel.enqueue(response, event.item_id, event.pcm)
        self._listener.hearing.audio(response.response_id, event.item_id, samples)

    async def _on_transcript(self, event: TranscriptDelta, t: int) -> None:
        response = self._response(event.response_id)
        words = [list(w) for w in event.words] if event.words else None
        self._log.emit(EventType.AGENT_TRANSCRIPT_PARTIAL, "agent", t,
                       {"text": event.text, "response_id": response.response_id, "item_id": event.item_id,
                        **({"words": words} if words else {})})
        # Words are only claims until their audio plays: the user hears them as it plays.
        self._listener.hearing.words(response.response_id, event.item_id, event.text, event.words)

    async def _on_transcript_done(self, event: TranscriptDone, t: int) -> None:
        self._listener.hearing.words_done(self._response(event.response_id).response_id, event.item_id, event.text)

    async def _on_tool_call(self, event: ToolCallRequested, t: int) -> None:
        if self._tools.requested(event, t):
            self._ledger.agent_acted = True
        else:  # native: the provider's account of its MCP call; the call is observed at the server
            self._signal("tool_call_reported", t, response_id=event.response_id,
                         detail={"call_id": event.call_id, "name": event.name})

    async def _on_tool_cancelled(self, event: ToolCallCancelled, t: int) -> None:
        self._tools.cancelled(event)
        self._signal("tool_call_cancelled", t, detail={"call_ids": list(event.call_ids)})

    async def _on_playout_cleared(self, event: PlayoutCleared, t: int) -> None:
        dropped = self._channel.queued_samples
        cut = self._channel.clear()
        self._listener.hearing.cleared([response.response_id for response in cut])
        await self._listener.hear_over(self._listener.hearing.over(), t)
        self._deliveries.agent_cleared(t, dropped_samples=dropped)
        self._signal("playout_cleared", t, response_id=event.response_id)

    async def _on_speech_started(self, event: SpeechStarted, t: int) -> None:
        self._signal("speech_started", t, item_id=event.item_id, detail=_present(audio_start_ms=event.audio_start_ms))

    async def _on_speech_stopped(self, event: SpeechStopped, t: int) -> None:
        self._signal("speech_stopped", t, item_id=event.item_id, detail=_present(audio_end_ms=event.audio_end_ms))

    async def _on_user_transcript(self, event: UserTranscript, t: int) -> None:
        self._log.emit(EventType.USER_TRANSCRIPT_PARTIAL, "agent", t, {"text": event.text, "item_id": event.item_id})

    async def _on_response_done(self, event: ResponseDone, t: int) -> None:
        response = self._response(event.response_id)
        hearing = self._listener.hearing
        if hearing.has_audio(response.response_id):
            # A response that only made calls (or only sent words, which nobody heard) is not the
            # answer: its continuation is still owed.
            self._ledger.answered(t)
        response.done = True
        if event.usage is not None:
            usage = {name: getattr(event.usage, name) for name in event.usage.__slots__}
            self.usage.append({"response_id": response.response_id, **{k: v for k, v in usage.items() if v is not None}})
        self._signal("response_done", t, response_id=response.response_id, detail=_present(status=event.status))
        hearing.done(response.response_id)
        await self._listener.hear_over(hearing.over(), t)

    async def _on_call_ended(self, event: CallEnded, t: int) -> None:
        self._ledger.agent_hung_up = True
        self._signal("call_ended", t)

    async def _on_mcp_call_reported(self, event: McpCallReported, t: int) -> None:
        # The provider's account of its own MCP call: a diagnostic; the server's stream is the record.
        detail = {"call_id": event.call_id, "name": event.name, **({"error": event.error} if event.error else {})}
        self._signal(f"mcp_call_{event.status}", t, response_id=event.response_id, detail=detail)

    async def _on_adapter_info(self, event: AdapterInfo, t: int) -> None:
        self._log.emit(EventType.ADAPTER_INFO, "agent", t, {"metadata": dict(event.metadata)})

    async def _on_error(self, event: AdapterError, t: int) -> None:
        # INFRA_FAILURE is the published format's event for an agent's error; its actor says whose.
        self.agent_errors.append(event.message)
        self._log.emit(EventType.INFRA_FAILURE, "agent", t,
                       {"error": event.message, "kind": event.kind, "transient": event.transient})
        failure = self._agent.adapter_error(event)  # blamed by where it came from (agent_boundary)
        if failure is not None:
            raise failure

    def _signal(self, signal: str, t: int, *, response_id: str | None = None, item_id: str | None = None,
                detail: dict[str, Any] | None = None) -> None:
        payload: dict[str, Any] = {"signal": signal, "detail": detail or {}}
        if response_id is not None:
            payload["response_id"] = response_id
        if item_id is not None:
            payload["item_id"] = item_id
        self._log.emit(EventType.AGENT_SIGNAL, "agent", t, payload)


def _present(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}
