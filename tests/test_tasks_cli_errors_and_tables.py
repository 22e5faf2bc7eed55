"""A new user's bad input gets one line, and result tables keep task ids readable (issue 14, 16-17)."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from harness.agents.registry import get_model
from harness.campaign.campaign import CampaignCell, CampaignResult, CampaignSettings, CellOutcome
from harness.cli import run_report
from harness.cli.main import app
from harness.cli.results_table import wrap_task_id
from harness.results.result_record import ResultRecord
from tests.conftest import DEMO_DATA

DEMO_TASK = "demo_warranty_advice_001"
DEMO_IDS = sorted(p.name for p in (DEMO_DATA / "tasks").iterdir())


def _run(*args: str):
    return CliRunner().invoke(app, ["run", "--only", DEMO_TASK, *args])


def _error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip() and not line.startswith("sandbox:")]


def test_missing_token_file_is_one_line(tmp_path):
    result = _run("--mcp-url", "http://127.0.0.1:9/mcp", "--token-file", str(tmp_path / "missing"),
                  "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert _error_lines(result.output) == [
        f"error: --token-file {tmp_path / 'missing'}: No such file or directory"
    ]


@pytest.mark.parametrize("where", ["under_a_file", "proc"])
def test_unwritable_out_is_one_line_before_any_session(tmp_path, where):
    (tmp_path / "a_file").write_text("", encoding="utf-8")
    out = tmp_path / "a_file" / "runs" if where == "under_a_file" else "/proc/apex-voice-no-such-dir"
    result = _run("--out", str(out), "--sandbox", "local")
    assert result.exit_code == 2
    lines = _error_lines(result.output)
    assert len(lines) == 1 and lines[0].startswith(f"error: --out {out}: cannot write the campaign directory: ")


def _result(task_ids: list[str]) -> CampaignResult:
    settings = CampaignSettings(model=get_model("oracle"), out_dir=DEMO_DATA, repeats=1)
    outcomes = []
    for number, task_id in enumerate(task_ids):
        cell = CampaignCell(0, task_id)
        if number == 3:
            outcomes.append(CellOutcome(cell, "infra_failed", None, attempts=3, infra_errors=["engine gone"]))
            continue
        record = ResultRecord(task_id=task_id, rep=0, model="oracle", pts=1, turns=12, outcome="SUCCESS",
                              components={"GS": True, "PC": True, "RA": True, "WA": True}, afa=1.0)
        outcomes.append(CellOutcome(cell, "ran", record, attempts=1))
    return CampaignResult(settings, outcomes)


def _task_column(table: str) -> list[list[str]]:
    """The task cell of every table row, as its lines (a row continues on lines with no rep)."""
    lines = table.splitlines()
    rep_column = lines[0].index(" rep ") + 1
    cells: list[list[str]] = []
    for line in lines[2:]:  # after the header and its rule
        piece, rest = line[:rep_column].strip(), line[rep_column:].strip()
        if rest:
            cells.append([piece])
        else:
            cells[-1].append(piece)
    return cells


@pytest.mark.parametrize("width", [80, 60])
def test_results_table_keeps_task_ids_readable(capsys, monkeypatch, width):
    monkeypatch.setenv("COLUMNS", str(width))
    run_report.print_results(_result(DEMO_IDS))
    output = capsys.readouterr().out
    table = "\n".join(line for line in output.splitlines() if not re.search(r" rep0: |^oracle: ", line))
    assert all(len(line) <= width for line in table.splitlines())
    cells = _task_column(table)
    assert ["".join(cell) for cell in cells] == DEMO_IDS  # no id lost, none cut short
    for cell in cells:
        assert all(piece.endswith("_") for piece in cell[:-1])  # broken only after an underscore
    if width == 80:
        assert all(len(cell) == 1 for cell in cells)  # whole, on one line
    assert "INFRA ERROR" in table


def test_wrap_task_id_breaks_only_after_underscores():
    assert wrap_task_id("demo_printer_fleet_troubleshoot_001", 20) == "demo_printer_fleet_\ntroubleshoot_001"
    assert wrap_task_id("averyveryverylongword_x", 5) == "averyveryverylongword_\nx"
    assert wrap_task_id("short", 40) == "short"
