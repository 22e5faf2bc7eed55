"""The cascade voice agent through the duplex runner, with the policy-playing fake chat server."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from harness.agents.cascade import CascadeAgent
from harness.agents.chat_agent import ChatClient, ChatEndpoint
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.events import EventType
from harness.session.duplex_runner import run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA
from tests.fakes.fake_chat_server import API_KEY, FakeChatServer, serve_fake_chat

pytestmark = pytest.mark.slow

TASKS = ["demo_warranty_advice_001", "demo_hvac_inspection_001", "demo_printer_fleet_troubleshoot_001"]


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("FAKE_CHAT_KEY", API_KEY)


async def _session(task_id, fake, session_dir=None, **manners):
    task_dir = DEMO_DATA / "tasks" / task_id
    bundle = load_task(task_dir)
    fake.policy = bundle.policy
    speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    client = ChatClient(ChatEndpoint("fake-model", fake.base_url, "FAKE_CHAT_KEY", backoff_s=0))
    agent = CascadeAgent(client=client, clock_mode="virtual", **manners)
    env = InProcessEnvironment(bundle.public_bundle())
    result = await run_duplex_session(bundle, agent, env, speech=speech, session_dir=session_dir)
    return result, agent


def _events(result, type_):
    return [e for e in result.events.events if e.type == type_]


@pytest.mark.parametrize("task_id", TASKS)
async def test_the_cascade_passes_demo_tasks_in_c2_and_reports_its_stage_latencies(task_id):
    async with serve_fake_chat(FakeChatServer()) as fake:
        result, agent = await _session(task_id, fake)
    assert result.pts == 1, result.grade.explain()
    assert result.reason == "agent_ended"
    meta = agent.metadata()
    assert meta["asr"]["asr"] == "faster-whisper" and meta["responses"] >= len(fake.policy.turns) - 1
    latency = meta["latency_ms"]
    assert 0 < latency["asr_ms"]["p50"] <= latency["llm_ms"]["p50"] <= latency["first_audio_ms"]["p50"]
    # What the LLM was told is what the ASR heard of the user, not the harness's text.
    users = [m["content"] for m in fake.requests[-1]["messages"] if m["role"] == "user"]
    assert users and all(text.strip() for text in users)


async def test_two_cascade_runs_give_identical_events_and_audio(tmp_path):
    async with serve_fake_chat(FakeChatServer()) as fake:
        first, _ = await _session(TASKS[0], fake, tmp_path / "a")
        second, _ = await _session(TASKS[0], fake, tmp_path / "b")

    def stream(result):
        # ADAPTER_INFO carries the cascade's wall-clock stage latencies, like wall_time_ns: left out.
        return [(e.seq, e.type, e.actor, e.media_time_ms, e.payload) for e in result.events.events
                if e.type != EventType.ADAPTER_INFO]

    assert stream(first) == stream(second)
    a = sf.read(tmp_path / "a" / "audio" / "stereo.wav", dtype="int16")[0]
    b = sf.read(tmp_path / "b" / "audio" / "stereo.wav", dtype="int16")[0]
    assert np.array_equal(a, b)


async def test_the_cascade_stops_speaking_when_the_user_barges_in():
    async with serve_fake_chat(FakeChatServer()) as fake:
        result, _ = await _session("demo_hvac_inspection_001", fake)
    deliveries = [e.payload for e in _events(result, EventType.DUPLEX_EVENT) if "onset_ms" in e.payload]
    barges = [d for d in deliveries if d["expected_floor_action"] == "YIELD" and d["agent_speaking_at_onset"]]
    assert barges and all(d["agent_yielded"] for d in barges)
    # It said so (a diagnostic), and its audio did stop (the measurement above).
    assert any(e.payload["signal"] == "playout_cleared" for e in _events(result, EventType.AGENT_SIGNAL))


async def test_a_cascade_that_never_yields_is_measured_as_talking_over_the_user():
    async with serve_fake_chat(FakeChatServer()) as fake:
        result, _ = await _session("demo_hvac_inspection_001", fake, barge_in_ms=10**9)
    deliveries = [e.payload for e in _events(result, EventType.DUPLEX_EVENT) if "onset_ms" in e.payload]
    barges = [d for d in deliveries if d["expected_floor_action"] == "YIELD" and d["agent_speaking_at_onset"]]
    assert barges and not any(d["agent_yielded"] for d in barges)


async def _speak_to(agent, pcm, start_ms=0):
    """Feed ``pcm`` then a second of silence, frame by frame; returns the media time reached."""
    from harness.audio.frames import FRAME_SAMPLES, AudioFrame

    padded = np.concatenate((pcm, np.zeros(24_000 + (-len(pcm)) % FRAME_SAMPLES, dtype=np.int16)))
    t = start_ms
    for index in range(len(padded) // FRAME_SAMPLES):
        await agent.send_audio(AudioFrame(padded[index * FRAME_SAMPLES : (index + 1) * FRAME_SAMPLES], t))
        t += 20
    return t


async def _user_clip():
    task_dir = DEMO_DATA / "tasks" / TASKS[0]
    bank = open_speech_source(task_dir, "prerendered")
    text = bank.bank.texts[0]
    return (await bank.prepare([text]))[text].pcm


async def test_on_the_realtime_clock_responses_run_as_tasks_while_frames_flow():
    from harness.agents.realtime import AudioDelta, SessionConfig, ToolCallRequested, UserTranscript

    async with serve_fake_chat(FakeChatServer()) as fake:
        fake.policy = load_task(DEMO_DATA / "tasks" / TASKS[0]).policy
        client = ChatClient(ChatEndpoint("fake-model", fake.base_url, "FAKE_CHAT_KEY", backoff_s=0))
        agent = CascadeAgent(client=client)  # realtime by default
        await agent.connect(SessionConfig(instructions="be brief", tools=[]))
        await _speak_to(agent, await _user_clip())
        assert agent._busy is not None  # send_audio returned before the response was ready
        await agent._busy
        events = agent.poll_events()
        await agent.close()
    assert isinstance(events[0], UserTranscript) and events[0].text
    first_turn = fake.policy.turns[0]
    expected = ToolCallRequested if first_turn.tool_calls else AudioDelta
    assert any(isinstance(e, expected) for e in events)


async def test_a_refused_key_becomes_an_auth_error_event(monkeypatch):
    from harness.agents.realtime import AdapterError, SessionConfig

    monkeypatch.setenv("FAKE_CHAT_KEY", "sk-wrong")
    async with serve_fake_chat(FakeChatServer()) as fake:
        client = ChatClient(ChatEndpoint("fake-model", fake.base_url, "FAKE_CHAT_KEY", backoff_s=0))
        agent = CascadeAgent(client=client, clock_mode="virtual")
        await agent.connect(SessionConfig(instructions="be brief", tools=[]))
        await _speak_to(agent, await _user_clip())
        errors = [e for e in agent.poll_events() if isinstance(e, AdapterError)]
        await agent.close()
    assert len(errors) == 1 and errors[0].kind == "auth" and not errors[0].transient


def test_without_a_recognizer_installed_the_cascade_cannot_be_constructed(monkeypatch):
    from harness.audio import agent_asr

    monkeypatch.setattr(agent_asr, "_installed", lambda module: False)
    with pytest.raises(ImportError, match="pip install 'apex-voice\\[asr\\]'"):
        CascadeAgent("gpt-x")
