"""Hostile agents through the real session code: whatever they send is data, refused as a tool
error they see, logged, and scored as their own failure — never an infrastructure error."""

from __future__ import annotations

import json

import pytest

from harness.agents.realtime import ResponseDone, ToolCallRequested, TranscriptDelta
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.events import EventType
from harness.session.duplex_runner import DuplexConfig, run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA
from tests.scripted_voice_agent import ScriptedVoiceAgent, say

BENEFITS = DEMO_DATA / "tasks" / "demo_benefits_enrollment_001"


async def _run(script, *, budget_s: int = 20):
    bundle = load_task(BENEFITS)
    bundle.task.time_budget_s = budget_s
    speech = open_speech_source(BENEFITS, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    agent = ScriptedVoiceAgent(script)
    result = await run_duplex_session(bundle, agent, InProcessEnvironment(bundle.public_bundle()), DuplexConfig(speech=speech,
                                      session_dir=None))
    return result, agent


def _once_at(ms, events):
    def script(heard):
        if heard.now_ms >= ms and not heard.state.get("done"):
            heard.state["done"] = True
            return list(events)
        return []
    return script


def _results(result):
    return [e.payload for e in result.events.events if e.type == EventType.TOOL_RESULT]


HOSTILE_CALLS = {
    "lone surrogate in the name": ToolCallRequested("c1", "get_enrollment_window\ud800", "{}"),
    "lone surrogate in the arguments": ToolCallRequested("c1", "update_enrollment", '{"fields": {"full_name": "\\ud800"}}'),
    "arguments nested past any sense": ToolCallRequested("c1", "update_enrollment", "[" * 100_000 + "]" * 100_000),
    "arguments that are not JSON": ToolCallRequested("c1", "update_enrollment", "{fields: nope"),
    "a JSON list instead of an object": ToolCallRequested("c1", "update_enrollment", "[1, 2, 3]"),
    "NUL bytes and control characters": ToolCallRequested("c1", "update_enrollment\x00", '{"fields": {"a\\u0000": 1}}'),
    "an unknown tool": ToolCallRequested("c1", "drop_database", "{}"),
}


@pytest.mark.parametrize("call", list(HOSTILE_CALLS.values()), ids=list(HOSTILE_CALLS))
async def test_a_hostile_call_is_a_tool_error_the_agent_sees_and_the_session_is_scored(call):
    result, agent = await _run(_once_at(100, [call]))
    (tool_result,) = _results(result)
    assert tool_result["ok"] is False and tool_result["is_error"] is True and tool_result["error"]
    assert agent.heard.results[0].is_error is True and agent.heard.results[0].call_id == "c1"
    assert result.pts == 0 and result.outcome == "FAILURE"  # scored, as the agent's own failure
    assert not [e for e in result.events.events if e.type in (EventType.INFRA_FAILURE, EventType.HARNESS_ERROR)]


async def test_a_flood_of_calls_is_served_and_graded_without_one_grade_per_call():
    flood = [ToolCallRequested(f"c{i}", "get_enrollment_window", "{}") for i in range(400)]
    result, agent = await _run(_once_at(100, [*flood, TranscriptDelta("Done."), say(500), ResponseDone()]))
    assert len(_results(result)) == 400 and len(agent.heard.results) == 400
    gates = [e for e in result.events.events if e.type == EventType.GATE_STATUS]
    assert 1 <= len(gates) <= 3 and gates[-1].payload["after_call"] == 399


async def test_committing_before_any_approval_is_refused_and_fails_the_policy_gate():
    submit = ToolCallRequested("c1", "submit_enrollment", json.dumps({"target_id": "enrollment_1"}))
    result, _ = await _run(_once_at(100, [submit]))
    (tool_result,) = _results(result)
    assert tool_result["ok"] is False and tool_result["auth_decision"] == "PREMATURE_COMMIT"
    assert result.grade.components["PC"] is False
