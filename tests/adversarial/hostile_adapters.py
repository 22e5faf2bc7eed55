"""Out-of-tree adapters an adversarial agent author could write, loadable as ``--model module:Class``.

Each misbehaves in one way at the agent boundary — raises (any class, at any method), hands over
malformed events, or hangs — and otherwise behaves like a quiet agent on the virtual clock, so a
session with it is deterministic and fast. The classes without constructor arguments are the
ones the CLI tests load by name.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, ClassVar

from harness.agents.oracle_voice import OracleVoiceAgent
from harness.agents.realtime import AgentEvent, RealtimeAdapter, SessionConfig, ToolResult
from harness.audio.frames import AudioFrame

#: Media time at which a mid-session misbehaviour happens (the user is talking by then).
MID_SESSION_MS = 1000

Raise = Callable[[], BaseException]


class Hostile(RealtimeAdapter):
    """A quiet agent that raises ``make()`` when ``method`` is called (mid-session for the frame-driven ones)."""

    model_id: ClassVar[str] = "hostile"
    clock_mode: ClassVar[str] = "virtual"  # type: ignore[misc]

    def __init__(self, method: str = "send_audio", make: Raise = lambda: RuntimeError("the agent broke"),
                 events: list[Any] | None = None) -> None:
        self.method = method
        self.make = make
        #: Handed over once from ``poll_events`` at ``MID_SESSION_MS`` (malformed on purpose).
        self.events = events
        self.now_ms = 0
        self.closed = False

    def _maybe_raise(self, method: str) -> None:
        if self.method == method and (method in ("connect", "close") or self.now_ms >= MID_SESSION_MS):
            raise self.make()

    async def connect(self, config: SessionConfig) -> None:
        self._maybe_raise("connect")

    async def send_audio(self, frame: AudioFrame) -> None:
        self.now_ms = frame.start_ms
        self._maybe_raise("send_audio")

    async def send_tool_result(self, result: ToolResult) -> None:
        self._maybe_raise("send_tool_result")

    def poll_events(self) -> list[AgentEvent]:
        self._maybe_raise("poll_events")
        if self.events is not None and self.now_ms >= MID_SESSION_MS:
            events, self.events = self.events, None
            return events
        return []

    def metadata(self) -> dict[str, Any]:
        self._maybe_raise("metadata")
        return {}

    async def close(self) -> None:
        self.closed = True
        self._maybe_raise("close")


class RaisesMidSession(Hostile):
    """``RuntimeError`` from ``send_audio`` one second into the conversation."""

    def __init__(self) -> None:
        super().__init__("send_audio", lambda: RuntimeError("the agent broke mid-session"))


class RaisesAtConnect(Hostile):
    """``SystemExit(0)`` at connect: it must not look like a successful run."""

    def __init__(self) -> None:
        super().__init__("connect", lambda: SystemExit(0))


class ClaimsTransientAtClose(Hostile):
    """The harness's own retryable infrastructure type, raised at close to dodge its score."""

    def __init__(self) -> None:
        from harness.blame.errors import ProviderTransient

        super().__init__("close", lambda: ProviderTransient("please retry me"))


class RaisesKeyboardInterruptMidSession(Hostile):
    """``KeyboardInterrupt`` from ``send_audio`` (no Ctrl-C was pressed): it used to abort the campaign (rc 130)."""

    def __init__(self) -> None:
        super().__init__("send_audio", KeyboardInterrupt)


class RaisesCancelledErrorMidSession(Hostile):
    """``asyncio.CancelledError`` from ``send_audio``: nobody cancelled the session."""

    def __init__(self) -> None:
        super().__init__("send_audio", asyncio.CancelledError)


class Hangs(Hostile):
    """Awaits an event nobody sets, at ``method`` (``connect`` or mid-session ``send_audio``)."""

    def __init__(self, method: str = "send_audio") -> None:
        super().__init__(method)
        self.waiting = asyncio.Event()  # set when it starts hanging (a test can cancel then)

    async def _hang(self) -> None:
        self.waiting.set()
        await asyncio.Event().wait()

    async def connect(self, config: SessionConfig) -> None:
        if self.method == "connect":
            await self._hang()

    async def send_audio(self, frame: AudioFrame) -> None:
        self.now_ms = frame.start_ms
        if self.method == "send_audio" and self.now_ms >= MID_SESSION_MS:
            await self._hang()


