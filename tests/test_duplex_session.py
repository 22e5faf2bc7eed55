"""Whole voice sessions on the bundled demo suite (virtual clock): the oracle, the no-op agent, and
scripted agents whose duplex behaviour is measured from the audio that played."""

from __future__ import annotations

import json

import jsonschema
import numpy as np
import pytest
import soundfile as sf

from harness.agents.noop_voice import NoOpVoiceAgent
from harness.agents.oracle_voice import Manners, OracleVoiceAgent
from harness.agents.realtime import AudioDelta, PlayoutCleared, ToolCallRequested, TranscriptDelta
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.events import EventType, read_events
from harness.events.schema import events_schema
from harness.metrics.duplex_metrics import duplex_metrics
from harness.metrics.latency import latency_metrics
from harness.metrics.timeline import build_timeline
from harness.session.duplex_runner import run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA, REPO
from tests.scripted_voice_agent import ScriptedVoiceAgent, TransformedAgent, say, voiced_audio

BENEFITS = DEMO_DATA / "tasks" / "demo_benefits_enrollment_001"  # a mid-speech correction (YIELD)
FIELD_TECH = DEMO_DATA / "tasks" / "demo_field_tech_interview_001"  # a back-channel (CONTINUE)


async def _session(task_dir, agent, session_dir=None, **options):
    bundle = load_task(task_dir)
    speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    env = InProcessEnvironment(bundle.public_bundle())
    return await run_duplex_session(bundle, agent, env, speech=speech, session_dir=session_dir, privileged=True, **options)


def _events(result, type_):
    return [e for e in result.events.events if e.type == type_]


def _delivery(result):
    records = [e.payload for e in _events(result, EventType.DUPLEX_EVENT) if "expected_floor_action" in e.payload]
    assert len(records) == 1
    return records[0]


async def test_oracle_passes_and_yields_to_the_correction_measured_on_its_audio(tmp_path):
    result = await _session(BENEFITS, OracleVoiceAgent(), tmp_path)
    assert result.pts == 1, result.grade.explain()
    record = _delivery(result)
    assert record["expected_floor_action"] == "YIELD" and record["agent_speaking_at_onset"] is True
    assert record["agent_yielded"] is True
    assert record["isl_ms"] == record["stop_latency_ms"] <= record["max_stop_latency_ms"]
    # The oracle says it stopped (a diagnostic) and its audio does stop: the two agree here.
    assert record["agent_signalled_stop_ms"] is not None
    assert abs(record["stop_latency_ms"] - record["agent_signalled_stop_ms"]) <= 60
    approval = _events(result, EventType.APPROVAL_EVENT)[0]
    approve_end = next(e for e in _events(result, EventType.USER_AUDIO_END) if e.payload["plan_id"] == approval_plan(result))
    assert approval.media_time_ms == approve_end.media_time_ms  # granted when heard, not at onset
    for name in ("stereo.wav", "user.wav", "agent.wav"):
        assert (tmp_path / "audio" / name).is_file()
    assert (tmp_path / "grading_inputs.json").is_file()


def approval_plan(result):
    return next(e.payload["plan_id"] for e in _events(result, EventType.USER_PLAN) if e.payload.get("speech_act") == "APPROVE")


async def test_noop_agent_fails_and_never_starts_speaking():
    result = await _session(BENEFITS, NoOpVoiceAgent())
    assert result.pts == 0
    assert result.reason in ("closing", "nudges_exhausted")
    assert not _events(result, EventType.AGENT_AUDIO_START)


async def test_an_agent_that_clears_its_playout_and_keeps_talking_did_not_yield():
    def keep_talking(event):
        return [event, AudioDelta(voiced_audio(3000))] if isinstance(event, PlayoutCleared) else [event]

    result = await _session(BENEFITS, TransformedAgent(OracleVoiceAgent(), keep_talking))
    record = _delivery(result)
    assert record["agent_signalled_stop_ms"] is not None  # it *said* it stopped...
    assert record["agent_yielded"] is False  # ...but its audio kept playing over the user
    assert record["stop_latency_ms"] is None or record["stop_latency_ms"] > record["max_stop_latency_ms"]
    assert record["overlap_ms"] > 1500
    assert duplex_metrics(result.events.events)["stop_latency_ms"]["miss_rate"] == 1.0


