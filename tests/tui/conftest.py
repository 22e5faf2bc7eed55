"""Recorded sessions for the TUI tests: a passing oracle run and a failing no-op run of one demo
task, each a real campaign (``apex-voice run ... --sandbox local``) recorded once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app as cli
from tests.tui.helpers import DEMO_DATA, DEMO_TASK


@pytest.fixture(scope="session")
def recorded_runs(tmp_path_factory) -> dict[str, Path]:
    """``{"oracle": campaign_dir, "noop": campaign_dir}``."""
    runs = {}
    with pytest.MonkeyPatch.context() as env:
        env.setenv("APEX_VOICE_JUDGE_CACHE", str(tmp_path_factory.mktemp("judge") / "cache.json"))
        for var in ("APEX_VOICE_LLM_API_KEY", "OPENAI_API_KEY", "APEX_VOICE_DATA"):
            env.delenv(var, raising=False)
        for model in ("oracle", "noop"):
            out = tmp_path_factory.mktemp(f"runs-{model}")
            args = ["run", "--model", model, "--data", str(DEMO_DATA), "--only", DEMO_TASK, "--sandbox", "local", "--out", str(out)]
            result = CliRunner().invoke(cli, args)
            assert result.exit_code == 0, result.output
            runs[model] = out
    return runs
