"""Words nobody heard are not credited (issue 19, part 3): the simulated user hears an agent's
transcript only as its audio plays, and only when that audio is speech. Each case runs the real
session code on the bundled benefits task and reads the record ``result.json`` would hold."""

from __future__ import annotations

import numpy as np

from harness.agents.limits import AGENT_LIMITS, AgentLimits
from harness.agents.oracle_voice import OracleVoiceAgent
from harness.agents.realtime import AudioDelta, PlayoutCleared, ResponseDone, TranscriptDelta
from harness.audio.espeak import user_voice
from harness.audio.frames import FRAME_SAMPLES, SAMPLE_RATE
from harness.audio.speech_bank import open_speech_source
from harness.campaign.session_record import record_from_session
from harness.events import EventType
from harness.session.duplex_delivery import DeliveryTracker
from harness.session.duplex_runner import DuplexConfig, run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.session.floor_meter import FloorMeter
from harness.tasks.loader import load_task
from harness.user.flow_engine import UserPlan
from tests.conftest import DEMO_DATA
from tests.scripted_voice_agent import ScriptedVoiceAgent, TransformedAgent, say, voiced_audio

BENEFITS = DEMO_DATA / "tasks" / "demo_benefits_enrollment_001"


async def _session(agent, *, budget_s: int | None = None, limits: AgentLimits = AGENT_LIMITS, hearing="asr"):
    bundle = load_task(BENEFITS)
    if budget_s is not None:
        bundle.task.time_budget_s = budget_s
    speech = open_speech_source(BENEFITS, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    result = await run_duplex_session(bundle, agent, InProcessEnvironment(bundle.public_bundle()), DuplexConfig(speech=speech,
                                      session_dir=None, privileged=True, limits=limits, hearing=hearing))
    return result, record_from_session(result, rep=0, model=agent.model_id, wall_s=0.0)


def _payloads(result, type_):
    return [e.payload for e in result.events.events if e.type == type_]


def _pattern_acts(result):
    return [p["act"] for p in _payloads(result, EventType.AGENT_ACT) if p["source"] == "pattern"]


def _constant_tone(pcm: bytes) -> bytes:
    """As many samples as the agent's speech, of a steady harmonic tone (voiced to webrtcvad)."""
    t = np.arange(len(pcm) // 2) / SAMPLE_RATE
    tone = sum(np.sin(2 * np.pi * 140 * k * t) / k for k in range(1, 8))
    return (tone * 4000).astype("<i2").tobytes()


async def test_the_reference_wording_without_audio_fails_and_its_record_shows_every_word_unheard():
    def words_only(event):
        return [] if isinstance(event, AudioDelta) else [event]

    result, record = await _session(TransformedAgent(OracleVoiceAgent(), words_only))
    assert result.pts == 0 and result.outcome == "FAILURE"
    assert _pattern_acts(result) == [] and not _payloads(result, EventType.AGENT_TEXT)
    rows = _payloads(result, EventType.SPEECH_AGREEMENT)
    assert rows and all(r["verdict"] == "no_audio" and r["unheard_chars"] == r["transcript_chars"] > 0 for r in rows)
    agreement = record.speech_agreement
    assert agreement["heard_chars"] == 0 and agreement["unheard_chars"] == agreement["transcript_chars"] > 0
    assert agreement["verdicts"] == {"no_audio": len(rows)} and agreement["heard_ratio"] == 0.0


async def test_the_reference_wording_over_a_constant_tone_fails_and_is_marked_not_speech():
    def over_a_tone(event):
        return [AudioDelta(_constant_tone(event.pcm), event.response_id, event.item_id)] if isinstance(event, AudioDelta) else [event]

    result, record = await _session(TransformedAgent(OracleVoiceAgent(), over_a_tone))
    assert result.pts == 0 and result.outcome == "FAILURE"
    assert _payloads(result, EventType.AGENT_AUDIO_START)  # the VAD calls the tone voice...
    assert _pattern_acts(result) == []  # ...but no word over it was heard
    rows = _payloads(result, EventType.SPEECH_AGREEMENT)
    assert rows and all(r["verdict"] == "not_speech" and r["speech_like"] is False and r["heard_chars"] == 0
                        for r in rows)
    assert record.speech_agreement["verdicts"] == {"not_speech": len(rows)}
    # No barge-in lands on words nobody heard, so none is scored as a perfect yield.
    assert record.duplex["stop_latency_ms"]["n"] == 0


def _cut_agent(*, cut_at_ms: int | None):
    text = "Thanks for calling the benefits line, I will help you enroll today. To start, may I have your employee ID?"

    def script(heard):
        if heard.now_ms == 200:
            return [TranscriptDelta(text), say(6000), ResponseDone()]
        if cut_at_ms is not None and heard.now_ms == cut_at_ms:
            return [PlayoutCleared()]
        return []

    return ScriptedVoiceAgent(script)


async def test_audio_cut_by_the_agent_is_heard_only_up_to_the_cut():
    # The scripted voice carries no words (ASR would hear none): the cut itself is what is measured.
    result, _ = await _session(_cut_agent(cut_at_ms=2200), budget_s=12, hearing="claimed")
    (row,) = _payloads(result, EventType.SPEECH_AGREEMENT)
    assert row["verdict"] == "cut" and row["cut"] is True and 0 < row["heard_chars"] < row["transcript_chars"] / 2
    (text,) = _payloads(result, EventType.AGENT_TEXT)
    assert text["text"].startswith("Thanks for calling") and "employee ID" not in text["text"]
    assert "ASK:employee_id" not in _pattern_acts(result)  # the question was in the audio it dropped


async def test_the_same_response_played_to_the_end_is_heard_whole():
    result, _ = await _session(_cut_agent(cut_at_ms=None), budget_s=12, hearing="claimed")
    (row,) = _payloads(result, EventType.SPEECH_AGREEMENT)
    assert row["verdict"] == "speech" and row["unheard_chars"] == 0
    assert "ASK:employee_id" in _pattern_acts(result)


async def test_the_honest_oracle_is_heard_word_for_word_and_passes():
    result, record = await _session(OracleVoiceAgent())
    assert result.pts == 1
    rows = _payloads(result, EventType.SPEECH_AGREEMENT)
    assert rows and all(r["speech_like"] for r in rows)
    # Every word heard, but for the response it cut itself when the user barged in.
    assert record.speech_agreement["verdicts"] == {"cut": 1, "speech": len(rows) - 1}
    assert all(r["unheard_chars"] == 0 for r in rows if r["verdict"] == "speech")
    (barge,) = [r for r in record.duplex["events"] if r["expected_floor_action"] == "YIELD"]
    assert barge["agent_yielded"] is True and barge["stop_latency_ms"] > 0


def test_a_barge_in_over_no_speech_is_listed_as_no_opportunity_never_as_a_perfect_yield():
    bundle = load_task(BENEFITS)
    bus_events = []

    class _Bus:
        def emit(self, type_, actor, t, payload):
            bus_events.append(payload)

    tracker = DeliveryTracker(bundle.events, _Bus())
    plan = UserPlan(id="correct_fsa", speech_act="CORRECT", fact_ids=[], floor_action="BARGE_IN", urgency="HIGH",
                    event_id="evt_correct_fsa", style={}, state_id="s")
    tracker.started(plan, onset_ms=1000, duration_ms=800, floor=FloorMeter(_Bus()))
    speaking = FloorMeter(_Bus())  # a voiced segment open, audio still queued
    speaking.played(np.frombuffer(voiced_audio(300), dtype="<i2")[-FRAME_SAMPLES:], 2000, response_id=None, audio_played=True,
                    queued_samples=FRAME_SAMPLES)
    assert speaking.speaking
    tracker.started(plan, onset_ms=3000, duration_ms=800, floor=speaking, speech=False)
    silent, tone = [p for p in bus_events if "expected_floor_action" in p]
    assert silent["no_opportunity"] == "agent_silent" and tone["no_opportunity"] == "agent_not_speech"
    for record in (silent, tone):
        assert record["yield_opportunity"] is False
        assert record["stop_latency_ms"] is None and record["agent_yielded"] is None


async def test_a_megabyte_of_transcript_deltas_is_scanned_for_acts_only_as_far_as_it_is_heard(monkeypatch):
    from harness.user.simulator import SimulatedUser

    scanned = []
    original = SimulatedUser.acts_in
    monkeypatch.setattr(SimulatedUser, "acts_in", lambda self, text: scanned.append(len(text)) or original(self, text))

    def flood(heard):
        if heard.now_ms == 200:
            return [*(TranscriptDelta(("word " * 205)[:1024]) for _ in range(1000)), say(8000), ResponseDone()]
        return []

    # Past the boundary's transcript bound (a real agent would fail there): the hearing itself is measured.
    roomy = AgentLimits(transcript_item_chars=2_000_000, transcript_session_chars=2_000_000)
    result, _ = await _session(ScriptedVoiceAgent(flood), budget_s=12, limits=roomy, hearing="claimed")
    (row,) = _payloads(result, EventType.SPEECH_AGREEMENT)
    assert row["transcript_chars"] == 1_024_000 and row["verdict"] == "too_fast"
    # Before: every delta rescanned the whole transcript so far (about 500 MB in all).
    assert sum(scanned) < 20 * row["heard_chars"] + 1000 * 256


async def test_a_megabyte_transcript_is_aligned_with_the_recognised_words_only_as_far_as_the_audio_could_carry():
    # hearing: asr — each alignment weighs at most what the played audio could carry at the rate
    # ceiling, so a huge claim costs no more than a short one; a voice that carries no words is not heard.
    def flood(heard):
        if heard.now_ms == 200:
            return [*(TranscriptDelta(("word " * 205)[:1024]) for _ in range(1000)), say(8000), ResponseDone()]
        return []

    roomy = AgentLimits(transcript_item_chars=2_000_000, transcript_session_chars=2_000_000)
    result, _ = await _session(ScriptedVoiceAgent(flood), budget_s=12, limits=roomy)
    (row,) = _payloads(result, EventType.SPEECH_AGREEMENT)
    assert row["transcript_chars"] == 1_024_000 and row["heard_chars"] < 100
    assert row["verdict"] in ("mismatch", "too_fast")
