"""The TUI's commands: usage errors are one line and exit 2; ``run`` offers ``--tui``."""

from __future__ import annotations

from typer.testing import CliRunner

from harness.cli.main import app


def test_replay_of_a_directory_without_events_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(app, ["replay", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output.strip() == f"error: {tmp_path}: no events.jsonl (give a session directory of a run)"


def test_watch_of_a_missing_directory_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(app, ["watch", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert result.output.strip() == f"error: {tmp_path / 'nope'}: no such campaign directory"


def test_run_offers_the_live_view():
    result = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"})
    assert "--tui" in result.output and "Watch the sessions live in the terminal UI." in result.output
