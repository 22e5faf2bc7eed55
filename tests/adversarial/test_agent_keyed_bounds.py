"""Everything the harness keeps per thing the agent names or sends is bounded; overflow is ``over_limit``.

Issue 33 found memory the agent controls without a bound: a record per response id (the runner's,
the hearing's, a signal each in the log), per item, per tool call; events counted per poll while an
in-process adapter is polled until a poll comes back empty; one numpy array per one-sample delta.
Each bound is checked at the agent boundary (``agent_event_check``) or at the enqueue, with small
limits here so a session shows it; the real figures are in ``docs/security.md`` and the floods
through the CLI in ``test_bounded_input.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.agents.limits import AgentLimits
from harness.agents.realtime import (
    AdapterError,
    AgentEvent,
    AudioDelta,
    McpCallReported,
    ResponseDone,
    SpeechStarted,
    ToolCallCancelled,
    ToolCallRequested,
)
from tests.adversarial.hostile_adapters import MID_SESSION_MS, Hostile
from tests.adversarial.test_agent_boundary import _assert_scored_as_agent_failure, _session


class _EveryPoll(Hostile):
    """Hands over ``make(frame)`` on every poll from mid-session on (``once_per_frame``: its first poll only)."""

    def __init__(self, make, *, once_per_frame: bool = False) -> None:
        super().__init__("none")
        self.make, self.once_per_frame, self._polled, self._frame = make, once_per_frame, -1, 0

    def poll_events(self) -> list[AgentEvent]:
        if self.now_ms < MID_SESSION_MS or (self.once_per_frame and self._polled == self.now_ms):
            return []
        if self._polled != self.now_ms:
            self._frame += 1
        self._polled = self.now_ms
        return self.make(self._frame)


async def _over_limit(adapter, limits: AgentLimits, detail: str) -> dict[str, Any]:
    result = await _session(adapter, limits=limits)
    _assert_scored_as_agent_failure(result, "over_limit")
    assert detail in result.agent_failure["detail"], result.agent_failure
    return result.agent_failure


async def test_events_are_bounded_per_frame_however_many_polls_it_takes():
    """30 events a poll is within 40 a poll, but the frame's polls never come back empty."""
    limits = AgentLimits(events_per_poll=40, events_per_frame=100)
    await _over_limit(_EveryPoll(lambda f: [SpeechStarted(0, "u")] * 30), limits, "in one 20 ms frame (limit 100)")


async def test_a_frame_within_its_bound_leaves_the_session_running():
    limits = AgentLimits(events_per_poll=40, events_per_frame=100)
    result = await _session(_EveryPoll(lambda f: [SpeechStarted(0, "u")] * 30, once_per_frame=True), limits=limits)
    assert result.agent_failure is None, result.agent_failure


async def test_events_are_bounded_per_session():
    limits = AgentLimits(events_per_session=200)
    await _over_limit(_EveryPoll(lambda f: [SpeechStarted(0, "u")] * 10, once_per_frame=True), limits,
                      "events in the session (limit 200)")


@pytest.mark.parametrize("named", [True, False], ids=["fresh_ids", "no_ids"])
async def test_responses_are_bounded_per_session(named):
    limits = AgentLimits(responses_per_session=20)
    make = (lambda f: [ResponseDone(f"resp_{f}")]) if named else (lambda f: [ResponseDone(None)])
    await _over_limit(_EveryPoll(make, once_per_frame=True), limits, "responses in the session (limit 20)")


async def test_items_are_bounded_per_session():
    limits = AgentLimits(items_per_session=20)
    await _over_limit(_EveryPoll(lambda f: [AudioDelta(b"\x00\x00", "r1", f"item_{f}")], once_per_frame=True), limits,
                      "items in the session (limit 20)")


@pytest.mark.parametrize("cancelled", [False, True], ids=["requested", "cancelled"])
async def test_tool_call_ids_are_bounded_per_session(cancelled):
    limits = AgentLimits(items_per_session=20)
    make = ((lambda f: [ToolCallCancelled((f"call_{f}",))]) if cancelled
            else (lambda f: [ToolCallRequested(f"call_{f}", "no_such_tool", "{}", "r1", "i1")]))
    await _over_limit(_EveryPoll(make, once_per_frame=True), limits, "tool calls in the session (limit 20)")


async def test_error_events_are_bounded_per_session():
    """A provider-kind error is logged and the session goes on: each is a line of ``agent_errors``."""
    limits = AgentLimits(errors_per_session=5)
    failure = await _over_limit(_EveryPoll(lambda f: [AdapterError(f"remark {f}", kind="provider")], once_per_frame=True),
                                limits, "errors in the session (limit 5)")
    assert failure["kind"] == "over_limit"


async def test_mcp_call_errors_count_among_the_sessions_errors():
    limits = AgentLimits(errors_per_session=5)
    make = lambda f: [McpCallReported(f"mcp_{f}", "lookup", "failed", "r1", "e" * 1000)]  # noqa: E731
    await _over_limit(_EveryPoll(make, once_per_frame=True), limits, "errors in the session (limit 5)")


async def test_tool_call_arguments_are_bounded_per_session():
    limits = AgentLimits(tool_arguments_chars=1000, tool_arguments_session_chars=5000)
    make = lambda f: [ToolCallRequested(f"call_{f}", "no_such_tool", "x" * 1000, "r1", "i1")]  # noqa: E731
    await _over_limit(_EveryPoll(make, once_per_frame=True), limits, "tool call arguments passed 5000 characters")


async def test_one_sample_deltas_are_bounded_by_their_count_not_only_their_audio():
    limits = AgentLimits(queued_audio_deltas=50)
    await _over_limit(_EveryPoll(lambda f: [AudioDelta(b"\x10\x00", "r1", "i1")] * 100, once_per_frame=True), limits,
                      "more than 50 audio deltas")
