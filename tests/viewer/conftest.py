"""Run directories for the viewer's tests, made by the CLI once per test session: the oracle passing
one demo task (C2, with its recording), the no-op agent failing it, and the oracle in C0 (no audio)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app as cli
from tests.conftest import DEMO_DATA
from tests.viewer.helpers import DEMO_TASK

RUNS = {
    "oracle": ["--model", "oracle"],
    "noop": ["--model", "noop"],
    "c0": ["--model", "oracle", "--condition", "C0"],
}


@pytest.fixture(scope="session")
def viewer_runs(tmp_path_factory) -> dict[str, Path]:
    """``{"oracle" | "noop" | "c0": campaign_dir}``, each ``apex-voice run --only DEMO_TASK``."""
    runs = {}
    with pytest.MonkeyPatch.context() as env:
        env.setenv("APEX_VOICE_JUDGE_CACHE", str(tmp_path_factory.mktemp("judge") / "cache.json"))
        for var in ("APEX_VOICE_LLM_API_KEY", "OPENAI_API_KEY", "APEX_VOICE_DATA"):
            env.delenv(var, raising=False)
        root = tmp_path_factory.mktemp("viewer-runs")
        for name, model_args in RUNS.items():
            out = root / name
            args = ["run", *model_args, "--data", str(DEMO_DATA), "--only", DEMO_TASK, "--sandbox", "local",
                    "--out", str(out)]
            result = CliRunner().invoke(cli, args)
            assert result.exit_code in (0, 1), result.output
            runs[name] = out
    return runs

