"""The example Pipecat bot packaged as an image (``examples/pipecat-bot/Dockerfile``), run per session
as ``twilio+container:IMAGE --sandbox docker``: hardened like every agent container, on the session's
private network, with no egress.

Its LLM is therefore inside the container too: the test image adds the policy "brain" (the fake
chat server, :mod:`tests.fakes.pipecat_container_brain`) beside the unchanged bot, and the brain
gets the task's policy through ``run --adapter-env`` — the one way a user's image is given a
variable. Through the CLI, in C2, at wall time: the bot calls the task's tools over MCP from inside
the container (the server's record), is heard through ASR, and clears its queue on barge-ins.
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.tasks.loader import load_task
from tests.fakes.pipecat_bot_image import TEST_REPOSITORY, build_pipecat_bot_image
from tests.test_pipecat_bot import _short_task

pytestmark = [
    pytest.mark.pipecat,  # deselected by `make test-all` (CI): the bot's image holds ~400 MB of wheels
    pytest.mark.docker,
    pytest.mark.slow,
    pytest.mark.wall_clock,
]


@pytest.fixture(autouse=True)
def _wall_clock(monkeypatch):
    monkeypatch.setenv("APEX_VOICE_CLOCK_SPEED", "1")


def test_the_pipecat_bot_image_does_the_task_from_its_own_container(tmp_path, docker_engine, monkeypatch):
    image = build_pipecat_bot_image(docker_engine)
    task_dir = _short_task(tmp_path)
    policy = load_task(task_dir).policy
    assert policy is not None
    monkeypatch.setenv("BRAIN_POLICY", policy.model_dump_json())
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", "--model", f"twilio+container:{image}", "--adapter-env", "BRAIN_POLICY",
                                      "--data", str(task_dir), "--sandbox", "docker", "--repeats", "1",
                                      "--out", str(out)])
    assert result.exit_code in (0, 1), result.output

    (row,) = [json.loads(p.read_text()) for p in out.glob("*/rep0/result.json")]
    assert row["error"] is None and row["tool_path"] == "mcp-agent" and not row["privileged"], row
    container = row["sandbox"]["agent_container"]
    assert container["image"] == image and container["url"].endswith(":8765/media-stream"), container
    events = [json.loads(line) for line in next(out.glob("*/rep0/*/events.jsonl")).read_text().splitlines()]
    # Pipecat's MCP client reached the task server across the session network, in the policy's order.
    calls = [e["payload"] for e in events if e["type"] == "TOOL_CALL"]
    assert [c["tool"] for c in calls][:3] == ["get_unit_record", "kb_search", "update_inspection"], calls
    assert all(c["source"] == "server" for c in calls)
    heard = set(re.findall(r"[a-z]{5,}", " ".join(e["payload"]["text"].lower() for e in events
                                                  if e["type"] == "AGENT_TEXT" and e["payload"]["source"] == "asr")))
    said = set(re.findall(r"[a-z]{5,}", " ".join(t.text.lower() for t in policy.turns[:4])))
    assert len(heard & said) >= 3, (heard, said)
    assert any(e["type"] == "AGENT_SIGNAL" and e["payload"]["signal"] == "playout_cleared" for e in events)
    assert not docker_engine.containers.list(all=True, filters={"ancestor": image})  # removed with its session
    assert image.startswith(TEST_REPOSITORY)

