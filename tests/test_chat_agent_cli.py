"""``apex-voice run --condition C0 --model chat:MODEL --endpoint URL`` through the local sandbox."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from harness.cli.main import app
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA
from tests.fakes.fake_chat_server import API_KEY, FakeChatServer, serve_fake_chat_in_thread

DEMO_TASK = "demo_warranty_advice_001"


def _run(*args: str):
    return CliRunner().invoke(app, ["run", *args])


def test_a_chat_model_runs_c0_through_the_sandbox_and_records_its_endpoint(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_CHAT_KEY", API_KEY)
    policy = load_task(DEMO_DATA / "tasks" / DEMO_TASK).policy
    with serve_fake_chat_in_thread(FakeChatServer(policy=policy)) as fake:
        result = _run(
            "--condition", "C0", "--model", "chat:fake-model", "--endpoint", fake.base_url,
            "--api-key-env", "FAKE_CHAT_KEY", "--data", str(DEMO_DATA), "--only", DEMO_TASK,
            "--sandbox", "local", "--repeats", "1", "--out", str(tmp_path),
        )
    assert result.exit_code == 0, result.output
    assert "chat:fake-model: 1/1 run complete, 1 passed, 0 infra errors" in result.output
    stored = json.loads((tmp_path / DEMO_TASK / "rep0" / "result.json").read_text())
    assert (stored["condition"], stored["pts"], stored["provider_model"]) == ("C0", 1, "fake-model")
    assert stored["adapter"]["endpoint"] == f"{fake.base_url}/chat/completions"
    assert stored["adapter"]["requests"] == len(fake.requests) and stored["adapter"]["usage"]["completion_tokens"] > 0
    assert (tmp_path / DEMO_TASK / "rep0" / stored["run_id"] / "events.jsonl").is_file()
    assert fake.requests and all(r["model"] == "fake-model" for r in fake.requests)


def test_condition_and_model_mismatches_are_usage_errors():
    text_in_c2 = _run("--model", "chat:gpt-x")
    assert text_in_c2.exit_code == 2 and "use --condition C0, or cascade:gpt-x" in text_in_c2.output
    voice_in_c0 = _run("--condition", "C0", "--model", "cascade:gpt-x")
    assert voice_in_c0.exit_code == 2 and "--condition C0 needs a text agent (chat:MODEL, oracle, noop)" in voice_in_c0.output
    endpoint_for_oracle = _run("--model", "oracle", "--endpoint", "http://127.0.0.1:1/v1")
    assert endpoint_for_oracle.exit_code == 2 and "takes no --endpoint or --provider-model" in endpoint_for_oracle.output
