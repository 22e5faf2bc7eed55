"""``apex-voice run --model twilio+ws://…``: a whole session through the CLI against a fake
telephony bot that reads its MCP endpoint from ``customParameters``, calls a task tool itself,
speaks a greeting (espeak, sent as 8 kHz μ-law) with a mark after it, and hangs up once the mark
comes back. The user hears the greeting through local ASR: there is no transcript on this wire.
"""

from __future__ import annotations

import asyncio
import json
import shutil

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from harness.audio import espeak
from harness.audio.frames import SAMPLE_RATE
from harness.audio.resample import resample_clip
from harness.cli.main import app
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA
from tests.fakes.loopback import PROVIDER_VOICE
from tests.fakes.threaded import in_thread
from tests.fakes.twilio_bot import BotCall, TwilioBotFake

pytestmark = pytest.mark.slow

TASK = "demo_hvac_inspection_001"
BUDGET_S = 60
#: Caller frames the bot listens to before it speaks (past the user's 9 s opening); after its
#: greeting it stays on the line until the caller answers (local ASR hears the greeting meanwhile,
#: off the frame: cold, at the tests' 8x clock, that is tens of seconds of media), or this many frames.
LISTEN_FRAMES = 500
LINGER_FRAMES = 6000


def _short_task(tmp_path):
    task_dir = tmp_path / "data" / TASK
    shutil.copytree(DEMO_DATA / "tasks" / TASK, task_dir)
    spec = yaml.safe_load((task_dir / "task.yaml").read_text())
    spec["time_budget_s"] = BUDGET_S
    (task_dir / "task.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return task_dir


def _answered(frames: list[np.ndarray]) -> bool:
    """A second of the caller's voice (frames well above line silence) since the greeting's mark."""
    return sum(1 for f in frames if np.abs(f.astype(np.int32)).mean() > 300) >= 50


def test_a_media_stream_bot_through_the_cli(tmp_path):
    task_dir = _short_task(tmp_path)
    greeting = load_task(task_dir).policy.turns[0].text
    clip = asyncio.run(espeak.synthesize([greeting], PROVIDER_VOICE))[greeting]
    line = np.clip(resample_clip(clip.pcm.astype(float), SAMPLE_RATE, 8000), -32768, 32767).astype(np.int16)

    async def bot(call: BotCall) -> None:
        tools = await call.tools()
        await tools.call("get_unit_record", {"entity_id": "KPB-RTU-03"})
        while len(fake.caller_audio) < LISTEN_FRAMES:
            await asyncio.sleep(0.05)
        await call.media(line, chunk_ms=40)
        await call.mark("greeting")
        assert await asyncio.wait_for(call.marks_back.get(), 60) == "greeting"
        marked, give_up = len(fake.caller_audio), len(fake.caller_audio) + LINGER_FRAMES
        while len(fake.caller_audio) < give_up and not _answered(fake.caller_audio[marked:]):
            await asyncio.sleep(0.05)
        await call.ws.close(1000)  # the caller answered: the bot hangs up

    fake = TwilioBotFake(bot)
    with in_thread(fake):
        model = fake.model
        result = CliRunner().invoke(app, ["run", "--model", fake.model, "--data", str(task_dir), "--sandbox", "local",
                                          "--repeats", "1", "--out", str(tmp_path / "out")])
    assert result.exit_code in (0, 1), result.output
    assert fake.violations == [] and fake.script_errors == []
    assert [m["event"] for m in fake.received[:2]] == ["connected", "start"]
    params = fake.of("start")[0]["start"]["customParameters"]
    assert set(params) == {"mcp_url", "mcp_authorization"} and params["mcp_authorization"].startswith("Bearer ")

    (row,) = [json.loads(p.read_text()) for p in (tmp_path / "out").glob("*/rep0/result.json")]
    assert row["model"] == model and row["error"] is None and row["tool_path"] == "mcp-agent"
    log = next((tmp_path / "out").glob("*/rep0/*/events.jsonl"))
    events = [json.loads(line) for line in log.read_text().splitlines()]
    signals = [e["payload"]["signal"] for e in events if e["type"] == "AGENT_SIGNAL"]
    assert signals == ["response_done", "call_ended"]
    # The bot's own call reached the task server, which recorded it.
    (call,) = [e["payload"] for e in events if e["type"] == "TOOL_CALL"]
    assert call["tool"] == "get_unit_record" and call["source"] == "server"
    # The user heard the greeting from the played audio, through ASR (the words tiny.en gets every
    # time out of espeak over 8 kHz mu-law: "quarterly" comes out "orderly" as often as not).
    ((heard_ms, heard),) = [(e["media_time_ms"], e["payload"]) for e in events if e["type"] == "AGENT_TEXT"]
    assert heard["source"] == "asr" and "ready to take down your readings" in heard["text"].lower(), heard
    # The user answers what it heard: its next turn starts once ASR has made the greeting out.
    greeting_end = next(e["media_time_ms"] for e in events if e["type"] == "AGENT_AUDIO_END")
    next_turn = [e["media_time_ms"] for e in events if e["type"] == "USER_AUDIO_START" and e["media_time_ms"] > greeting_end]
    assert next_turn and next_turn[0] >= heard_ms, (greeting_end, heard_ms, next_turn)
    (info,) = [e["payload"]["metadata"] for e in events if e["type"] == "ADAPTER_INFO"]
    assert info["marks"] == 1 and info["clears"] == 0 and info["media_in"] == -(-len(line) // 320)


def test_a_bot_flooding_audio_fails_at_the_bound(tmp_path):
    task_dir = _short_task(tmp_path)
    second = (8000 * np.sin(2 * np.pi * 440 * np.arange(8000) / 8000)).astype(np.int16)

    async def flood(call: BotCall) -> None:
        for _ in range(130):  # 130 s of speech at once: past the 120 s any agent may queue
            await call.media(second, chunk_ms=1000)

    with in_thread(TwilioBotFake(flood)) as fake:
        result = CliRunner().invoke(app, ["run", "--model", fake.model, "--data", str(task_dir), "--sandbox", "local",
                                          "--repeats", "1", "--out", str(tmp_path / "out")])
    assert result.exit_code in (0, 1), result.output
    (row,) = [json.loads(p.read_text()) for p in (tmp_path / "out").glob("*/rep0/result.json")]
    assert row["error"] is None and row["pts"] == 0  # the agent's failure, scored
    log = next((tmp_path / "out").glob("*/rep0/*/events.jsonl"))
    failures = [json.loads(line)["payload"] for line in log.read_text().splitlines() if '"AGENT_FAILURE"' in line]
    assert failures and failures[0]["kind"] == "over_limit", failures