async def test_an_agent_that_never_yields_is_measured_as_talking_on():
    result = await _session(BENEFITS, OracleVoiceAgent(manners=Manners(yield_after_ms=None)))
    record = _delivery(result)
    assert record["agent_yielded"] is False and record["agent_signalled_stop_ms"] is None
    segment_end = next(e.media_time_ms for e in _events(result, EventType.AGENT_AUDIO_END)
                       if e.media_time_ms > record["onset_ms"])
    if record["stop_latency_ms"] is not None:  # its response ended on its own, long after the onset
        assert record["stop_latency_ms"] == segment_end - record["onset_ms"] > record["max_stop_latency_ms"]


async def test_words_without_audio_have_no_response_start():
    def words_only(event):
        return [] if isinstance(event, AudioDelta) else [event]

    result = await _session(BENEFITS, TransformedAgent(OracleVoiceAgent(), words_only))
    assert _events(result, EventType.AGENT_TRANSCRIPT_PARTIAL)  # it did "say" things
    assert not _events(result, EventType.AGENT_AUDIO_START)  # but nothing played
    assert not _events(result, EventType.AGENT_TEXT)  # so nothing was heard
    assert {e.payload["verdict"] for e in _events(result, EventType.SPEECH_AGREEMENT)} == {"no_audio"}
    latency = latency_metrics(result.events.events)
    assert latency["response_start_latency_ms"]["n"] == 0


async def test_talking_over_the_user_for_3_s_shows_at_the_sample_offset_in_stereo_wav(tmp_path):
    def talk_over(heard):
        if heard.now_ms == 200:
            return [TranscriptDelta("Hello there."), say(3000)]
        return []

    result = await _session(BENEFITS, ScriptedVoiceAgent(talk_over), tmp_path)
    start = _events(result, EventType.AGENT_AUDIO_START)[0]
    assert start.media_time_ms == 200
    audio, rate = sf.read(tmp_path / "audio" / "stereo.wav", dtype="int16")
    assert rate == 24000
    onset = 200 * 24
    assert not audio[:onset, 1].any()  # the agent channel is silent before its onset...
    assert np.abs(audio[onset : onset + 480, 1]).max() > 0  # ...and speaks from that exact sample
    user_end = _events(result, EventType.USER_AUDIO_END)[0].media_time_ms
    overlap = slice(onset, min(user_end, 3200) * 24)
    assert np.abs(audio[overlap, 0]).max() > 0 and np.abs(audio[overlap, 1]).max() > 0
    timeline = build_timeline(result.events.events)
    assert timeline.overlap_ms >= min(user_end, 3200) - 200 - 40


async def test_an_adapter_that_reads_playback_is_told_how_much_of_its_item_played():
    def speak_once(heard):
        if heard.now_ms == 200:
            return [TranscriptDelta("Hello there."), say(1000, response_id="r1")]
        return []

    agent = ScriptedVoiceAgent(speak_once)  # it overrides the playback hook, so reports are built
    await _session(BENEFITS, agent)
    reports = [r for r in agent.playback_reports if r.response_id == "r1"]
    assert [r.played_ms for r in reports] == list(range(20, 1001, 20))  # one per played frame


async def test_an_injected_tool_latency_keeps_the_user_frames_flowing_deterministically():
    def call_then_count(heard):
        if heard.now_ms == 100:
            heard.state["frames"] = 0
            return [ToolCallRequested("c1", "get_enrollment_window", "{}")]
        if heard.tool_result is not None:
            heard.state["at_result"] = heard.state["frames"]
        elif "frames" in heard.state and "at_result" not in heard.state:
            heard.state["frames"] += 1
        return []

    counts = []
    for _ in range(2):
        agent = ScriptedVoiceAgent(call_then_count)
        result = await _session(BENEFITS, agent, tool_latency_ms=300)
        counts.append(agent.heard.state["at_result"])
        tool_result = _events(result, EventType.TOOL_RESULT)[0].payload
        assert tool_result["called_at_ms"] == 100 and tool_result["latency_ms"] == 300
    assert counts == [15, 15]


