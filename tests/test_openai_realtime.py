"""The OpenAI Realtime adapter against the protocol fake: session shape, calls, truncation, usage."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from openai import AsyncOpenAI

from harness.agents.providers.openai_realtime import OpenAIRealtimeAdapter
from harness.agents.realtime import (
    AudioDelta,
    PlaybackReport,
    PlayoutCleared,
    ResponseDone,
    SessionConfig,
    SpeechStarted,
    ToolCallRequested,
    ToolResult,
    TurnDetection,
)
from harness.audio.frames import AudioFrame
from harness.tasks.models import PolicyToolCall, PolicyTurn
from tests.fakes.driver import drive, user_speech
from tests.fakes.openai_realtime_fake import OpenAIRealtimeFake

TOOLS = [
    {"name": "get_team_roster", "description": "Team members.", "parameters": {"type": "object", "properties": {}}},
    {"name": "list_rooms", "description": "Free rooms.", "parameters": {"type": "object", "properties": {"day": {"type": "string"}}}},
]
PARALLEL = [
    PolicyTurn(text="Two rooms are free on Tuesday.", tool_calls=[PolicyToolCall(name="get_team_roster"), PolicyToolCall(name="list_rooms", args={"day": "tue"})]),
]


def _adapter(fake: OpenAIRealtimeFake) -> OpenAIRealtimeAdapter:
    return OpenAIRealtimeAdapter(endpoint=fake.url, model="gpt-realtime-2.1", require_key=False)


async def _exchange(turns, *utterances: str):
    async with OpenAIRealtimeFake(turns) as fake:
        adapter = _adapter(fake)
        await adapter.connect(SessionConfig(instructions="", tools=TOOLS))
        log = await drive(adapter, await user_speech(*utterances))
        await adapter.close()
    return fake, log


async def test_session_update_carries_the_tools_and_the_turn_detection_asked_for():
    async with OpenAIRealtimeFake() as fake:
        adapter = _adapter(fake)
        turns = TurnDetection(type="semantic_vad", eagerness="high")
        await adapter.connect(SessionConfig(instructions="Be brief.", tools=TOOLS, voice="cedar", turn_detection=turns))
        await adapter.close()
    assert not fake.invalid
    assert fake.handshakes[0].path == "/v1/realtime?model=gpt-realtime-2.1"
    session = fake.of_type("session.update")[0]["session"]
    assert session["tools"] == [{"type": "function", **tool} for tool in TOOLS]
    assert session["audio"]["input"]["turn_detection"] == {
        "type": "semantic_vad", "eagerness": "high", "create_response": True, "interrupt_response": True
    }
    assert session["audio"]["output"]["voice"] == "cedar" and session["tool_choice"] == "auto"
    assert adapter.metadata()["session_id"] and adapter.metadata()["resolved_model"] == "gpt-realtime-fake"


async def test_without_provider_turn_detection_the_adapter_commits_each_turn_itself():
    async with OpenAIRealtimeFake() as fake:
        adapter = _adapter(fake)
        await adapter.connect(SessionConfig(instructions="", tools=[], turn_detection=TurnDetection(type="none")))
        await drive(adapter, await user_speech("Hello there."), gap_ms=1000)
        await adapter.close()
    assert fake.of_type("session.update")[0]["session"]["audio"]["input"]["turn_detection"] is None
    kinds = [e["type"] for e in fake.received if e["type"] != "input_audio_buffer.append"]
    assert kinds == ["session.update", "input_audio_buffer.commit", "response.create"]


async def test_parallel_calls_are_all_answered_before_one_continuation():
    fake, log = await _exchange(PARALLEL, "Which rooms are free?")
    calls = log.of(ToolCallRequested)
    assert [c.name for c in calls] == ["get_team_roster", "list_rooms"] and calls[1].arguments == '{"day": "tue"}'
    kinds = [(e["type"], e.get("item", {}).get("call_id")) for e in fake.received if e["type"] != "input_audio_buffer.append"]
    assert kinds == [
        ("session.update", None),
        ("conversation.item.create", calls[0].call_id),
        ("conversation.item.create", calls[1].call_id),
        ("response.create", None),
    ]
    assert not fake.violations and log.of(AudioDelta)


async def test_the_calls_response_ends_just_before_its_continuation():
    fake, log = await _exchange(PARALLEL, "Which rooms are free?")
    calls_done = log.of(ResponseDone)[0]
    at = log.events.index(calls_done)
    # Held until the continuation: the very next event is the continuation's (so the runner never
    # sees the agent's turn end between the calls and the words that follow them).
    assert isinstance(log.events[at - 1], ToolCallRequested)
    after = log.events[at + 1]
    assert after.response_id is not None and after.response_id != calls_done.response_id


async def test_a_tool_error_is_sent_as_json_under_the_call_id():
    async with OpenAIRealtimeFake(PARALLEL[:1]) as fake:
        adapter = _adapter(fake)
        await adapter.connect(SessionConfig(instructions="", tools=TOOLS))
        await adapter.send_tool_result(ToolResult("call_x", "list_rooms", "no such day", is_error=True))
        await adapter.close()
    (output,) = fake.of_type("conversation.item.create")
    assert output["item"] == {"type": "function_call_output", "call_id": "call_x", "output": '{"error": "no such day"}'}


async def test_speech_over_playing_audio_truncates_at_the_reported_playback():
    async with OpenAIRealtimeFake([PolicyTurn(text="Let me read you the whole list of rooms we have free next week.")]) as fake:
        adapter = _adapter(fake)
        await adapter.connect(SessionConfig(instructions="", tools=[]))
        (question, barge) = await user_speech("What is free?", "Stop, stop, just tell me about Tuesday please.")
        log = await drive(adapter, [question], gap_ms=700)
        audio = log.of(AudioDelta)
        assert audio, "the agent answered"
        adapter.playback(PlaybackReport(audio[0].response_id, audio[0].item_id, played_ms=640))
        await drive(adapter, [barge], gap_ms=200, log=log)
        await adapter.close()
    assert log.of(SpeechStarted) and log.of(PlayoutCleared)
    (truncate,) = fake.of_type("conversation.item.truncate")
    assert truncate == {"type": "conversation.item.truncate", "item_id": audio[0].item_id, "content_index": 0, "audio_end_ms": 640}
    assert not fake.invalid


async def test_usage_of_every_response_is_normalized():
    fake, log = await _exchange(PARALLEL, "Which rooms are free?")
    usages = [d.usage for d in log.of(ResponseDone)]
    assert len(usages) == 2 and all(u is not None for u in usages)
    assert usages[0].input_audio_tokens == 40 and usages[0].cached_tokens == 32 and usages[1].output_audio_tokens > 0


async def test_user_audio_goes_out_as_base64_pcm16_at_24_khz():
    async with OpenAIRealtimeFake() as fake:
        adapter = _adapter(fake)
        await adapter.connect(SessionConfig(instructions="", tools=[]))
        pcm = (np.arange(480) % 100).astype(np.int16)
        await adapter.send_audio(AudioFrame(pcm, 0))
        await adapter.close()
    (append,) = fake.of_type("input_audio_buffer.append")
    assert np.array_equal(np.frombuffer(base64.b64decode(append["audio"]), dtype="<i2"), pcm)


async def test_the_fake_speaks_the_protocol_the_official_client_parses():
    """Contract check of the fake itself: the openai SDK connects and parses every event it sends."""
    async with OpenAIRealtimeFake(PARALLEL) as fake:
        client = AsyncOpenAI(api_key="sk-test", websocket_base_url=fake.url.removesuffix("/realtime"))
        async with client.realtime.connect(model="gpt-realtime") as connection:
            await connection.session.update(session={"type": "realtime", "instructions": "hi"})
            kinds = []
            async for event in connection:
                kinds.append(event.type)
                if event.type == "session.updated":
                    break
    assert kinds == ["session.created", "session.updated"] and not fake.invalid


@pytest.fixture(autouse=True)
def _no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

