"""``apex-voice run --model ws://…``: any OpenAI-Realtime server, here the protocol fake, end to end.

The task is the demo HVAC inspection with its time budget cut to just past its first barge-in, so
the session (on the realtime clock) stays short while covering tools, audio and truncation.
"""

from __future__ import annotations

import base64
import json
import shutil

import pytest
import yaml
from typer.testing import CliRunner

from harness.cli.main import app
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA
from tests.fakes.openai_realtime_fake import OpenAIRealtimeFake
from tests.fakes.threaded import in_thread

pytestmark = pytest.mark.slow

TASK = "demo_hvac_inspection_001"
#: The user barges in about 40 s into this task (with the reference policy's timing).
BUDGET_S = 52


def _short_task(tmp_path):
    task_dir = tmp_path / "data" / TASK
    shutil.copytree(DEMO_DATA / "tasks" / TASK, task_dir)
    spec_path = task_dir / "task.yaml"
    spec = yaml.safe_load(spec_path.read_text())
    spec["time_budget_s"] = BUDGET_S
    spec_path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return task_dir


@pytest.mark.wall_clock  # hearing waits on ASR of the played audio: at 8x a cold decode is seconds of media
def test_run_against_an_openai_realtime_server_by_url(tmp_path):
    task_dir = _short_task(tmp_path)
    bundle = load_task(task_dir)
    with in_thread(OpenAIRealtimeFake(bundle.policy.turns)) as fake:
        url = fake.url
        result = CliRunner().invoke(
            app, ["run", "--model", url, "--data", str(task_dir), "--sandbox", "local", "--repeats", "1", "--out", str(tmp_path / "out")]
        )
    assert result.exit_code == 0, result.output
    assert not fake.invalid and not fake.violations
    assert fake.handshakes[0].path == "/v1/realtime" and "Authorization" not in fake.handshakes[0].headers

    (update,) = fake.of_type("session.update")
    session = update["session"]
    declared = yaml.safe_load((task_dir / "tools" / "tool_spec.yaml").read_text())["tools"]
    assert [t["name"] for t in session["tools"]] == [t["name"] for t in declared]
    assert session["audio"]["input"]["format"] == {"type": "audio/pcm", "rate": 24000}
    assert session["audio"]["input"]["turn_detection"]["type"] == "server_vad"

    appends = fake.of_type("input_audio_buffer.append")
    assert {len(base64.b64decode(a["audio"])) for a in appends} == {960}  # 20 ms of PCM16 at 24 kHz
    assert len(appends) * 20 >= BUDGET_S * 1000 - 100

    calls = {e["call_id"]: e["name"] for e in fake.sent_of_type("response.function_call_arguments.done")}
    outputs = [e["item"]["call_id"] for e in fake.of_type("conversation.item.create")]
    assert calls and sorted(outputs) == sorted(calls)

    # The fake heard the user talk over its audio, said so, and the client truncated the item at
    # the milliseconds played: fewer than the item holds.
    (truncate,) = fake.of_type("conversation.item.truncate")
    item_ms = sum(
        len(base64.b64decode(e["delta"])) // 48
        for e in fake.sent_of_type("response.output_audio.delta")
        if e["item_id"] == truncate["item_id"]
    )
    assert 0 < truncate["audio_end_ms"] < item_ms

    (row,) = [json.loads(p.read_text()) for p in (tmp_path / "out").glob("*/rep0/result.json")]
    assert row["model"] == url and row["error"] is None
