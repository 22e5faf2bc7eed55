"""``run --mcp-public-url``: only where a provider's MCP client uses it, with one line per refusal."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from harness.cli.main import app

TASK = "demo_offsite_coordination_001"
URL = "https://tunnel.example/mcp"


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--model", "ws://127.0.0.1:9/v1/realtime"], "is for --tool-mode native"),
        (["--model", "native-oracle", "--tool-mode", "native"], "native-oracle calls the tools with its own client"),
        (["--model", "ws://127.0.0.1:9/v1/realtime", "--tool-mode", "native", "--parallel", "2"], "needs --parallel 1"),
    ],
)
def test_misplaced_public_url_is_a_usage_error(args, problem):
    result = CliRunner().invoke(app, ["run", *args, "--only", TASK, "--mcp-public-url", URL])
    assert result.exit_code == 2
    assert f"error: --mcp-public-url {problem}" in result.output


def test_a_public_url_must_be_http_with_a_host():
    result = CliRunner().invoke(app, ["run", "--model", "ws://127.0.0.1:9/v1/realtime", "--tool-mode", "native",
                                      "--only", TASK, "--mcp-public-url", "ftp://tunnel.example/mcp"])
    assert result.exit_code == 2
    assert "error: --mcp-public-url 'ftp://tunnel.example/mcp' is not an http(s) URL with a host" in result.output
