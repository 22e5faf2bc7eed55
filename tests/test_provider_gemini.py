"""The Gemini Live adapter against its protocol fake: setup, 16 kHz audio, tool replies, usage, barge-ins."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from harness.agents.providers.gemini_live import GeminiLiveAdapter
from harness.agents.realtime import (
    AudioDelta,
    PlayoutCleared,
    ResponseDone,
    SessionConfig,
    ToolCallRequested,
    ToolResult,
)
from harness.audio.frames import FRAME_SAMPLES, AudioFrame
from harness.tasks.models import PolicyToolCall, PolicyTurn
from tests.fakes.driver import drive, user_speech
from tests.fakes.gemini_live_fake import GEMINI_PATH, GeminiLiveFake

KEY = "AIza-test"
TOOLS = [
    {"name": "get_team_roster", "description": "Team members.", "parameters": {"type": "object", "properties": {}, "additionalProperties": False}},
    {"name": "list_rooms", "description": "Free rooms.", "parameters": {"type": "object", "properties": {"day": {"type": "string"}}}},
]
PARALLEL = [
    PolicyTurn(text="Two rooms are free on Tuesday.", tool_calls=[PolicyToolCall(name="get_team_roster"), PolicyToolCall(name="list_rooms", args={"day": "tue"})]),
    PolicyTurn(text="Booked. Anything else?"),
]


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", KEY)


async def _connected(fake: GeminiLiveFake, **config) -> GeminiLiveAdapter:
    adapter = GeminiLiveAdapter(endpoint=fake.url, model="gemini-live-test")
    await adapter.connect(SessionConfig(instructions="Be brief.", tools=TOOLS, **config))
    return adapter


async def test_setup_declares_the_tools_with_their_json_schema_and_interrupting_activity():
    async with GeminiLiveFake(api_key=KEY) as fake:
        adapter = await _connected(fake, voice="Kore")
        await adapter.close()
    assert not fake.invalid
    assert fake.handshakes[0].path == GEMINI_PATH and fake.handshakes[0].headers["x-goog-api-key"] == KEY
    (setup,) = fake.setups
    assert setup["model"] == "models/gemini-live-test"
    declared = setup["tools"][0]["functionDeclarations"]
    assert [(d["name"], d["parametersJsonSchema"]) for d in declared] == [(t["name"], t["parameters"]) for t in TOOLS]
    assert setup["realtimeInputConfig"]["activityHandling"] == "START_OF_ACTIVITY_INTERRUPTS"
    assert setup["realtimeInputConfig"]["automaticActivityDetection"]["disabled"] is False
    assert setup["generationConfig"]["speechConfig"]["voiceConfig"]["prebuiltVoiceConfig"]["voiceName"] == "Kore"
    assert adapter.metadata()["session_id"]


async def test_user_audio_goes_out_at_16_khz_through_the_polyphase_filter():
    async with GeminiLiveFake(api_key=KEY) as fake:
        adapter = await _connected(fake)
        t = np.arange(FRAME_SAMPLES * 50) / 24000
        tone = (np.sin(2 * np.pi * 440 * t) * 8000).astype(np.int16)
        for index in range(50):
            await adapter.send_audio(AudioFrame(tone[index * FRAME_SAMPLES : (index + 1) * FRAME_SAMPLES], index * 20))
        await adapter.close()
    blobs = [m["realtimeInput"]["audio"] for m in fake.received_with("realtimeInput")]
    assert {b["mimeType"] for b in blobs} == {"audio/pcm;rate=16000"}
    out = np.concatenate([np.frombuffer(base64.b64decode(b["data"]), dtype="<i2") for b in blobs])
    assert len(out) == 50 * 320  # 20 ms at 16 kHz per frame
    spectrum = np.abs(np.fft.rfft(out[1600:].astype(float)))
    assert abs(np.argmax(spectrum) * 16000 / len(out[1600:]) - 440) < 5  # the tone survives, in tune


async def test_parallel_calls_get_one_tool_response_with_ids_names_and_scheduling():
    async with GeminiLiveFake(PARALLEL, api_key=KEY) as fake:
        adapter = await _connected(fake)
        log = await drive(adapter, await user_speech("Which rooms are free?", "Book Tuesday."))
        await adapter.close()
    calls = log.of(ToolCallRequested)
    (reply,) = fake.received_with("toolResponse")
    responses = reply["toolResponse"]["functionResponses"]
    assert [(r["id"], r["name"]) for r in responses] == [(c.call_id, c.name) for c in calls]
    assert {r["scheduling"] for r in responses} == {"INTERRUPT"} and responses[0]["response"] == {"output": {"ok": True}}
    assert not fake.violations and not fake.invalid and log.of(AudioDelta)


async def test_usage_is_reported_per_turn_from_the_cumulative_counts():
    async with GeminiLiveFake(PARALLEL, api_key=KEY) as fake:
        adapter = await _connected(fake)
        log = await drive(adapter, await user_speech("Which rooms are free?", "Book Tuesday."))
        await adapter.close()
    usages = [d.usage for d in log.of(ResponseDone)]
    assert [(u.input_tokens, u.output_tokens, u.output_audio_tokens) for u in usages] == [(100, 25, 25), (100, 25, 25)]


async def test_a_tool_error_is_sent_as_an_error_response():
    async with GeminiLiveFake(api_key=KEY) as fake:
        adapter = await _connected(fake)
        await adapter._on_message({"toolCall": {"functionCalls": [{"id": "fc_9", "name": "list_rooms", "args": {"day": "sun"}}]}})
        (call,) = adapter.poll_events()
        await adapter.send_tool_result(ToolResult(call.call_id, call.name, {"error": "no such day"}, is_error=True))
        await adapter.close()
    (reply,) = fake.received_with("toolResponse")
    assert reply["toolResponse"]["functionResponses"] == [
        {"id": "fc_9", "name": "list_rooms", "response": {"error": {"error": "no such day"}}, "scheduling": "INTERRUPT"}
    ]


async def test_the_model_hearing_a_barge_in_drops_its_unplayed_audio():
    long_turn = [PolicyTurn(text="Let me read you the whole list of rooms we have free next week, one by one.")]
    async with GeminiLiveFake(long_turn, api_key=KEY) as fake:
        adapter = await _connected(fake)
        question, barge = await user_speech("What is free?", "Stop, stop, just tell me about Tuesday please.")
        log = await drive(adapter, [question, barge], gap_ms=600)
        await adapter.close()
    assert fake.sent_with("serverContent", "interrupted")
    assert log.of(PlayoutCleared)
    assert [d.status for d in log.of(ResponseDone)][-1] == "interrupted"
