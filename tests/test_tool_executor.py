"""The tool executor alone: bridge and native calls reach one sink as one stream of call records."""

from __future__ import annotations

import asyncio

from harness.agents.realtime import ToolCallCancelled, ToolCallRequested, ToolResult
from harness.events import EventBus, EventType
from harness.session.clocks import VirtualClock
from harness.session.deferred import DeferredWork
from harness.session.environment_port import InProcessEnvironment
from harness.session.session_effects import SessionEffects
from harness.session.tool_executor import BridgeTools, CallDone, NativeTools
from harness.tasks.loader import load_task
from harness.user.simulator import SimulatedUser
from tests.conftest import DEMO_DATA

BENEFITS = DEMO_DATA / "tasks" / "demo_benefits_enrollment_001"


class _Sink:
    def __init__(self) -> None:
        self.done: list[tuple[int, CallDone]] = []
        self.sent: list[tuple[int, ToolResult]] = []

    async def call_done(self, done: CallDone, t: int) -> None:
        self.done.append((t, done))

    async def send_result(self, result: ToolResult, t: int) -> None:
        self.sent.append((t, result))


def _parts():
    bundle = load_task(BENEFITS)
    env = InProcessEnvironment(bundle.public_bundle())
    log = EventBus(run_id="r", task_version="1", condition="C2")
    effects = SessionEffects(bundle, env, SimulatedUser(bundle, condition="C2", seed=1), log)
    return env, effects, log, DeferredWork(wait_at_boundary=True), _Sink()


async def _a_tool(env: InProcessEnvironment) -> str:
    return (await env.list_tools())[0]["name"]


async def test_bridge_calls_run_in_order_after_their_latency_and_a_withdrawn_result_is_not_sent():
    env, effects, log, work, sink = _parts()
    tools = BridgeTools(env, effects, work, VirtualClock(), sink, latency_ms=200)
    name = await _a_tool(env)
    for call_id, arguments in (("c1", "{}"), ("c2", "{not json"), ("c3", "")):
        assert tools.requested(ToolCallRequested(call_id, name, arguments), 100)
    tools.cancelled(ToolCallCancelled(["c2"]))
    assert tools.pending
    await work.settle(200)
    assert sink.done == [] and tools.pending  # due at 300: the latency is media time
    await work.settle(300)
    assert not tools.pending
    assert [(t, d.call_id, d.source, d.called_at_ms, d.cancelled) for t, d in sink.done] == [
        (300, "c1", "bridge", 100, False), (300, "c2", "bridge", 100, True), (300, "c3", "bridge", 100, False)]
    assert [d.record.index for _, d in sink.done] == [0, 1, 2]
    assert sink.done[1][1].record.args == "{not json"  # refused by the environment, not by us
    assert [r.call_id for _, r in sink.sent] == ["c1", "c3"]
    calls = log.of_type(EventType.TOOL_CALL)
    assert [(e.payload["call_id"], e.payload["source"], e.media_time_ms) for e in calls] == [
        ("c1", "bridge", 100), ("c2", "bridge", 100), ("c3", "bridge", 100)]


async def test_native_calls_are_observed_at_the_server_and_caught_up_before_a_decision():
    env, effects, log, work, sink = _parts()
    tools = NativeTools(env, effects, work, sink)
    tools.start()
    await asyncio.sleep(0)  # the follower subscribes
    assert not tools.requested(ToolCallRequested("p1", "x", "{}"), 0)  # the provider's report, not a call
    name = await _a_tool(env)
    tools.frame(0)
    await work.settle(0)
    await env.call_tool(name, {}, None)  # the agent's own call, stamped with the pushed media time
    await env.call_tool(name, {}, None)
    await tools.catch_up(460)
    assert [(t, d.source, d.call_id, d.called_at_ms) for t, d in sink.done] == [(460, "server", None, 0)] * 2
    assert sink.sent == [] and not tools.pending
    calls = log.of_type(EventType.TOOL_CALL)
    assert [(e.payload["source"], e.payload["called_at_ms"]) for e in calls] == [("server", 0), ("server", 0)]
    await work.aclose()


async def test_native_media_time_is_pushed_every_100_ms():
    env, effects, _, work, sink = _parts()
    tools = NativeTools(env, effects, work, sink)
    pushed = []
    for t in range(0, 400, 20):
        tools.frame(t)
        await work.settle(t)
        pushed.append(env.media_time_ms)
    assert sorted(set(pushed)) == [0, 100, 200, 300]
