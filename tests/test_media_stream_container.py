"""A telephony bot packaged as an image (``--model twilio+container:IMAGE --sandbox docker``): it runs
in its own hardened container on the session's network and is reached over Twilio Media Streams.

The bot (``tests/fakes/twilio_container_bot.py``, built over the native-oracle image) gets its MCP
endpoint from ``customParameters`` — the session network's address of the task server, which is
the only thing it can reach — looks up the unit named by the one variable passed with
``--adapter-env``, speaks a greeting with a mark, and hangs up once the caller answers; a message breaking Twilio's documented shapes would make it hang up with 4000.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from tests.fakes.twilio_bot_image import BOT_REPOSITORY, build_twilio_bot_image
from tests.test_media_stream_cli import _short_task

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_a_telephony_bot_image_runs_in_its_own_container_on_the_session_network(tmp_path, docker_engine, monkeypatch):
    image = build_twilio_bot_image(docker_engine)
    task_dir = _short_task(tmp_path)
    out = tmp_path / "out"
    monkeypatch.setenv("BOT_UNIT_ID", "KPB-RTU-03")  # the bot reads it: given by --adapter-env alone
    result = CliRunner().invoke(app, ["run", "--model", f"twilio+container:{image}", "--adapter-env", "BOT_UNIT_ID",
                                      "--data", str(task_dir), "--sandbox", "docker", "--repeats", "1",
                                      "--out", str(out)])
    assert result.exit_code in (0, 1), result.output

    (row,) = [json.loads(p.read_text()) for p in out.glob("*/rep0/result.json")]
    assert row["error"] is None and row["tool_path"] == "mcp-agent" and not row["privileged"], row
    container = row["sandbox"]["agent_container"]
    assert container["image"] == image and container["url"].endswith(":8765/media-stream"), container
    assert container["mem_limit"] == "512m" and container["ended"]["status"] == "running", container  # alive to the end
    events = [json.loads(line) for line in next(out.glob("*/rep0/*/events.jsonl")).read_text().splitlines()]
    assert not [e for e in events if e["type"] == "AGENT_ERROR"], "the bot found the harness's messages malformed"
    signals = [e["payload"]["signal"] for e in events if e["type"] == "AGENT_SIGNAL"]
    assert signals[-1] == "call_ended"  # its own hang-up (1000), not a failure
    # Its call went from inside the container to the task server on the session's network.
    (call,) = [e["payload"] for e in events if e["type"] == "TOOL_CALL"]
    assert call["tool"] == "get_unit_record" and call["source"] == "server"
    assert call["args"] == {"entity_id": "KPB-RTU-03"}
    # The user heard its greeting from the audio that played.
    heard = [e["payload"] for e in events if e["type"] == "AGENT_TEXT"]
    assert heard and heard[0]["source"] == "asr" and "readings" in heard[0]["text"].lower(), heard
    (info,) = [e["payload"]["metadata"] for e in events if e["type"] == "ADAPTER_INFO"]
    assert info["marks"] == 1 and info["clears"] == 0
    assert not docker_engine.containers.list(all=True, filters={"ancestor": image})  # removed with its session
    assert image.startswith(BOT_REPOSITORY)


def test_a_bot_killed_by_its_memory_limit_fails_and_the_record_says_why(tmp_path, docker_engine, monkeypatch):
    """It only closes its socket (1006): the container's state, read as it is removed, says OOM."""
    image = build_twilio_bot_image(docker_engine)
    out = tmp_path / "out"
    monkeypatch.setenv("BOT_UNIT_ID", "KPB-RTU-03")
    monkeypatch.setenv("BOT_BALLAST_MB", "600")
    result = CliRunner().invoke(app, ["run", "--model", f"twilio+container:{image}", "--adapter-env", "BOT_UNIT_ID",
                                      "--adapter-env", "BOT_BALLAST_MB", "--agent-memory", "256m",
                                      "--data", str(_short_task(tmp_path)), "--sandbox", "docker", "--repeats", "1",
                                      "--out", str(out)])
    assert result.exit_code in (0, 1), result.output

    (row,) = [json.loads(p.read_text()) for p in out.glob("*/rep0/result.json")]
    assert row["error"] is None and row["reason"] == "agent_failure" and row["pts"] == 0, row  # scored, not retried
    container = row["sandbox"]["agent_container"]
    assert container["mem_limit"] == "256m"
    assert container["ended"]["oom_killed"] is True and container["ended"]["status"] == "exited", container
    events = [json.loads(line) for line in next(out.glob("*/rep0/*/events.jsonl")).read_text().splitlines()]
    (failure,) = [e["payload"] for e in events if e["type"] == "AGENT_FAILURE"]
    assert failure["kind"] == "closed"
