"""``apex-voice validate`` end to end through the CLI."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from tests.conftest import DEMO_DATA, REFERENCE_FIXTURES, require_reference_fixtures

runner = CliRunner()


def test_reference_fixtures_are_valid():
    require_reference_fixtures()
    result = runner.invoke(app, ["validate", "--data", str(REFERENCE_FIXTURES)])
    assert result.exit_code == 0, result.output
    assert "2/2 task packages valid" in result.output


def test_json_output_has_one_report_per_task():
    require_reference_fixtures()
    result = runner.invoke(app, ["validate", "--data", str(REFERENCE_FIXTURES), "--json"])
    assert result.exit_code == 0
    reports = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]  # progress: on stderr
    assert [r["task_id"] for r in reports] == ["toy_form_001", "toy_interview_001"]
    assert all(r["ok"] and r["oracle_pass"] and r["noop_fail"] for r in reports)


def test_piped_validation_prints_a_line_per_task_as_it_finishes():
    """Piped or in a CI log the live bar showed nothing: 11 s of silence for two tasks in docker."""
    result = runner.invoke(app, ["validate", "--only", "demo_warranty_advice_001", "--only", "demo_hvac_inspection_001"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("[")]
    assert [line.rsplit(", ", 1)[0] for line in lines] == [
        "[1/2] demo_hvac_inspection_001: valid", "[2/2] demo_warranty_advice_001: valid"]
    assert all(line.endswith(" s") for line in lines)


def test_only_selects_one_task():
    require_reference_fixtures()
    result = runner.invoke(app, ["validate", "--data", str(REFERENCE_FIXTURES), "--only", "toy_form_001"])
    assert result.exit_code == 0
    assert "1/1 task packages valid" in result.output


def test_bundled_demo_suite_is_the_default_and_valid():
    result = runner.invoke(app, ["validate"])
    assert result.exit_code == 0, result.output
    count = len([p for p in (DEMO_DATA / "tasks").iterdir() if (p / "task.yaml").exists()])
    assert count >= 2
    assert f"{count}/{count} task packages valid" in result.output


def test_missing_data_path_is_a_usage_error(tmp_path):
    result = runner.invoke(app, ["validate", "--data", str(tmp_path / "nowhere")])
    assert result.exit_code == 2
    assert "nowhere" in result.output


def _broken_copy(tmp_path, edit):
    require_reference_fixtures()
    task = tmp_path / "toy_form_001"
    shutil.copytree(REFERENCE_FIXTURES / "toy_form_001", task)
    edit(task)
    return task


def _fail_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.startswith("FAIL")]
    assert len(lines) == 1, output
    return lines[0]


def test_a_gold_field_no_tool_can_write_fails_with_one_line(tmp_path):
    def edit(task):
        gold = task / "grading" / "gold.yaml"
        gold.write_text(gold.read_text().replace("field: cost_center", "field: cost_centre"))

    task = _broken_copy(tmp_path, edit)
    result = runner.invoke(app, ["validate", "--data", str(task)])
    assert result.exit_code == 1
    line = _fail_line(result.output)
    assert "grading/gold.yaml" in line and "cost_centre" in line
    assert "Traceback" not in result.output
    assert "0/1 task packages valid" in result.output


def test_an_oracle_that_fails_explains_the_gate(tmp_path):
    def edit(task):
        policy = task / "reference" / "policy.yaml"
        policy.write_text(policy.read_text().replace("{total_amount: 200.0}", "{total_amount: 240.0}"))

    task = _broken_copy(tmp_path, edit)
    result = runner.invoke(app, ["validate", "--data", str(task)])
    assert result.exit_code == 1
    line = _fail_line(result.output)
    assert "oracle: did not pass" in line and "total_amount" in line


@pytest.mark.slow
def test_reference_fixtures_validate_through_the_local_sandbox():
    require_reference_fixtures()
    result = runner.invoke(app, ["validate", "--data", str(REFERENCE_FIXTURES), "--sandbox", "local", "--json"])
    assert result.exit_code == 0, result.output
    reports = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
    assert [(r["task_id"], r["oracle_pass"], r["noop_fail"]) for r in reports] == [
        ("toy_form_001", True, True),
        ("toy_interview_001", True, True),
    ]


def test_unknown_sandbox_is_a_usage_error():
    result = runner.invoke(app, ["validate", "--sandbox", "cloud"])
    assert result.exit_code == 2 and "cloud" in result.output


def test_unknown_only_id_is_a_usage_error_listing_known_ids():
    result = runner.invoke(app, ["validate", "--only", "nope"])
    assert result.exit_code == 2
    assert "nope" in result.output and "demo_benefits_enrollment_001" in result.output
    assert "Traceback" not in result.output
