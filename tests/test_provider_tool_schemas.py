"""Every adapter takes a task's tools bare or chat-style wrapped, as the reference does."""

from __future__ import annotations

import pytest

from harness.agents.providers.gpt_live import GptLiveAdapter
from harness.agents.providers.grok_voice import GrokVoiceAdapter
from harness.agents.realtime import SessionConfig
from tests.fakes.driver import drive, user_speech
from tests.fakes.gpt_live_fake import GptLiveFake
from tests.test_provider_gpt_live import TOOLS, TURNS

WRAPPED = [{"type": "function", "function": tool} for tool in TOOLS]


def test_a_session_config_unwraps_chat_style_tools_and_keeps_bare_ones():
    assert SessionConfig(instructions="x", tools=WRAPPED).tools == TOOLS
    assert SessionConfig(instructions="x", tools=TOOLS).tools == TOOLS


def test_grok_declares_wrapped_tools_as_it_declares_bare_ones():
    adapter = GrokVoiceAdapter()
    wrapped = adapter._session(SessionConfig(instructions="x", tools=WRAPPED)).model_dump(mode="json")
    bare = adapter._session(SessionConfig(instructions="x", tools=TOOLS)).model_dump(mode="json")
    assert wrapped == bare and [t["name"] for t in wrapped["session"]["tools"]] == ["get_team_roster", "list_rooms"]


@pytest.fixture
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live")
    monkeypatch.delenv("APEX_GPTLIVE_BACKEND", raising=False)


async def test_gpt_live_delegates_wrapped_tools_by_name(_key):
    async with GptLiveFake(TURNS, api_key="sk-live") as fake:
        adapter = GptLiveAdapter(endpoint=fake.url, backend_model="gpt-5.5")
        await adapter.connect(SessionConfig(instructions="Task: rooms.", tools=WRAPPED))
        await drive(adapter, await user_speech("Which rooms are free?"), gap_ms=4000)
        await adapter.close()
    (start,) = fake.of_type("session.start")
    tools = start["session"]["delegation"]["responses"]["tools"]
    assert [t["name"] for t in tools] == ["get_team_roster", "list_rooms"] and not fake.invalid
