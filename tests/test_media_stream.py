"""The Twilio media-stream agent kind on the wire: the harness plays the phone network to a fake
bot that speaks the documented Twilio Media Streams shapes.

The adapter is driven as the duplex runner drives it (20 ms frames, polls, playback reports), so
each behaviour is checked where it happens: the call's opening, the caller's audio, the bot's
speech cut into responses, ``clear`` mid-utterance, marks answered once their audio has played,
out-of-order and malformed frames, hang-up and failure.
"""

from __future__ import annotations

import asyncio
import warnings

import numpy as np
import pytest

from harness.agents.media_stream import RESPONSE_GAP_MS, TwilioMediaStreamAdapter, websocket_url
from harness.agents.realtime import (
    AdapterError,
    AudioDelta,
    CallEnded,
    McpEndpoint,
    PlaybackReport,
    PlayoutCleared,
    ResponseDone,
    SessionConfig,
)
from harness.agents.registry import get_model
from harness.audio.frames import FRAME_SAMPLES, AudioFrame, samples_to_ms
from harness.audio.g711 import pcm16_to_ulaw, ulaw_to_pcm16
from harness.blame.codes import AdapterErrorCode
from tests.fakes.twilio_bot import BotCall, TwilioBotFake, tone

TOKEN = "Bearer agent-token-123"


def _config() -> SessionConfig:
    return SessionConfig(instructions="SECRET INSTRUCTIONS", tools=[], tool_mode="native",
                         mcp=McpEndpoint(url="http://127.0.0.1:9/mcp", headers={"Authorization": TOKEN}))


class _Line:
    """The runner's side of one call: frames on the media clock, events, playback reports."""

    def __init__(self, adapter: TwilioMediaStreamAdapter) -> None:
        self.adapter = adapter
        self.t = 0
        self.events: list[object] = []
        self.played: dict[str, int] = {}

    async def frames(self, count: int, *, play: bool = True, pcm: np.ndarray | None = None) -> None:
        for _ in range(count):
            await self.adapter.send_audio(AudioFrame(pcm if pcm is not None else np.zeros(FRAME_SAMPLES, np.int16), self.t))
            await asyncio.sleep(0.002)  # the bot's messages arrive
            for event in self.adapter.poll_events():
                self.events.append(event)
                if isinstance(event, AudioDelta) and event.response_id is not None:
                    self.played.setdefault(event.response_id, 0)
            if play:  # everything queued plays at once: the runner reports what played
                for response_id in self.played:
                    queued = sum(len(e.pcm) // 2 for e in self.events
                                 if isinstance(e, AudioDelta) and e.response_id == response_id)
                    self.adapter.playback(PlaybackReport(response_id, None, samples_to_ms(queued)))
            self.t += 20

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]


async def _call(script, **fake_options):
    fake = TwilioBotFake(script, **fake_options)
    await fake.__aenter__()
    adapter = get_model(fake.model).create_adapter()
    assert isinstance(adapter, TwilioMediaStreamAdapter)
    await adapter.connect(_config())
    return fake, adapter, _Line(adapter)


async def _hang_up(fake: TwilioBotFake, adapter: TwilioMediaStreamAdapter) -> None:
    await adapter.close()
    await fake.__aexit__(None, None, None)


def test_the_model_key_names_the_websocket_and_native_tools():
    spec = get_model("twilio+wss://bots.example:443/stream")
    assert spec.tool_modes == ("native",) and spec.agent_kind == "remote_agent" and not spec.privileged
    assert spec.create_adapter().endpoint == "wss://bots.example:443/stream"
    assert websocket_url("twilio+ws://h:1/p") == "ws://h:1/p"


def test_g711_bytes_are_the_reference_encoders():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import audioop  # the reference G.711 (CPython's, and Pipecat's through audioop-lts)
    everything = np.arange(-32768, 32768, dtype=np.int16)
    assert pcm16_to_ulaw(everything) == audioop.lin2ulaw(everything.tobytes(), 2)
    codes = bytes(range(256))
    assert np.array_equal(ulaw_to_pcm16(codes), np.frombuffer(audioop.ulaw2lin(codes, 2), dtype=np.int16))


async def test_the_call_opens_as_twilio_opens_it_and_streams_the_caller():
    fake, adapter, line = await _call(None)
    t = np.arange(FRAME_SAMPLES) / 24_000
    await line.frames(10, pcm=(6000 * np.sin(2 * np.pi * 300 * t)).astype(np.int16))
    await _hang_up(fake, adapter)
    assert fake.violations == []
    assert [m["event"] for m in fake.received] == ["connected", "start", *["media"] * 10, "stop"]
    start = fake.of("start")[0]["start"]
    # The bot is told where the tools are and how to authenticate, and nothing else of the task.
    assert start["customParameters"] == {"mcp_url": "http://127.0.0.1:9/mcp", "mcp_authorization": TOKEN}
    assert start["callSid"].startswith("CA") and start["streamSid"].startswith("MZ")
    assert "SECRET" not in str(fake.received)
    assert [m["media"]["timestamp"] for m in fake.of("media")] == [str(20 * n) for n in range(10)]
    # The tone survives the line: 8 kHz μ-law at the caller's level.
    heard = np.concatenate(fake.caller_audio[2:]).astype(float)
    assert 3000 < np.sqrt(np.mean(heard**2)) < 5000


