"""``apex-voice models`` and the credential checks of ``run`` (keys from the environment or a .env)."""

from __future__ import annotations

import json
import os

from typer.testing import CliRunner

from harness.cli.main import app


def _invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, list(args), env=env)


def test_models_json_lists_providers_with_their_missing_credentials(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = _invoke("models", "--json")
    assert result.exit_code == 0, result.output
    rows = {row["key"]: row for row in map(json.loads, result.stdout.splitlines())}
    assert rows["oracle"]["missing_credentials"] == [] and rows["oracle"]["clock"] == "virtual"
    gpt = rows["gpt-realtime"]
    assert (gpt["provider"], gpt["provider_model"], gpt["clock"]) == ("OpenAI", "gpt-realtime-2.1", "realtime")
    assert gpt["missing_credentials"] == ["OPENAI_API_KEY"] and gpt["tool_modes"] == ["bridge", "native"]


def test_models_table_shows_a_key_once_it_is_set(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    result = _invoke("models")
    assert result.exit_code == 0
    line = next(line for line in result.stdout.splitlines() if "gpt-realtime" in line)
    assert "none" in line and "ws://HOST:PORT/PATH" in result.stdout


def test_run_refuses_a_provider_without_its_key(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    result = _invoke("run", "--model", "gpt-realtime")
    assert result.exit_code == 2
    assert "GPT-realtime-2.1 needs OPENAI_API_KEY." in result.output


def test_run_reads_the_key_from_an_env_file(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "")  # unset (blank), and restored after the test
    env_file = tmp_path / "keys.env"
    env_file.write_text("# provider keys\nexport OPENAI_API_KEY='sk-from-file'\n")
    # Past the credential check, the run stops at the next usage error (an unknown task).
    result = _invoke("run", "--model", "gpt-realtime", "--env-file", str(env_file), "--only", "no_such_task")
    assert "needs OPENAI_API_KEY" not in result.output
    assert result.exit_code == 2 and "no_such_task" in result.output


def test_a_malformed_env_file_is_one_clear_line_and_sets_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "")
    env_file = tmp_path / ".env"
    env_file.write_text("OPENAI_API_KEY=sk\nthis is not an assignment\n")
    result = _invoke("run", "--model", "gpt-realtime", "--env-file", str(env_file))
    assert result.exit_code == 2
    assert f"{env_file}:2: expected NAME=value" in result.output
    assert not os.environ["OPENAI_API_KEY"]


def test_endpoint_is_refused_for_a_model_that_takes_none():
    result = _invoke("run", "--model", "oracle", "--endpoint", "ws://127.0.0.1:1/x")
    assert result.exit_code == 2
    assert "model 'oracle' takes no --endpoint" in result.output


def test_an_env_value_in_quotes_with_a_comment_is_the_value_alone(monkeypatch, tmp_path):
    """`KEY="sk-abc" # comment` kept its quotes: a 401 that stopped the campaign (issue 34)."""
    from harness.agents.env_file import load_env_file

    monkeypatch.setenv("APEX_TEST_QUOTED", "")
    env_file = tmp_path / ".env"
    env_file.write_text('APEX_TEST_QUOTED="sk-abc" # the team key\nAPEX_TEST_PLAIN=sk-def # another\n')
    monkeypatch.delenv("APEX_TEST_PLAIN", raising=False)
    assert load_env_file(env_file) == ["APEX_TEST_QUOTED", "APEX_TEST_PLAIN"]
    assert os.environ["APEX_TEST_QUOTED"] == "sk-abc" and os.environ["APEX_TEST_PLAIN"] == "sk-def"
    monkeypatch.delenv("APEX_TEST_PLAIN")
