"""Whole C2 sessions on the virtual clock: the oracle, the no-op agent, and scripted duplex behaviour."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from harness.agents import oracle_voice
from harness.agents.noop_voice import NoOpVoiceAgent
from harness.agents.oracle_voice import OracleVoiceAgent
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.events import EventType
from harness.session.duplex_runner import run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.loader import load_task


class StubbornAgent(OracleVoiceAgent):
    """Talks over the user: never yields to a barge-in."""

    def __init__(self) -> None:
        super().__init__()
        self.yield_after_ms = 10**9


class EagerAgent(OracleVoiceAgent):
    """Starts answering 300 ms into the user's turn instead of waiting for the user to finish."""

    def __init__(self) -> None:
        super().__init__()
        self.reply_after_silence_ms = 0
        self.reply_after_speech_ms = 300


async def _session(task_dir, agent, session_dir=None):
    bundle = load_task(task_dir)
    speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    env = InProcessEnvironment(bundle.public_bundle())
    return await run_duplex_session(bundle, agent, env, speech=speech, session_dir=session_dir, privileged=True)


def _events(result, type_):
    return [e for e in result.events.events if e.type == type_]


def _delivery(result):
    records = [e.payload for e in _events(result, EventType.DUPLEX_EVENT) if "onset_ms" in e.payload]
    assert len(records) == 1
    return records[0]


async def test_oracle_passes_the_form_fixture_and_yields_to_the_correction(toy_form, tmp_path):
    result = await _session(toy_form, OracleVoiceAgent(), tmp_path)
    assert result.pts == 1, result.grade.explain()
    assert result.reason == "agent_ended"
    record = _delivery(result)
    assert record["expected_floor_action"] == "YIELD" and record["agent_speaking_at_onset"] is True
    assert record["agent_yielded"] is True
    assert oracle_voice.YIELD_AFTER_SPEECH_MS - 40 <= record["stop_latency_ms"] <= record["max_stop_latency_ms"]
    approval = _events(result, EventType.APPROVAL_EVENT)[0]
    approve_end = next(e for e in _events(result, EventType.USER_AUDIO_END) if e.payload["plan_id"] == "approve_submit")
    assert approval.media_time_ms == approve_end.media_time_ms  # granted when heard, not at onset
    for name in ("stereo.wav", "user.wav", "agent.wav"):
        assert (tmp_path / "audio" / name).is_file()


async def test_oracle_passes_the_interview_fixture(toy_interview):
    result = await _session(toy_interview, OracleVoiceAgent())
    assert result.pts == 1, result.grade.explain()


async def test_noop_agent_fails(toy_form):
    result = await _session(toy_form, NoOpVoiceAgent())
    assert result.pts == 0
    assert result.reason in ("closing", "nudges_exhausted")
    assert not _events(result, EventType.AGENT_AUDIO_START)


async def test_an_agent_that_ignores_the_barge_in_is_measured_as_not_yielding(toy_form):
    result = await _session(toy_form, StubbornAgent())
    record = _delivery(result)
    assert record["agent_yielded"] is False
    barged = next(e for e in _events(result, EventType.AGENT_AUDIO_END) if e.payload["text"].startswith("Recorded."))
    assert barged.payload["truncated"] is False
    # The agent talked on to the end of its response: that end, minus the user's onset, is its stop latency.
    assert record["stop_latency_ms"] == barged.media_time_ms - record["onset_ms"]
    assert record["stop_latency_ms"] > record["max_stop_latency_ms"]


async def test_an_agent_that_answers_early_overlaps_the_user_in_stereo_wav(toy_form, tmp_path):
    result = await _session(toy_form, EagerAgent(), tmp_path)
    starts = _events(result, EventType.AGENT_AUDIO_START)
    user_ends = _events(result, EventType.USER_AUDIO_END)
    first_agent = starts[0].media_time_ms
    first_user_end = user_ends[0].media_time_ms
    assert first_agent < first_user_end  # it started before the user had finished
    audio, rate = sf.read(tmp_path / "audio" / "stereo.wav", dtype="int16")
    assert rate == 24000 and audio.shape[1] == 2
    start = first_agent * 24
    overlap = slice(start, first_user_end * 24)
    assert not audio[:start, 1].any()  # the agent channel is silent before its onset...
    assert np.abs(audio[start : start + 480, 1]).max() > 0  # ...and speaks from that exact frame
    assert np.abs(audio[overlap, 0]).max() > 0 and np.abs(audio[overlap, 1]).max() > 0


