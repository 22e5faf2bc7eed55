"""Conformance: the published reference fixtures run as whole C2 sessions (skipped where ../shared is absent)."""

from __future__ import annotations

from harness.agents.noop_voice import NoOpVoiceAgent
from harness.agents.oracle_voice import OracleVoiceAgent
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.events import EventType
from harness.session.duplex_runner import DuplexConfig, run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.loader import load_task


async def _session(task_dir, agent, session_dir=None):
    bundle = load_task(task_dir)
    speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    env = InProcessEnvironment(bundle.public_bundle())
    return await run_duplex_session(bundle, agent, env, DuplexConfig(speech=speech, session_dir=session_dir, privileged=True))


async def test_oracle_passes_the_form_fixture_and_the_correction_lands_once_its_trigger_is_heard(toy_form):
    """The correction's trigger is the read-back's confirmation ("Recorded. Confirming the total is
    240 dollars."). Heard from the audio (issue 33), it counts once ASR of a played segment carries
    it. With the espeak voice the line played as one segment, so the trigger was heard only at its
    end and the correction landed just after the agent stopped (``no_opportunity: agent_paused``).
    The hibari agent voice pauses after "Recorded." and within the sentence, so the segment that
    carries "Confirming the total" closes while "is 240 dollars" is still to play: the correction
    lands over the agent's speech and the oracle yields within the window (as when the transcript
    is taken on trust)."""
    result = await _session(toy_form, OracleVoiceAgent())
    assert result.pts == 1, result.grade.explain()
    records = [e.payload for e in result.events.events
               if e.type == EventType.DUPLEX_EVENT and "expected_floor_action" in e.payload]
    assert [(r["event_id"], r["agent_speaking_at_onset"], r["agent_yielded"], r["floor_outcome"]) for r in records] == [
        ("evt_correct_total", True, True, "yielded")]
    assert records[0]["stop_latency_ms"] <= records[0]["max_stop_latency_ms"]


async def test_oracle_passes_the_interview_fixture(toy_interview):
    result = await _session(toy_interview, OracleVoiceAgent())
    assert result.pts == 1, result.grade.explain()


async def test_noop_agent_fails_both_fixtures(toy_form, toy_interview):
    for task in (toy_form, toy_interview):
        assert (await _session(task, NoOpVoiceAgent())).pts == 0


async def test_the_form_fixture_twice_gives_identical_events(toy_form):
    first = await _session(toy_form, OracleVoiceAgent())
    second = await _session(toy_form, OracleVoiceAgent())

    def stream(result):
        return [(e.type, e.media_time_ms, e.payload) for e in result.events.events]

    assert stream(first) == stream(second)