async def test_bot_speech_is_queued_at_24k_and_ends_after_a_gap():
    async def script(bot: BotCall) -> None:
        await bot.media(np.zeros(800, np.int16))  # line silence before it speaks: not queued
        await bot.media(tone(400), chunk_ms=40)  # Pipecat's chunks

    fake, adapter, line = await _call(script)
    await line.frames(5)
    audio = line.of(AudioDelta)
    assert len(audio) == 10 and {len(d.pcm) for d in audio} == {2 * 960}  # 40 ms at 24 kHz each
    assert {d.response_id for d in audio} == {"tw0001"} and not line.of(ResponseDone)
    await line.frames(RESPONSE_GAP_MS // 20 + 1)
    assert [(d.response_id, d.status) for d in line.of(ResponseDone)] == [("tw0001", "completed")]
    await _hang_up(fake, adapter)
    assert adapter.metadata()["media_in"] == 15  # 5 quiet frames, 10 spoken


async def test_clear_mid_utterance_drops_the_queue_and_answers_its_marks():
    async def script(bot: BotCall) -> None:
        await bot.media(tone(1000))
        await bot.mark("sentence-1")
        await asyncio.sleep(0.05)
        await bot.clear()  # the caller barged in: the rest is dropped
        await bot.media(tone(200, hz=600))  # and it speaks again

    fake, adapter, line = await _call(script)
    await line.frames(3, play=False)  # nothing has played yet
    await line.frames(40, play=False)
    cleared = [e for e in line.events if isinstance(e, PlayoutCleared | ResponseDone)]
    assert cleared[:2] == [PlayoutCleared("tw0001"), ResponseDone("tw0001", status="cancelled")]
    # The mark's audio will never play: it is answered at once, as Twilio does.
    assert fake.of("mark") and fake.of("mark")[0]["mark"] == {"name": "sentence-1"}
    assert {d.response_id for d in line.of(AudioDelta)} == {"tw0001", "tw0002"}
    await _hang_up(fake, adapter)
    assert fake.violations == []


async def test_a_mark_is_answered_once_when_the_audio_before_it_has_played():
    async def script(bot: BotCall) -> None:
        await bot.mark("before-anything")  # out of order: no audio yet, answered at once
        await bot.media(tone(300))
        await bot.mark("end-of-answer")

    fake, adapter, line = await _call(script)
    await line.frames(5, play=False)
    assert [m["mark"]["name"] for m in fake.of("mark")] == ["before-anything"]
    for response_id in line.played:  # 200 of its 300 ms have played
        adapter.playback(PlaybackReport(response_id, None, 200))
    await line.frames(1, play=False)
    assert [m["mark"]["name"] for m in fake.of("mark")] == ["before-anything"]
    await line.frames(3)  # all of it plays
    await line.frames(3)
    assert [m["mark"]["name"] for m in fake.of("mark")] == ["before-anything", "end-of-answer"]
    await _hang_up(fake, adapter)
    assert fake.violations == []


@pytest.mark.parametrize("raw, problem", [
    ("not json", "is not JSON"),
    ('{"event": "media", "streamSid": "MZ0", "media": {"payload": "AAAA"}}', "streamSid"),
    ('{"event": "media", "streamSid": "{sid}", "media": {"payload": "%%%"}}', "Error"),
    ('{"event": "start", "streamSid": "{sid}"}', "does not fit"),
    ('{"event": "mark", "streamSid": "{sid}"}', "does not fit"),
])
async def test_a_malformed_frame_is_the_bots_failure(raw, problem):
    async def script(bot: BotCall) -> None:
        await bot.send(raw.replace("{sid}", bot.stream_sid))

    fake, adapter, line = await _call(script)
    await line.frames(3)
    (error,) = line.of(AdapterError)
    assert error.code == AdapterErrorCode.MALFORMED and problem in error.message
    await _hang_up(fake, adapter)


async def test_hanging_up_is_a_call_ended_and_a_dropped_socket_a_failure():
    async def hang_up(bot: BotCall) -> None:
        await bot.media(tone(100))
        await bot.ws.close(1000)

    fake, adapter, line = await _call(hang_up)
    await line.frames(3)
    assert line.of(CallEnded) and not line.of(AdapterError)
    await _hang_up(fake, adapter)

    async def crash(bot: BotCall) -> None:
        await bot.ws.close(1011, "pipeline crashed")

    fake, adapter, line = await _call(crash)
    await line.frames(3)
    (error,) = line.of(AdapterError)
    assert error.code == AdapterErrorCode.AGENT_FAILED and "media-stream bot" in error.message and line.of(CallEnded)
    await _hang_up(fake, adapter)


def test_a_dead_bot_endpoint_fails_fast_with_one_line(tmp_path):
    import socket

    from typer.testing import CliRunner

    from harness.cli.main import app
    from tests.conftest import DEMO_DATA

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = CliRunner().invoke(app, ["run", "--model", f"twilio+ws://127.0.0.1:{port}/media", "--data",
                                      str(DEMO_DATA / "tasks" / "demo_hvac_inspection_001"), "--sandbox", "local",
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: twilio+ws://") and "connection refused" in line


async def test_marks_piling_up_past_the_bound_are_the_bots_failure():
    from harness.agents.media_stream import MARKS_PENDING_LIMIT
    from harness.blame.codes import AdapterErrorCode

    async def script(bot: BotCall) -> None:
        await bot.media(tone(200))
        for n in range(MARKS_PENDING_LIMIT + 1):  # none can be answered: nothing has played
            await bot.mark(f"m{n}")

    fake, adapter, line = await _call(script)
    for _ in range(50):
        await line.frames(1, play=False)
        if line.of(AdapterError):
            break
    (error,) = line.of(AdapterError)
    assert error.code == AdapterErrorCode.OVER_LIMIT and line.of(CallEnded)
    await _hang_up(fake, adapter)