async def test_the_same_session_twice_gives_identical_events_and_audio(toy_form, tmp_path):
    first = await _session(toy_form, OracleVoiceAgent(), tmp_path / "a")
    second = await _session(toy_form, OracleVoiceAgent(), tmp_path / "b")

    def stream(result):
        return [(e.seq, e.type, e.actor, e.media_time_ms, e.payload) for e in result.events.events]

    assert stream(first) == stream(second)
    a = sf.read(tmp_path / "a" / "audio" / "stereo.wav", dtype="int16")[0]
    b = sf.read(tmp_path / "b" / "audio" / "stereo.wav", dtype="int16")[0]
    assert np.array_equal(a, b)


@pytest.mark.parametrize("budget_s", [5])
async def test_the_time_budget_is_enforced(toy_form, budget_s):
    bundle = load_task(toy_form)
    bundle.task.time_budget_s = budget_s
    speech = open_speech_source(toy_form, "auto", voice=user_voice("voice_03"), task_id=bundle.task_id)
    result = await run_duplex_session(
        bundle, OracleVoiceAgent(), InProcessEnvironment(bundle.public_bundle()), speech=speech, session_dir=None, privileged=True
    )
    assert result.reason == "time_budget"
    assert result.events.events[-1].media_time_ms <= budget_s * 1000


class JumpyAgent(OracleVoiceAgent):
    """Stops talking at any sound from the user, back-channels included (the characteristic
    mistake of the back-channel tasks)."""

    def __init__(self) -> None:
        super().__init__()
        self.yield_after_ms = 20


def _backchannel_task():
    from tests.conftest import DEMO_DATA

    return DEMO_DATA / "tasks" / "demo_field_tech_interview_001"


async def test_oracle_keeps_talking_through_a_back_channel():
    result = await _session(_backchannel_task(), OracleVoiceAgent())
    assert result.pts == 1, result.grade.explain()
    record = _delivery(result)
    assert record["expected_floor_action"] == "CONTINUE" and record["agent_speaking_at_onset"] is True
    assert record["agent_yielded"] is False
    start = next(e for e in _events(result, EventType.USER_AUDIO_START) if e.payload.get("backchannel"))
    assert start.payload["plan_id"] == record["plan_id"]


async def test_an_agent_that_stops_at_a_back_channel_is_measured_as_a_false_yield():
    from harness.metrics.duplex_metrics import duplex_metrics

    result = await _session(_backchannel_task(), JumpyAgent())
    record = _delivery(result)
    assert record["expected_floor_action"] == "CONTINUE"
    assert record["agent_yielded"] is True and record["stop_latency_ms"] <= record["max_stop_latency_ms"]
    metrics = duplex_metrics(result.events.events)
    assert metrics["fyr"] == 1.0 and metrics["fda"] == 0.0


class TranscriptlessAgent(OracleVoiceAgent):
    """Speaks like the oracle but reports no transcript: the user must listen to its audio."""

    def __init__(self) -> None:
        from harness.audio import espeak

        # A voice local ASR recognizes well enough for keyword patterns.
        super().__init__(synthesizer=lambda texts: espeak.synthesize(texts, "en-us+f2"))

    def poll_events(self):
        from harness.agents.realtime import TranscriptDelta

        return [e for e in super().poll_events() if not isinstance(e, TranscriptDelta)]


async def test_agent_audio_without_transcript_is_heard_through_local_asr(toy_form):
    result = await _session(toy_form, TranscriptlessAgent())
    texts = [e.payload for e in _events(result, EventType.AGENT_TEXT)]
    assert texts and all(p["source"] == "asr" for p in texts)
    assert any("total amount" in p["text"] for p in texts)


async def test_a_live_provider_adapter_runs_on_the_realtime_clock(toy_form):
    class LiveSilentAgent(NoOpVoiceAgent):
        clock_mode = "realtime"

    bundle = load_task(toy_form)
    bundle.task.time_budget_s = 1
    speech = open_speech_source(toy_form, "auto", voice=user_voice("voice_03"), task_id=bundle.task_id)
    result = await run_duplex_session(
        bundle, LiveSilentAgent(), InProcessEnvironment(bundle.public_bundle()), speech=speech, session_dir=None, privileged=True
    )
    start = result.events.events[0]
    assert start.payload["clock"] == "realtime"
    end = result.events.events[-1]
    assert end.wall_time_ns >= end.media_time_ms * 1_000_000  # paced: media never runs ahead of the wall
