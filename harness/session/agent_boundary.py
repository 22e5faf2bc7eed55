"""The agent boundary of a voice session: the duplex runner's only way into its adapter.

Every call (connect, audio, tool results, events, playback, metadata, close) goes through here, so
blame is decided at the one place the harness calls the agent (:mod:`.agent_blame`, asking
:mod:`harness.blame.origin_table`), every await is
bounded by the session's watchdog, and every event is checked before a handler sees it
(:mod:`.agent_event_check`). What the agent did wrong arrives in the runner as one exception,
:class:`~harness.blame.errors.AgentFailure`; what we did wrong (a ``builtin`` or ``provider``
adapter) arrives as our own typed failure or a :class:`~harness.blame.errors.HarnessBug`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from harness.agents.agent_text import safe_text
from harness.agents.limits import AGENT_LIMITS, AgentLimits
from harness.agents.realtime import (
    AdapterError,
    AgentEvent,
    PlaybackReport,
    RealtimeAdapter,
    SessionConfig,
    ToolResult,
)
from harness.audio.frames import AudioFrame
from harness.blame.codes import AgentKind
from harness.blame.errors import AgentFailure
from harness.blame.origin_table import agent_check_failed, agent_reported

from .agent_blame import AgentCalls
from .agent_event_check import EventCheck

__all__ = ["AgentBoundary"]

T = TypeVar("T")


def _declared(adapter: RealtimeAdapter, calls: AgentCalls, name: str, allowed: tuple[str, ...] | None,
              default: str) -> str:
    """What the adapter declares (``model_id``, ``clock_mode``, ``mcp_client``), or the default.

    Read once, before the session: an agent's odd or failing declaration is replaced by the default
    (its name by its class's), while our own adapters' failures still propagate.
    """
    try:
        value = calls.sync(name, lambda: getattr(adapter, name, None))
    except AgentFailure:
        return default
    if type(value) is not str or (allowed is not None and value not in allowed):
        return default
    return value


class AgentBoundary:
    """One session's adapter behind the boundary; the runner holds this, never the adapter."""

    def __init__(self, adapter: RealtimeAdapter, calls: AgentCalls, limits: AgentLimits = AGENT_LIMITS) -> None:
        self._adapter = adapter
        self.calls = calls
        self.kind: AgentKind = calls.kind
        self._check = EventCheck(limits)
        self._closed = False
        self.model_id = safe_text(_declared(adapter, calls, "model_id", None, type(adapter).__name__)[: limits.tool_name_chars])
        self.clock_mode: Literal["virtual", "realtime"] = _declared(  # type: ignore[assignment]
            adapter, calls, "clock_mode", ("virtual", "realtime"), "realtime")
        self.mcp_client: Literal["agent", "provider"] = _declared(  # type: ignore[assignment]
            adapter, calls, "mcp_client", ("agent", "provider"), "agent")
        #: Playback reports are built only for an adapter that reads them (the base hook ignores them).
        self.reports_playback = getattr(type(adapter), "playback", None) is not RealtimeAdapter.playback

    async def connect(self, config: SessionConfig) -> None:
        await self.calls.wait("connect", lambda: self._adapter.connect(config))

    async def send_audio(self, frame: AudioFrame) -> None:
        await self.calls.wait("send_audio", lambda: self._adapter.send_audio(frame))

    async def send_tool_result(self, result: ToolResult) -> None:
        await self.calls.wait("send_tool_result", lambda: self._adapter.send_tool_result(result))

    def new_frame(self) -> None:
        """A frame starts: the events the agent may hand over in it are counted afresh."""
        self._check.new_frame()

    def poll_events(self) -> list[AgentEvent]:
        polled = self.calls.sync("poll_events", lambda: self._adapter.poll_events())
        return self._checked(lambda: self._check.events(polled))

    def playback(self, report: PlaybackReport) -> None:
        self.calls.sync("playback", lambda: self._adapter.playback(report))

    def metadata(self) -> dict[str, Any]:
        value = self.calls.sync("metadata", lambda: self._adapter.metadata())
        return self._checked(lambda: self._check.metadata(value, "metadata()"))

    async def close(self) -> AgentFailure | None:
        """Close the adapter once; its failure to close is returned for the record, never raised."""
        if self._closed:
            return None
        self._closed = True
        return await self.calls.close(lambda: self._adapter.close())

    def adapter_error(self, event: AdapterError) -> BaseException | None:
        """What an ``AdapterError`` event ends the session with (``None``: logged, the session goes on).

        From our provider adapters: a retried transient or a campaign-stopping refusal, as the
        provider meant it. From the agent's own code or server: the agent's failure, whatever it
        reports (the origin table's ``REPORTED_BY_AGENT``).
        """
        message = f"provider error ({event.kind}): {event.message}"
        return agent_reported(self.kind, event.kind, event.code, message, event.retry_after_s)

    def _checked(self, check: Callable[[], T]) -> T:
        """A check's failure is the agent's, except from our own adapters: there it is our bug."""
        try:
            return check()
        except AgentFailure as failure:
            blamed = agent_check_failed(self.kind, failure, f"{self.model_id} sent an event")
            if blamed is failure:
                raise
            raise blamed from None
