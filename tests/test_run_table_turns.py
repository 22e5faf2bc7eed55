"""A voice cell's ``turns`` counts every user turn, as ``latency.user_turns`` does (nudges, closings)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from tests.conftest import DEMO_DATA

TASK = "demo_benefits_enrollment_001"


@pytest.mark.slow
def test_the_no_op_agents_turns_are_the_users_turns(tmp_path):
    result = CliRunner().invoke(app, ["run", "--model", "noop", "--data", str(DEMO_DATA), "--only", TASK,
                                      "--sandbox", "local", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / TASK / "rep0" / "result.json").read_text())
    assert record["latency"]["user_turns"] > 1  # the opening, then the user's recovery turns
    assert record["turns"] == record["latency"]["user_turns"]
    row = next(line for line in result.output.splitlines() if line.startswith(TASK))
    assert f" {record['turns']} " in row
