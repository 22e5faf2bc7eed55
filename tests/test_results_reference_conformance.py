"""``results`` and ``.env`` loading behave as the reference does on the shapes its users have."""

from __future__ import annotations

import json
import os

from typer.testing import CliRunner

from harness.agents.env_file import load_env_file
from harness.cli.main import app
from tests.test_results_published_layout import _final_workspace, _published_run


def test_an_empty_env_value_leaves_the_variable_unset(tmp_path, monkeypatch):
    monkeypatch.delenv("APEX_TEST_EMPTY", raising=False)
    monkeypatch.delenv("APEX_TEST_QUOTED_EMPTY", raising=False)
    monkeypatch.delenv("APEX_TEST_SET", raising=False)
    env = tmp_path / ".env"
    env.write_text("APEX_TEST_EMPTY=\nAPEX_TEST_QUOTED_EMPTY=\"\"\nAPEX_TEST_SET=value\n")
    assert load_env_file(env) == ["APEX_TEST_SET"]
    assert "APEX_TEST_EMPTY" not in os.environ and "APEX_TEST_QUOTED_EMPTY" not in os.environ
    assert os.environ["APEX_TEST_SET"] == "value"
    monkeypatch.delenv("APEX_TEST_SET")


def test_a_published_campaign_without_campaign_json_shows_its_display_name_and_untyped_artifacts(tmp_path):
    workspace = _final_workspace()
    for entry in workspace.values():
        del entry["artifact_type"]  # as the published runs' tooling writes some entries
    campaign = tmp_path / "runs" / "gpt-realtime"
    _published_run(campaign, 0, workspace, [])
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["results", "--runs-root", str(tmp_path / "runs"), "--repeats", "1",
                                      "--out", str(out), "--no-plots"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    markdown = (out / "results.md").read_text()
    assert "| GPT-realtime-2.1 |" in markdown and "| gpt-realtime |" not in markdown
    results = json.loads((out / "results.json").read_text())
    model = results["models"]["gpt-realtime"]
    assert model["display_name"] == "GPT-realtime-2.1"
    (intake,) = [row for row in results["slices"]["archetype"] if row["label"] == "INTAKE"]
    assert intake["gpt-realtime"]["success"] == 1.0  # the untyped workspace is still re-graded
