"""``AgentCalls.wait``: a call that never suspends returns at once; one that suspends runs under
the watchdog and its own bound (``agent_call_s``; ``close()``: ``agent_close_s``), and one that
swallows the cancellation is abandoned ``agent_abandon_s`` later; what it raises is blamed by
origin either way."""

from __future__ import annotations

import asyncio

import pytest

from harness.agents.limits import AgentLimits
from harness.blame.errors import AgentFailure
from harness.session.agent_blame import AgentCalls

#: Bounds small enough for a test to pass them (the defaults are minutes and seconds).
SHORT = AgentLimits(agent_call_s=0.05, agent_close_s=0.05, agent_abandon_s=0.05)


def _calls(kind: str = "external_code", in_s: float = 60.0, limits: AgentLimits | None = None) -> AgentCalls:
    return AgentCalls(kind, asyncio.get_running_loop().time() + in_s, limits or AgentLimits())  # type: ignore[arg-type]


async def _deaf() -> None:
    """Awaits forever and swallows every cancellation."""
    while True:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            pass


async def test_a_call_that_never_suspends_returns_its_value_even_past_the_deadline() -> None:
    async def answer() -> int:
        return 42

    assert await _calls().wait("send_audio", answer) == 42
    # Past the deadline a call that does not suspend cannot be interrupted (as under a timeout): the loop's check ends it.
    assert await _calls(in_s=-1.0).wait("send_audio", answer) == 42


async def test_a_call_that_suspends_gets_what_it_awaits_and_returns() -> None:
    async def slow() -> str:
        await asyncio.sleep(0)
        return await asyncio.sleep(0.01, result="done")

    assert await _calls().wait("send_audio", slow) == "done"


async def test_a_call_that_suspends_past_the_deadline_is_hung() -> None:
    with pytest.raises(AgentFailure) as failure:
        await _calls(in_s=0.05).wait("send_audio", lambda: asyncio.sleep(10))
    assert failure.value.kind == "hung"


@pytest.mark.parametrize("suspends", [False, True])
async def test_what_a_call_raises_is_the_agents_failure_before_or_after_it_suspends(suspends: bool) -> None:
    async def broken() -> None:
        if suspends:
            await asyncio.sleep(0)
        raise ValueError("broken")

    with pytest.raises(AgentFailure) as failure:
        await _calls().wait("send_audio", broken)
    assert failure.value.kind == "raised" and failure.value.detail == "send_audio: ValueError: broken"
    with pytest.raises(ValueError, match="broken"):  # our own agents keep their bugs
        await _calls("builtin").wait("send_audio", broken)


async def test_a_non_awaitable_is_the_agents_failure_with_the_languages_own_error() -> None:
    with pytest.raises(AgentFailure) as failure:
        await _calls().wait("send_audio", lambda: None)  # type: ignore[arg-type, return-value]
    assert "can't be used in 'await' expression" in failure.value.detail


async def test_our_cancellation_of_a_suspended_call_reaches_it_and_stays_ours() -> None:
    cleaned = asyncio.Event()

    async def waits() -> None:
        try:
            await asyncio.sleep(10)
        finally:
            cleaned.set()

    task = asyncio.ensure_future(_calls().wait("send_audio", waits))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cleaned.is_set()


@pytest.mark.parametrize("kind", ["external_code", "remote_agent", "builtin"])
async def test_a_call_that_awaits_forever_is_hung_at_its_own_bound_long_before_the_watchdog(kind: str) -> None:
    with pytest.raises(AgentFailure) as failure:
        await _calls(kind, in_s=3600.0, limits=SHORT).wait("send_tool_result", lambda: asyncio.sleep(3600))
    assert failure.value.kind == "hung"
    assert failure.value.detail == "send_tool_result() did not return within 0.05 s"
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]  # the bound's cancellation is taken back


async def test_a_call_that_swallows_its_cancellation_is_abandoned_and_the_caller_goes_on() -> None:
    with pytest.raises(AgentFailure) as failure:
        await _calls(in_s=3600.0, limits=SHORT).wait("connect", _deaf)
    assert failure.value.kind == "hung" and failure.value.detail.endswith("after it was cancelled: abandoned")
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]  # neither cancellation lingers
    assert await asyncio.sleep(0.01, result="the caller's own awaits still work") == "the caller's own awaits still work"


async def test_a_close_that_swallows_its_cancellation_is_abandoned_and_recorded_even_past_the_watchdog() -> None:
    failure = await _calls(in_s=-1.0, limits=SHORT).close(_deaf)
    assert failure is not None and failure.kind == "hung"
    assert failure.detail == "close() did not return within 0.05 s, nor 0.05 s after it was cancelled: abandoned"


async def test_our_cancellation_during_an_abandoned_grace_stays_ours() -> None:
    task = asyncio.ensure_future(_calls(in_s=3600.0, limits=AgentLimits(agent_call_s=0.01, agent_abandon_s=60)).wait(
        "send_audio", _deaf))
    await asyncio.sleep(0.05)  # past the bound: the call swallowed it and is in its grace
    task.cancel()  # the harness stops (Ctrl-C): the deaf call swallows this too, and is abandoned at once
    with pytest.raises(asyncio.CancelledError):
        await task