class NeverStopsTalking(Hostile):
    """Hands over an event on every poll, forever: the runner's event loop would never reach the next frame."""

    def poll_events(self) -> list[AgentEvent]:
        from harness.agents.realtime import SpeechStarted

        return [SpeechStarted()] if self.now_ms >= MID_SESSION_MS else []


class OracleThatFailsToClose(OracleVoiceAgent):
    """The reference policy spoken well, then ``close`` raises: the state it left is what is graded."""

    async def close(self) -> None:
        raise ValueError("cannot close")


async def _await_forever_deaf() -> None:
    """Awaits forever, swallowing every cancellation (only abandoning it ends the call)."""
    while True:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            pass


class DeafHangs(Hangs):
    """:class:`Hangs`, deaf to cancellation: the call's bound cancels it in vain."""

    async def _hang(self) -> None:
        self.waiting.set()
        await _await_forever_deaf()


class OracleThatWillNotClose(OracleVoiceAgent):
    """The reference policy spoken well, then ``close`` awaits forever, deaf to cancellation."""

    async def close(self) -> None:
        await _await_forever_deaf()


class _Flooding(Hostile):
    """A quiet agent (it raises nothing) that floods from ``poll_events``."""

    def __init__(self) -> None:
        super().__init__(method="none")


class FloodsEveryPoll(_Flooding):
    """Hands over ``events_per_poll`` (2,000) events on every poll: within the per-poll bound, but a
    frame's polls never come back empty (1.5 GB in 40 s before events were bounded per frame)."""

    def poll_events(self) -> list[AgentEvent]:
        from harness.agents.realtime import SpeechStarted

        return [SpeechStarted(self.now_ms, f"user_{self.now_ms}") for _ in range(2_000)] if self.now_ms >= MID_SESSION_MS else []


class FloodsResponses(_Flooding):
    """Finishes 500 responses with fresh ids every frame (each a record in the runner and a signal)."""

    _next = 0

    def poll_events(self) -> list[AgentEvent]:
        from harness.agents.realtime import ResponseDone

        if self.now_ms < MID_SESSION_MS or self._polled == self.now_ms:
            return []
        self._polled = self.now_ms
        start, self._next = self._next, self._next + 500
        return [ResponseDone(f"resp_{i}") for i in range(start, self._next)]

    _polled = -1


class FloodsOneSampleDeltas(_Flooding):
    """Queues 1,000 one-sample audio deltas every frame (a numpy array each, ~50 times its audio)."""

    def poll_events(self) -> list[AgentEvent]:
        from harness.agents.realtime import AudioDelta

        if self.now_ms < MID_SESSION_MS or self._polled == self.now_ms:
            return []
        self._polled = self.now_ms
        return [AudioDelta(b"\x10\x00", "resp_1", "item_1") for _ in range(1_000)]

    _polled = -1


class SpeaksOddText(_Flooding):
    """Puts a lone surrogate, NUL, terminal escapes and bidi overrides in every string it hands over,
    then hangs up: the session must still be scored and every file it writes must parse."""

    TEXT: ClassVar[str] = "a\ud800b\x00c\x1b[2J\u202ed\u2066e\udfff"
    model_id: ClassVar[str] = TEXT

    def poll_events(self) -> list[AgentEvent]:
        from harness.agents.realtime import (
            AdapterError,
            AdapterInfo,
            CallEnded,
            McpCallReported,
            ResponseDone,
            SpeechStarted,
            ToolCallRequested,
            TranscriptDelta,
            TranscriptDone,
            UserTranscript,
        )

        if self.now_ms < MID_SESSION_MS or self._spoke:
            return []
        self._spoke = True
        text = self.TEXT
        return [
            TranscriptDelta(f"hello {text}", text, text, ((text, 0, 100),)),
            TranscriptDone(f"hello {text}", text, text),
            UserTranscript(text, True, text),
            SpeechStarted(0, text),
            ToolCallRequested(text, text, "{\"x\": \"" + text + "\"}", text, text),
            McpCallReported(text, text, "failed", text, text),
            AdapterInfo({text: [text, {text: text}]}),
            AdapterError(text, kind="provider", code=text),
            ResponseDone(text, None, text),
            CallEnded(),
        ]

    def metadata(self) -> dict[str, Any]:
        return {"model": self.TEXT, self.TEXT: self.TEXT}

    _spoke = False
