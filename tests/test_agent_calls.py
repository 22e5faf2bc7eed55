"""``AgentCalls.wait``: a call that never suspends returns at once; one that suspends runs under
the watchdog, which alone can end it; what it raises is blamed by origin either way."""

from __future__ import annotations

import asyncio

import pytest

from harness.errors import AgentFailure
from harness.session.agent_blame import AgentCalls


def _calls(kind: str = "external_code", in_s: float = 60.0) -> AgentCalls:
    return AgentCalls(kind, asyncio.get_running_loop().time() + in_s)  # type: ignore[arg-type]


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
