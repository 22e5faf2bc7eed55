"""The GPT-Live adapter against its protocol fake: delegation set-up, relayed calls, spoken segments."""

from __future__ import annotations

import pytest

from harness.agents.providers.gpt_live import GptLiveAdapter
from harness.agents.realtime import AudioDelta, ResponseDone, SessionConfig, ToolCallRequested
from harness.tasks.models import PolicyToolCall, PolicyTurn
from tests.fakes.driver import drive, user_speech
from tests.fakes.gpt_live_fake import GptLiveFake

TOOLS = [
    {"name": "get_team_roster", "description": "Team members.", "parameters": {"type": "object", "properties": {}}},
    {"name": "list_rooms", "description": "Free rooms.", "parameters": {"type": "object", "properties": {"day": {"type": "string"}}}},
]
TURNS = [
    PolicyTurn(text="Two rooms are free on Tuesday.", tool_calls=[PolicyToolCall(name="get_team_roster"), PolicyToolCall(name="list_rooms", args={"day": "tue"})]),
]


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live")
    monkeypatch.delenv("APEX_GPTLIVE_BACKEND", raising=False)


async def _exchange(**config):
    async with GptLiveFake(TURNS, api_key="sk-live") as fake:
        adapter = GptLiveAdapter(endpoint=fake.url, backend_model="gpt-5.5")
        await adapter.connect(SessionConfig(instructions="Task: rooms.", tools=TOOLS, **config))
        log = await drive(adapter, await user_speech("Which rooms are free?"), gap_ms=4000)
        await adapter.close()
    return fake, log


async def test_the_task_is_delegated_to_a_responses_backend_with_the_task_tools():
    fake, _ = await _exchange(voice="cedar")
    assert not fake.invalid and fake.handshakes[0].path == "/v1/live/sessions"
    (start,) = fake.of_type("session.start")
    session = start["session"]
    assert session["model"] == "gpt-live-1" and session["audio"]["output"]["voice"] == "cedar"
    backend = session["delegation"]["responses"]
    assert session["delegation"]["type"] == "responses" and backend["model"] == "gpt-5.5"
    assert backend["instructions"] == "Task: rooms." and [t["name"] for t in backend["tools"]] == ["get_team_roster", "list_rooms"]
    assert fake.of_type("session.close")


async def test_backend_calls_are_relayed_and_continued_once():
    fake, log = await _exchange()
    calls = log.of(ToolCallRequested)
    assert [c.name for c in calls] == ["get_team_roster", "list_rooms"]
    kinds = [(e["type"], e.get("item", {}).get("call_id")) for e in fake.received if e["type"] in ("response.item.create", "response.create")]
    assert kinds == [("response.item.create", calls[0].call_id), ("response.item.create", calls[1].call_id), ("response.create", None)]
    assert not fake.violations


async def test_a_pause_in_the_spoken_stream_ends_the_response_with_the_backend_usage():
    _, log = await _exchange()
    (done,) = log.of(ResponseDone)
    audio = log.of(AudioDelta)
    assert audio and all(a.response_id == done.response_id for a in audio)
    assert log.events.index(done) > log.events.index(audio[-1])
    assert (done.usage.input_tokens, done.usage.output_tokens, done.usage.cached_tokens) == (300, 40, 100)