async def test_the_same_session_twice_gives_identical_events_and_audio(tmp_path):
    first = await _session(FIELD_TECH, OracleVoiceAgent(), tmp_path / "a")
    second = await _session(FIELD_TECH, OracleVoiceAgent(), tmp_path / "b")

    def stream(result):
        return [(e.seq, e.type, e.actor, e.media_time_ms, e.payload) for e in result.events.events]

    assert stream(first) == stream(second)
    a = sf.read(tmp_path / "a" / "audio" / "stereo.wav", dtype="int16")[0]
    b = sf.read(tmp_path / "b" / "audio" / "stereo.wav", dtype="int16")[0]
    assert np.array_equal(a, b)


async def test_oracle_keeps_talking_through_a_back_channel():
    result = await _session(FIELD_TECH, OracleVoiceAgent())
    assert result.pts == 1, result.grade.explain()
    record = _delivery(result)
    assert record["expected_floor_action"] == "CONTINUE" and record["agent_speaking_at_onset"] is True
    assert record["agent_yielded"] is False


async def test_an_agent_that_stops_at_a_back_channel_is_measured_as_a_false_yield():
    result = await _session(FIELD_TECH, OracleVoiceAgent(manners=Manners(yield_after_ms=20)))
    record = _delivery(result)
    assert record["expected_floor_action"] == "CONTINUE"
    assert record["agent_yielded"] is True and record["stop_latency_ms"] <= record["max_stop_latency_ms"]
    metrics = duplex_metrics(result.events.events)
    assert metrics["fyr"] == 1.0 and metrics["fda"] == 0.0 and metrics["n_continue_expected"] == 1


async def test_every_event_line_validates_against_the_published_schema(tmp_path):
    committed = json.loads((REPO / "docs" / "events.schema.json").read_text())
    assert committed == json.loads(json.dumps(events_schema())), "regenerate docs/events.schema.json"
    await _session(BENEFITS, OracleVoiceAgent(), tmp_path)
    validator = jsonschema.Draft202012Validator(committed)
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    for line in lines:
        validator.validate(json.loads(line))
    types = {e.type for e in read_events(tmp_path / "events.jsonl")}
    expected = {EventType.RUN_START, EventType.USER_AUDIO_START, EventType.AGENT_AUDIO_START, EventType.TOOL_RESULT,
                EventType.GATE_STATUS, EventType.AUDIO_LEVEL, EventType.FLOOR_CHANGE, EventType.USER_STATE_TRANSITION,
                EventType.ARTIFACT_MUTATION, EventType.AGENT_SIGNAL, EventType.ADAPTER_INFO, EventType.RUN_END}
    assert expected <= types


async def test_gate_status_after_each_call_names_what_still_fails():
    result = await _session(BENEFITS, OracleVoiceAgent())
    gates = _events(result, EventType.GATE_STATUS)
    calls = [c.payload["index"] for c in _events(result, EventType.TOOL_RESULT)]
    covered = [g.payload["after_call"] for g in gates]
    # One status per burst of calls (calls that land while one is computed are in the next).
    assert covered == sorted(set(covered)) and set(covered) <= set(calls) and covered[-1] == calls[-1]
    assert gates[0].payload["failing"] and not gates[-1].payload["failing"] and gates[-1].payload["pts"] == 1


