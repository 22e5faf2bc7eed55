"""Whole C2 sessions through the OpenAI adapter, the protocol fake and the duplex runner (realtime clock)."""

from __future__ import annotations

import pytest

from harness.agents.providers.openai_realtime import OpenAIRealtimeAdapter
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.events import EventType
from harness.session.duplex_runner import run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA
from tests.fakes.openai_realtime_fake import OpenAIRealtimeFake

pytestmark = pytest.mark.slow

#: The shortest demo task with a barge-in (about 130 s of media time).
BARGE_TASK = DEMO_DATA / "tasks" / "demo_supplier_negotiation_001"


async def _session(task_dir, fake: OpenAIRealtimeFake, *, time_budget_s: int | None = None):
    bundle = load_task(task_dir)
    if time_budget_s is not None:
        bundle.task.time_budget_s = time_budget_s
    speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    adapter = OpenAIRealtimeAdapter(endpoint=fake.url, model="", require_key=False)
    result = await run_duplex_session(bundle, adapter, InProcessEnvironment(bundle.public_bundle()), speech=speech, session_dir=None)
    return bundle, result


async def test_the_reference_policy_played_through_the_protocol_passes_a_whole_demo_task():
    bundle = load_task(BARGE_TASK)
    async with OpenAIRealtimeFake(bundle.policy.turns) as fake:
        _, result = await _session(BARGE_TASK, fake)
    assert result.pts == 1, result.grade.explain()
    assert not fake.invalid and not fake.violations
    tool_events = [e for e in result.events.events if e.type == EventType.TOOL_CALL]
    assert [e.payload["tool"] for e in tool_events] == [c.name for t in bundle.policy.turns for c in t.tool_calls]
    # Every result went back under the id the model gave its call.
    outputs = [e["item"]["call_id"] for e in fake.of_type("conversation.item.create")]
    assert outputs == [e.payload["call_id"] for e in tool_events]
    print(result.reason, result.events.events[-1].media_time_ms, [ (e["item_id"], e["audio_end_ms"]) for e in fake.of_type("conversation.item.truncate")])
    truncations = fake.of_type("conversation.item.truncate")
    assert truncations, "the barge-in must truncate the agent's audio item"


async def test_the_silent_agent_through_the_protocol_fails_the_whole_task():
    async with OpenAIRealtimeFake([]) as fake:
        _, result = await _session(BARGE_TASK, fake)
    assert result.pts == 0
    assert fake.of_type("input_audio_buffer.append")
    assert not fake.invalid
