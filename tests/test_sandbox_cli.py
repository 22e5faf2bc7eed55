"""The sandbox side of the CLI for a new user: one clear line per mistake, and a fast ``--help``."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from tests.conftest import REPO

NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent/docker.sock"}
DEMO_TASK = "demo_warranty_advice_001"


def _invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, list(args), env=env)


def _error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip() and not line.startswith("sandbox:")]


def test_importing_the_cli_imports_no_numeric_or_docker_stack():
    code = (
        "import sys, harness.cli.main\n"
        "heavy = sorted(m for m in ('numpy', 'scipy', 'docker', 'mcp', 'harness.session') if m in sys.modules)\n"
        "print(heavy)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_help_lists_every_verb_without_loading_them():
    result = _invoke("--help")
    assert result.exit_code == 0
    for verb in ("validate", "run", "sandbox", "images", "version", "render-audio", "index"):
        assert verb in result.output


@pytest.mark.parametrize("args", [("validate", "--sandbox", "docker"), ("images", "build")])
def test_no_engine_is_one_line_not_a_traceback(args):
    result = _invoke(*args, env=NO_ENGINE)
    assert result.exit_code == 1
    lines = _error_lines(result.output)
    assert len(lines) == 1 and "no Docker engine answers" in lines[0], result.output


def test_an_unreachable_mcp_url_says_so(tmp_path):
    token = tmp_path / "token"
    token.write_text("t")
    result = _invoke("run", "--only", DEMO_TASK, "--mcp-url", "http://127.0.0.1:9/mcp", "--token-file", str(token))
    assert result.exit_code == 1
    assert "does not answer" in result.output and "already served" not in result.output
    assert len(_error_lines(result.output)) == 1


def test_sandbox_with_mcp_url_is_a_usage_error(tmp_path):
    token = tmp_path / "token"
    token.write_text("t")
    result = _invoke(
        "run", "--only", DEMO_TASK, "--sandbox", "local", "--mcp-url", "http://127.0.0.1:9/mcp", "--token-file", str(token)
    )
    assert result.exit_code == 2 and "exclude each other" in result.output


def test_a_missing_token_file_is_one_line(tmp_path):
    result = _invoke(
        "run", "--only", DEMO_TASK, "--mcp-url", "http://127.0.0.1:9/mcp", "--token-file", str(tmp_path / "absent")
    )
    assert result.exit_code == 2
    assert _error_lines(result.output) == [f"error: --token-file {tmp_path / 'absent'}: No such file or directory"]


def test_cleanup_refuses_run_id_together_with_all():
    result = _invoke("sandbox", "cleanup", "--run-id", "x", "--all")
    assert result.exit_code == 2 and "not both" in result.output
