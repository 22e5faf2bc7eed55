"""Every provider adapter through its protocol fake and the duplex runner, on the realtime clock.

Short sessions (a time budget of a few turns) keep this quick; the whole-task run is in
``test_openai_realtime_session.py``.
"""

from __future__ import annotations

from functools import partial

import pytest

from harness.agents.providers.gemini_live import GeminiLiveAdapter
from harness.agents.providers.gpt_live import GptLiveAdapter
from harness.agents.providers.grok_voice import GrokVoiceAdapter
from harness.agents.providers.openai_realtime import OpenAIRealtimeAdapter
from harness.agents.providers.step_audio import StepAudioAdapter
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.events import EventType
from harness.session.duplex_runner import DuplexConfig, run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA
from tests.fakes import openai_realtime_fake as fakes
from tests.fakes.gemini_live_fake import GeminiLiveFake
from tests.fakes.gpt_live_fake import GptLiveFake

TASK = DEMO_DATA / "tasks" / "demo_offsite_coordination_001"
CASES = [
    pytest.param(OpenAIRealtimeAdapter, partial(fakes.OpenAIRealtimeFake, dialect=fakes.OPENAI), "OPENAI_API_KEY", id="openai"),
    pytest.param(GrokVoiceAdapter, partial(fakes.OpenAIRealtimeFake, dialect=fakes.XAI), "XAI_API_KEY", id="xai"),
    pytest.param(StepAudioAdapter, partial(fakes.OpenAIRealtimeFake, dialect=fakes.STEPFUN), "STEPFUN_API_KEY", id="stepfun"),
    pytest.param(GeminiLiveAdapter, GeminiLiveFake, "GEMINI_API_KEY", id="gemini"),
    pytest.param(GptLiveAdapter, GptLiveFake, "OPENAI_API_KEY", id="gpt-live"),
]


def _outputs(fake) -> list[str]:
    """Call ids the fake received results under, in order (either protocol)."""
    if isinstance(fake, GeminiLiveFake):
        return [r["id"] for m in fake.received_with("toolResponse") for r in m["toolResponse"]["functionResponses"]]
    if isinstance(fake, GptLiveFake):
        return [e["item"]["call_id"] for e in fake.of_type("response.item.create")]
    return [e["item"]["call_id"] for e in fake.of_type("conversation.item.create")]


async def _short_session(adapter_class, make_fake, key_env, monkeypatch, *, play_policy: bool, budget_s: int):
    monkeypatch.setenv(key_env, "sk-test")
    bundle = load_task(TASK)
    bundle.task.time_budget_s = budget_s
    speech = open_speech_source(TASK, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    turns = bundle.policy.turns if play_policy else []
    async with make_fake(turns, api_key="sk-test") as fake:
        adapter = adapter_class(endpoint=fake.url)
        result = await run_duplex_session(bundle, adapter, InProcessEnvironment(bundle.public_bundle()), DuplexConfig(speech=speech, session_dir=None))
    return bundle, fake, result


@pytest.mark.parametrize(("adapter_class", "make_fake", "key_env"), CASES)
async def test_the_policy_through_each_provider_calls_the_tools_and_speaks(adapter_class, make_fake, key_env, monkeypatch):
    bundle, fake, result = await _short_session(adapter_class, make_fake, key_env, monkeypatch, play_policy=True, budget_s=30)
    assert not fake.invalid and not fake.violations
    calls = [e for e in result.events.events if e.type == EventType.TOOL_CALL]
    expected = [c.name for t in bundle.policy.turns for c in t.tool_calls]
    assert len(calls) >= 3 and [e.payload["tool"] for e in calls] == expected[: len(calls)]
    assert _outputs(fake) == [e.payload["call_id"] for e in calls]
    assert [e for e in result.events.events if e.type == EventType.AGENT_AUDIO_END], "the agent was heard"
    heard = [e.payload["text"] for e in result.events.events if e.type == EventType.AGENT_TEXT]
    assert heard and heard[0].startswith(bundle.policy.turns[0].text[:20])
    assert not result.agent_errors


@pytest.mark.parametrize(("adapter_class", "make_fake", "key_env"), CASES)
async def test_the_silent_agent_through_each_provider_scores_nothing(adapter_class, make_fake, key_env, monkeypatch):
    _, fake, result = await _short_session(adapter_class, make_fake, key_env, monkeypatch, play_policy=False, budget_s=12)
    assert result.pts == 0 and not fake.invalid
    assert not [e for e in result.events.events if e.type == EventType.AGENT_AUDIO_START]
