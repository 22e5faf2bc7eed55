"""The blame of a provider failure, as the session runner and the campaign see it."""

from __future__ import annotations

import pytest

from harness.agents.providers.errors import ProviderRefused, ProviderUnavailable
from harness.agents.providers.gemini_live import GeminiLiveAdapter
from harness.agents.providers.openai_realtime import OpenAIRealtimeAdapter
from harness.agents.providers.playout import PlayoutTracker
from harness.agents.realtime import AdapterError
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.blame.errors import SessionInfraError
from harness.blame.origin_table import classify
from harness.session.duplex_runner import DuplexConfig, run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA
from tests.fakes.gemini_live_fake import GeminiLiveFake
from tests.fakes.openai_realtime_fake import OpenAIRealtimeFake

TASK = DEMO_DATA / "tasks" / "demo_offsite_coordination_001"


def test_a_refused_key_stops_the_campaign_and_an_unreachable_provider_is_retried():
    refused = classify(ProviderRefused(AdapterError("OpenAI refused the connection: HTTP 401", kind="auth")))
    unavailable = classify(ProviderUnavailable(AdapterError("OpenAI: HTTP 429", kind="rate_limited", retry_after_s=7)))
    assert refused.stops_campaign and not refused.transient and not refused.infrastructure
    assert unavailable.transient and unavailable.infrastructure and unavailable.retry_after_s == 7


async def _session(adapter, budget_s: int):
    bundle = load_task(TASK)
    bundle.task.time_budget_s = budget_s
    speech = open_speech_source(TASK, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    return await run_duplex_session(bundle, adapter, InProcessEnvironment(bundle.public_bundle()), DuplexConfig(speech=speech, session_dir=None))


async def test_a_1011_close_mid_session_makes_the_session_an_infrastructure_failure():
    bundle = load_task(TASK)
    async with OpenAIRealtimeFake(bundle.policy.turns, quirks={"close_1011_after_turn"}) as fake:
        with pytest.raises(SessionInfraError) as caught:
            await _session(OpenAIRealtimeAdapter(endpoint=fake.url, model="", require_key=False), 40)
    assert caught.value.transient and "1011" in str(caught.value)


async def test_a_resumable_provider_carries_the_session_over_a_1011_close(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    bundle = load_task(TASK)
    async with GeminiLiveFake(bundle.policy.turns, quirks={"close_1011_after_turn"}) as fake:
        result = await _session(GeminiLiveAdapter(endpoint=fake.url), 30)
    assert len(fake.handshakes) == 2 and not result.agent_errors
    assert sum(1 for e in result.events.events if e.type == "TOOL_CALL") >= 3  # turns after the resumption


def test_playout_estimate_plays_items_back_to_back_from_their_arrival():
    playout = PlayoutTracker()
    playout.audio("a", "r1", 48 * 1000, now_ms=100)  # 1 s of 24 kHz PCM16, arriving at 100 ms
    playout.audio("b", "r2", 48 * 500, now_ms=300)  # queued behind it: plays 1100–1600 ms
    assert playout.playing(600) == ("a", "r1", 500)
    assert playout.playing(1350) == ("b", "r2", 250)
    assert playout.playing(1700) is None
    playout.report("b", 100)  # the runner's report wins over the estimate
    assert playout.playing(1700) == ("b", "r2", 100)
