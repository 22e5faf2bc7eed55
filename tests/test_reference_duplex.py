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
    """The correction's trigger is the read-back's last words ("... the total $240"). Heard from the
    audio (issue 33), they count once ASR of the played segment carries them: at the end of that
    3.5 s response, so the correction lands just after the agent stopped (no floor to yield, counted
    beside the yield rate) where, taking the transcript on trust, it landed in its last 300 ms."""
    result = await _session(toy_form, OracleVoiceAgent())
    assert result.pts == 1, result.grade.explain()
    records = [e.payload for e in result.events.events
               if e.type == EventType.DUPLEX_EVENT and "expected_floor_action" in e.payload]
    assert [(r["event_id"], r["agent_yielded"], r["no_opportunity"]) for r in records] == [
        ("evt_correct_total", None, "agent_paused")]


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
