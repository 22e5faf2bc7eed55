"""``apex-voice run``: usage errors, infrastructure exit code, and a real oracle campaign."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager

import pytest
from typer.testing import CliRunner

from harness.agents import registry
from harness.blame.errors import SessionInfraError
from harness.cli import campaign_request
from harness.cli.main import app
from sandbox.backend import SandboxBackend
from tests.conftest import DEMO_DATA

DEMO_TASK = "demo_warranty_advice_001"


def _run(*args: str):
    return CliRunner().invoke(app, ["run", *args])


def test_unknown_model_lists_the_known_ones():
    result = _run("--model", "gpt-nothing")
    assert result.exit_code == 2
    assert "unknown model 'gpt-nothing'; known models: oracle, native-oracle, noop" in result.output


def test_bad_user_audio_is_a_usage_error():
    result = _run("--user-audio", "telepathy")
    assert result.exit_code == 2
    assert "telepathy" in result.output


def test_missing_provider_key_names_the_variables(monkeypatch):
    spec = registry.ModelSpec(key="live-x", display_name="Live-X", provider="X", adapter="harness.agents.noop_voice:NoOpVoiceAgent",
                              required_env=("APEX_TEST_X_KEY", "APEX_TEST_X_TOKEN"))
    monkeypatch.setitem(registry.MODELS, "live-x", spec)
    monkeypatch.delenv("APEX_TEST_X_KEY", raising=False)
    monkeypatch.delenv("APEX_TEST_X_TOKEN", raising=False)
    result = _run("--model", "live-x")
    assert result.exit_code == 2
    assert "Live-X needs APEX_TEST_X_KEY or APEX_TEST_X_TOKEN." in result.output


def test_prerendered_audio_required_but_absent_is_a_usage_error(toy_form, tmp_path):
    result = _run("--data", str(toy_form), "--user-audio", "prerendered", "--out", str(tmp_path))
    assert result.exit_code == 2
    assert "prerendered" in result.output and "render-audio" in result.output
    assert not (tmp_path / "campaign.json").exists()


class _BrokenBackend(SandboxBackend):
    """A sandbox backend whose sandboxes never start (a missing image: not transient)."""

    name = "broken"

    def start(self, public_dir, run_id, *, task_id):
        @asynccontextmanager
        async def never():
            raise SessionInfraError(f"no sandbox image for {task_id}", transient=False)
            yield

        return never()


def test_cells_left_empty_by_infrastructure_exit_1(monkeypatch, tmp_path):
    monkeypatch.setattr(campaign_request, "get_backend", lambda name: _BrokenBackend())
    result = _run("--data", str(DEMO_DATA), "--only", DEMO_TASK, "--out", str(tmp_path))
    assert result.exit_code == 1, result.output
    assert "sandbox: broken" in result.output
    assert f"{DEMO_TASK} rep0: left empty after 1 attempt(s): attempt 1: SessionInfraError: no sandbox image" in result.output
    assert "oracle: 0/1 run complete, 0 passed, 1 infra error" in result.output
    assert not (tmp_path / DEMO_TASK / "rep0" / "result.json").exists()
    assert json.loads((tmp_path / "campaign.json").read_text())["sandbox"] == "broken"


@pytest.mark.parametrize(("model", "pts"), [("oracle", 1), ("noop", 0)])
def test_a_campaign_through_the_local_sandbox_and_its_resume(tmp_path, model, pts):
    args = ["--model", model, "--data", str(DEMO_DATA), "--only", DEMO_TASK, "--sandbox", "local", "--out", str(tmp_path)]
    first = _run(*args)
    assert first.exit_code == 0, first.output
    assert "sandbox: local" in first.output
    assert f"{model}: 1/1 run complete, {pts} passed, 0 infra errors -> {tmp_path}" in first.output
    stored = json.loads((tmp_path / DEMO_TASK / "rep0" / "result.json").read_text())
    assert (stored["model"], stored["pts"], stored["error"], stored["sandbox"]["backend"]) == (model, pts, None, "local")
    assert (tmp_path / DEMO_TASK / "rep0" / stored["run_id"] / "events.jsonl").is_file()
    assert stored["latency"]["user_turns"] >= 1
    if pts == 0:
        assert stored["explain"], "a failed run explains itself"
        assert f"{DEMO_TASK} rep0: " in first.output

    again = _run(*args, "--json")
    assert again.exit_code == 0
    (line,) = [row for row in again.stdout.splitlines() if row.startswith("{")]
    assert json.loads(line)["run_id"] == stored["run_id"]
