"""The agent's tool calls, however they are made, as one stream of call records.

``bridge``: the agent asks for a function call and the harness executes it against the environment
(one after another, in the order asked, each due ``tool_latency_ms`` after the request), then hands
the result back. ``native``: the agent calls the task's MCP server itself; every call is observed on
the server's call stream. Either way each call that took effect reaches the session once, as a
:class:`CallDone`, through :meth:`CallSink.call_done`.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal, Protocol

from harness.agents.realtime import ToolCallCancelled, ToolCallRequested, ToolResult
from harness.blame.errors import SessionInfraError
from mcp_servers.records import ToolCallRecord

from .clocks import MediaClock
from .deferred import DeferredWork
from .environment_port import EnvironmentPort
from .session_effects import SessionEffects

__all__ = ["CATCH_UP_TIMEOUT_S", "MEDIA_TIME_PUSH_MS", "BridgeTools", "CallDone", "CallSink", "NativeTools",
           "ToolExecutor", "make_tool_executor"]

#: How often (media ms) the harness tells the server the media time, in native tool mode.
MEDIA_TIME_PUSH_MS = 100
#: How long the server's call stream may lag behind its call count before that is an infra failure.
CATCH_UP_TIMEOUT_S = 5.0


@dataclass(frozen=True, slots=True)
class CallDone:
    """One call that took effect: its record and how it was made."""

    record: ToolCallRecord
    source: Literal["bridge", "server"]
    call_id: str | None
    called_at_ms: int
    wall_ms: float | None = None
    cancelled: bool = False


class CallSink(Protocol):
    async def call_done(self, done: CallDone, t: int) -> None:
        """A call took effect (logged as ``TOOL_CALL`` already; its result is the session's to log)."""

    async def send_result(self, result: ToolResult, t: int) -> None:
        """A bridge call's result goes back to the agent."""


class ToolExecutor(Protocol):
    #: ``"bridge"`` or ``"native"`` (``RUN_START``'s ``tool_mode``).
    mode: str

    @property
    def pending(self) -> bool:
        """A call is still running for the agent (it is busy until its result lands)."""

    def start(self) -> None:
        """The agent is connected: begin following its calls."""

    def requested(self, event: ToolCallRequested, t: int) -> bool:
        """The agent asked for a call; ``False`` when the call is not the harness's to make."""

    def cancelled(self, event: ToolCallCancelled) -> None:
        """The agent withdrew calls: their results are logged, not sent."""

    def frame(self, t: int) -> None:
        """Per-frame upkeep at ``t``."""

    async def drain(self, t: int) -> None:
        """Hand over every call observed so far."""

    async def catch_up(self, t: int) -> None:
        """Before the user decides anything: every call made so far is handed over."""


class BridgeTools:
    """The harness executes the agent's function calls."""

    mode = "bridge"

    def __init__(self, env: EnvironmentPort, effects: SessionEffects, work: DeferredWork, clock: MediaClock,
                 sink: CallSink, *, latency_ms: int) -> None:
        self._env, self._effects, self._work, self._clock, self._sink = env, effects, work, clock, sink
        self._latency_ms = latency_ms
        self._pending: set[str] = set()
        self._cancelled: set[str] = set()
        self._chain: asyncio.Task[ToolCallRecord] | None = None

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    def start(self) -> None:
        return None

    def requested(self, event: ToolCallRequested, t: int) -> bool:
        try:
            args: Any = json.loads(event.arguments) if event.arguments.strip() else {}
        except (json.JSONDecodeError, RecursionError):  # malformed, or nested past any sense
            args = event.arguments  # the environment refuses it with a message the model can act on
        self._effects.log_call(event.name, args, t, call_id=event.call_id, response_id=event.response_id)
        self._pending.add(event.call_id)
        # Calls run one after another in the order the agent made them (the call log's order).
        previous, wall_start = self._chain, self._clock.wall_ns()
        self._chain = self._work.submit(
            f"tool:{event.call_id}",
            self._call_after(previous, event.name, args, t),
            due_ms=t + self._latency_ms,
            deliver=partial(self._done, event, t, wall_start),
        ).task
        return True

    def cancelled(self, event: ToolCallCancelled) -> None:
        self._cancelled.update(event.call_ids)

    def frame(self, t: int) -> None:
        return None

    async def drain(self, t: int) -> None:
        return None

    async def catch_up(self, t: int) -> None:
        return None

    async def _call_after(self, previous: asyncio.Task[ToolCallRecord] | None, name: str, args: Any,
                          t: int) -> ToolCallRecord:
        if previous is not None and not previous.done():
            await previous
        return await self._env.call_tool(name, args, t)

    async def _done(self, event: ToolCallRequested, called_at: int, wall_start: int, record: ToolCallRecord,
                    t: int) -> None:
        self._pending.discard(event.call_id)
        cancelled = event.call_id in self._cancelled
        # Wall latency only means something on the wall clock (and would make virtual runs differ).
        wall_ms = (self._clock.wall_ns() - wall_start) / 1e6 if self._clock.kind == "realtime" else None
        await self._sink.call_done(CallDone(record, "bridge", event.call_id, called_at, wall_ms, cancelled), t)
        if not cancelled:
            await self._sink.send_result(ToolResult(event.call_id, record.name, record.output, not record.ok), t)


class NativeTools:
    """The agent calls the task's MCP server itself; the harness follows the server's call stream."""

    mode = "native"
    pending = False  # the harness runs nothing for the agent

    def __init__(self, env: EnvironmentPort, effects: SessionEffects, work: DeferredWork, sink: CallSink) -> None:
        self._env, self._effects, self._work, self._sink = env, effects, work, sink
        self._observed: asyncio.Queue[ToolCallRecord] = asyncio.Queue()
        self._observed_total = 0
        self._last_media_push = -MEDIA_TIME_PUSH_MS

    def start(self) -> None:
        self._work.submit("native-calls", self._follow(), due_ms=10**12, deliver=_ignore)

    def requested(self, event: ToolCallRequested, t: int) -> bool:
        return False  # the provider's own MCP call event: the call itself is observed at the server

    def cancelled(self, event: ToolCallCancelled) -> None:
        return None

    def frame(self, t: int) -> None:
        if t - self._last_media_push >= MEDIA_TIME_PUSH_MS:
            # The server stamps calls it receives with the media time the harness last pushed.
            self._last_media_push = t
            self._work.submit("media-time", self._env.set_media_time(t), due_ms=t, deliver=_ignore)

    async def drain(self, t: int) -> None:
        while not self._observed.empty():
            record = self._observed.get_nowait()
            self._effects.log_call(record.name, record.args, t, call_id=None, source="server",
                                   called_at_ms=record.media_time_ms)
            await self._sink.call_done(CallDone(record, "server", None, record.media_time_ms), t)

    async def catch_up(self, t: int) -> None:
        """The stream may lag the agent's own calls by a few ms; the user's next move must not depend
        on that lag (on the virtual clock it would make runs differ)."""
        recorded = await self._env.set_media_time(t)
        deadline = asyncio.get_running_loop().time() + CATCH_UP_TIMEOUT_S
        while self._observed_total < recorded:
            if asyncio.get_running_loop().time() > deadline:
                raise SessionInfraError(f"the server recorded {recorded} calls but its call stream delivered "
                                        f"{self._observed_total} within {CATCH_UP_TIMEOUT_S} s", transient=True)
            await asyncio.sleep(0.001)
        await self.drain(t)

    async def _follow(self) -> None:
        async for record in self._env.follow_calls():
            self._observed_total += 1
            self._observed.put_nowait(record)


def make_tool_executor(mode: str, env: EnvironmentPort, effects: SessionEffects, work: DeferredWork,
                       clock: MediaClock, sink: CallSink, *, latency_ms: int) -> ToolExecutor:
    if mode == "native":
        return NativeTools(env, effects, work, sink)
    return BridgeTools(env, effects, work, clock, sink, latency_ms=latency_ms)


async def _ignore(result: object, t: int) -> None:
    return None
