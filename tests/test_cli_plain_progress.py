"""Output for logs and pipes (issue 23 items 6 and 7): a line per finished cell when stderr is not a
terminal, ``--version``, ``-v``, and a failure's explanation that says when it was cut."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import re
from importlib.metadata import version
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.campaign.campaign import CampaignCell, CellOutcome
from harness.cli.main import app
from harness.cli.plain_progress import PlainProgress, wants_plain_progress
from harness.results.result_record import ResultRecord
from tests.conftest import DEMO_DATA

DEMO_TASK = "demo_warranty_advice_001"


@pytest.fixture(autouse=True)
def _root_logger_restored():
    """``-v`` and ``--log-level`` set the root logger of this process; put it back after each test."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    yield
    root.setLevel(level)
    root.handlers[:] = handlers


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_progress_is_chosen_when_stdout_or_stderr_is_not_a_terminal():
    assert wants_plain_progress(io.StringIO(), _Tty()) and wants_plain_progress(_Tty(), io.StringIO())
    assert not wants_plain_progress(_Tty(), _Tty())


def test_a_line_per_finished_cell_with_status_pts_and_wall_time():
    stream = io.StringIO()
    progress = PlainProgress(3, stream)
    passed = ResultRecord(task_id="t_a", rep=0, model="oracle", pts=1, outcome="SUCCESS", wall_s=12.34)
    progress(CellOutcome(CampaignCell(0, "t_a"), "ran", passed))
    progress(CellOutcome(CampaignCell(1, "t_a"), "loaded", passed.model_copy(update={"rep": 1})))
    progress(CellOutcome(CampaignCell(0, "t_b"), "infra_failed", None, attempts=3))
    assert stream.getvalue().splitlines() == [
        "[1/3] t_a rep0: ran, SUCCESS, PTS 1, 12.3 s",
        "[2/3] t_a rep1: resumed, SUCCESS, PTS 1, 12.3 s",
        "[3/3] t_b rep0: INFRA ERROR after 3 attempt(s), unscored: counts as PTS 0",
    ]


def test_a_session_starting_is_a_line_and_a_retry_says_its_attempt():
    stream = io.StringIO()
    progress = PlainProgress(1, stream)
    progress.started(CampaignCell(0, "t_a"), 1)
    progress.started(CampaignCell(0, "t_a"), 2)
    assert stream.getvalue().splitlines() == ["[ … ] t_a rep0: started", "[ … ] t_a rep0: started (attempt 2)"]


async def test_a_session_still_running_is_said_every_beat_until_it_settles():
    """Issue 36: a piped real-time run printed nothing for the two minutes of its session."""
    stream = io.StringIO()
    progress = PlainProgress(2, stream)
    cell = CampaignCell(0, "t_a")
    progress.started(cell, 1)
    async with progress.beating(every_s=0.01):
        while stream.getvalue().count("still running") < 2:
            await asyncio.sleep(0.01)
        progress(CellOutcome(cell, "ran", ResultRecord(task_id="t_a", rep=0, model="oracle", pts=1, outcome="SUCCESS")))
        beats = stream.getvalue().count("still running")
        await asyncio.sleep(0.05)
    assert stream.getvalue().count("still running") == beats  # a settled cell is not said again
    assert re.search(r"^\[ … \] t_a rep0: still running, 0:00 so far$", stream.getvalue(), re.MULTILINE)


def test_a_piped_run_prints_each_cell_as_it_finishes(tmp_path):
    args = ["run", "--data", str(DEMO_DATA), "--only", DEMO_TASK, "--sandbox", "local", "--out", str(tmp_path)]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    lines = first.stderr.splitlines()
    started = lines.index(f"[ … ] {DEMO_TASK} rep0: started")  # said before the session's minutes, not after
    assert re.fullmatch(rf"\[1/1\] {DEMO_TASK} rep0: ran, SUCCESS, PTS 1, \d+\.\d s", lines[started + 1]), lines
    again = CliRunner().invoke(app, [*args, "--json"])
    assert re.search(rf"^\[1/1\] {DEMO_TASK} rep0: resumed, SUCCESS, PTS 1", again.stderr, re.MULTILINE)
    assert "started" not in again.stderr  # a resumed cell runs no session
    assert all(line.startswith("{") for line in again.stdout.splitlines())  # stdout stays JSON


def test_version_flag_prints_the_installed_version():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"apex-voice {version('apex-voice')}"


def test_log_level_and_verbose_set_the_harness_log_level():
    root = logging.getLogger()
    assert CliRunner().invoke(app, ["--log-level", "debug", "version"]).exit_code == 0
    assert root.level == logging.DEBUG
    assert CliRunner().invoke(app, ["-v", "version"]).exit_code == 0
    assert root.level == logging.INFO
    bad = CliRunner().invoke(app, ["--log-level", "loud", "version"])
    assert bad.exit_code == 2 and "loud" in bad.output


def _explanation(output: str) -> list[str]:
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{DEMO_TASK} rep0: "))
    end = next(i for i, line in enumerate(lines) if line.startswith("noop: "))
    return lines[start:end]


def test_a_cut_explanation_says_how_much_was_left_out_and_v_shows_it_all(tmp_path):
    args = ["run", "--model", "noop", "--data", str(DEMO_DATA), "--only", DEMO_TASK, "--sandbox", "local",
            "--out", str(tmp_path)]
    cut = CliRunner().invoke(app, args)
    assert cut.exit_code == 0, cut.output
    explain = json.loads((tmp_path / DEMO_TASK / "rep0" / "result.json").read_text())["explain"]
    assert len(explain) > 3
    result_path = Path(tmp_path) / DEMO_TASK / "rep0" / "result.json"
    shown = _explanation(cut.stdout)
    assert len(shown) == 4
    assert shown[-1] == f"    … {len(explain) - 3} more lines in {result_path} (-v shows them)"
    full = CliRunner().invoke(app, ["-v", *args])
    assert len(_explanation(full.stdout)) == len(explain)
    assert CliRunner().invoke(app, [*args, "-v"]).stdout.count("\n") == full.stdout.count("\n")
