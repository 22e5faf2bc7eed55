"""What the CLI prints is whole and says what it means: ids never cut at 80 columns, no emoji codes,
units that match their labels, every model family listed."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from harness.agents.registry import MODELS
from harness.cli.main import app
from tests.conftest import DEMO_DATA
from tests.fakes.fake_chat_server import API_KEY, FakeChatServer, serve_fake_chat_in_thread

TASK_DIR = DEMO_DATA / "tasks" / "demo_benefits_enrollment_001"


@pytest.fixture(autouse=True)
def _eighty_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    for name in ("OPENAI_API_KEY", "XAI_API_KEY", "STEPFUN_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_models_lists_every_key_credential_and_family_whole_at_80_columns():
    result = _invoke("models")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    words = set(result.output.replace("│", " ").split())
    for spec in MODELS.values():
        assert spec.key in words, spec.key
        assert all(var in words for var in spec.required_env), spec.required_env
    assert {"chat:MODEL", "cascade:MODEL"} <= words
    assert "container:IMAGE" in result.output and "container:HOST" not in result.output
    assert "…" not in result.output


def test_models_json_lists_the_chat_and_cascade_families():
    result = _invoke("models", "--json")
    rows = [json.loads(line) for line in result.output.splitlines()]
    families = {row["key"]: row for row in rows if row["family"]}
    assert set(families) == {"chat:MODEL", "cascade:MODEL"}
    assert "--endpoint" in families["chat:MODEL"]["notes"]
    assert not any(row["family"] for row in rows if row["key"] in MODELS)


@pytest.mark.slow
def test_validate_keeps_every_task_id_whole_at_80_columns():
    result = _invoke("validate", "--data", str(DEMO_DATA), "--only", "demo_printer_fleet_troubleshoot_001",
                     "--only", "demo_benefits_enrollment_001")
    assert result.exit_code == 0, result.output
    words = result.output.split()
    assert "demo_printer_fleet_troubleshoot_001" in words and "demo_benefits_enrollment_001" in words


@pytest.mark.slow
def test_sandbox_probe_names_its_timings_in_the_unit_it_prints():
    result = _invoke("sandbox", "probe", "--backend", "local", "--task", str(TASK_DIR))
    assert result.exit_code == 0, result.output
    (timings,) = [line for line in result.output.splitlines() if line.startswith("timings")]
    assert "start_to_ready " in timings and " ms" in timings and "_s " not in timings
    assert "mcp_list_tools " in timings and "/mcp lists other tools" not in result.output  # the agent's door, too


@pytest.mark.slow
def test_a_chat_model_key_prints_as_typed_not_as_an_emoji(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_CHAT_KEY", API_KEY)
    with serve_fake_chat_in_thread(FakeChatServer(mode="silent")) as fake:
        result = _invoke("run", "--condition", "C0", "--model", "chat:llama", "--endpoint", fake.base_url,
                         "--api-key-env", "FAKE_CHAT_KEY", "--data", str(DEMO_DATA), "--only",
                         "demo_benefits_enrollment_001", "--sandbox", "local", "--repeats", "1", "--out",
                         str(tmp_path / "llama"), "--max-turns", "1")
    assert result.exit_code == 0, result.output
    assert "chat:llama: 1/1 run complete" in result.output and "\N{LLAMA}" not in result.output