async def test_a_harness_bug_is_logged_with_its_traceback_and_raised(tmp_path):
    class BrokenEnvironment(InProcessEnvironment):
        async def snapshot(self):
            raise ValueError("bug in the harness")

    bundle = load_task(BENEFITS)
    speech = open_speech_source(BENEFITS, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    with pytest.raises(ValueError, match="bug in the harness"):
        await run_duplex_session(bundle, OracleVoiceAgent(), BrokenEnvironment(bundle.public_bundle()),
                                 speech=speech, session_dir=tmp_path, privileged=True)
    errors = [e for e in read_events(tmp_path / "events.jsonl") if e.type == EventType.HARNESS_ERROR]
    assert len(errors) == 1 and "ValueError: bug in the harness" in errors[0].payload["traceback"]


async def test_the_reference_policy_reaches_only_privileged_models():
    seen = {}

    def record_config(heard):
        seen["policy"] = heard.config.reference_policy
        return []

    bundle = load_task(BENEFITS)
    bundle.task.time_budget_s = 1
    speech = open_speech_source(BENEFITS, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    result = await run_duplex_session(bundle, ScriptedVoiceAgent(record_config), InProcessEnvironment(bundle.public_bundle()),
                                      speech=speech, session_dir=None)
    assert seen["policy"] is None
    assert result.adapter_meta["privileged"] is False


@pytest.mark.slow
@pytest.mark.wall_clock
async def test_a_whole_demo_task_passes_on_the_realtime_clock():
    """Paced to the wall (about two minutes): the same oracle, tool results delivered when ready."""
    from harness.session.clocks import RealtimeClock

    task = DEMO_DATA / "tasks" / "demo_offsite_coordination_001"
    result = await _session(task, OracleVoiceAgent(), clock=RealtimeClock())
    assert result.pts == 1, result.grade.explain()
    assert result.events.events[0].payload["clock"] == "realtime"
    end = result.events.events[-1]
    assert end.wall_time_ns >= end.media_time_ms * 1_000_000  # media never ran ahead of the wall
    results = _events(result, EventType.TOOL_RESULT)
    assert results and all(r.payload["wall_latency_ms"] is not None for r in results)


async def test_native_tool_mode_observes_the_agents_own_calls_at_the_server_and_grades_the_same():
    from harness.agents.native_oracle import NativeOracleAgent
    from harness.agents.realtime import McpEndpoint

    bridge = await _session(BENEFITS, OracleVoiceAgent())
    bundle = load_task(BENEFITS)
    env = InProcessEnvironment(bundle.public_bundle())

    async def call_tool(name, args):
        record = await env.call_tool(name, args, None)  # the agent's own call, stamped by the server
        return record.output, not record.ok

    speech = open_speech_source(BENEFITS, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    native = await run_duplex_session(bundle, NativeOracleAgent(call_tool), env, speech=speech, session_dir=None,
                                      privileged=True, tool_mode="native", mcp_endpoint=McpEndpoint(url="in-process"))
    assert native.pts == 1, native.grade.explain()
    assert native.grade.components == bridge.grade.components and native.grade.afa == bridge.grade.afa
    calls = _events(native, EventType.TOOL_CALL)
    assert calls and all(c.payload["source"] == "server" for c in calls)

    def call_log(result):
        return [(c.name, c.args, c.ok, c.auth_decision) for c in result.snapshot.call_log]

    assert call_log(native) == call_log(bridge)
    assert native.adapter_meta["tool_path"] == "mcp-agent" and bridge.adapter_meta["tool_path"] == "bridge"


async def test_native_oracle_through_a_real_mcp_server_in_a_local_sandbox(tmp_path):
    """The agent's own MCP SDK client over streamable HTTP; the harness only watches the server."""
    from harness.agents.native_oracle import NativeOracleAgent
    from harness.agents.realtime import McpEndpoint
    from harness.session.mcp_environment import McpEnvironment
    from sandbox.local import LocalBackend

    bundle = load_task(BENEFITS)
    public = tmp_path / "public" / bundle.task_id
    bundle.public_bundle().write(public)
    speech = open_speech_source(BENEFITS, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    async with LocalBackend(pool_size=0).start(public, "native-run", task_id=bundle.task_id) as sandbox:
        async with McpEnvironment(sandbox) as env:
            agent = NativeOracleAgent()
            result = await run_duplex_session(bundle, agent, env, speech=speech, session_dir=None, privileged=True,
                                              tool_mode="native", mcp_endpoint=McpEndpoint(url=sandbox.mcp_url, headers=sandbox.mcp_headers()))
    assert result.pts == 1, result.grade.explain()
    observed = _events(result, EventType.TOOL_CALL)
    assert len(observed) == agent.calls_made == len(result.snapshot.call_log)
    assert all(c.payload["source"] == "server" for c in observed)


async def test_turn_based_c1_never_talks_over_the_agent_and_the_oracle_still_passes():
    result = await _session(BENEFITS, OracleVoiceAgent(), condition="C1")
    assert result.pts == 1, result.grade.explain()
    assert result.condition == "C1" and result.events.events[0].payload["condition"] == "C1"
    starts = _events(result, EventType.USER_AUDIO_START)
    assert not [s for s in starts if s.payload.get("barge") or s.payload.get("backchannel")]
    timeline = build_timeline(result.events.events)
    assert timeline.overlap_ms == 0  # strictly alternating: the user waits for the agent to finish
