"""A package that fails validation never measures a model (issue 33, breaks 7 and 8).

Before: a gold predicate kind misspelled still ran under ``run`` and was reported FAILURE, PTS 0,
exit 0; a ``handler: commit`` tool without ``commit_action_type`` loaded, and the agent's own
``action_type`` argument named the approval rule. Both through the real CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import campaign_request
from harness.cli.main import app
from tests.conftest import TOY_FORM, TOY_INTERVIEW, require_reference_fixtures
from tests.package_editing import edit, editable_copy
from tests.test_run_cli import _BrokenBackend

MISSPELLED = "kind: commit_authorized"
COMMIT_ACTION = "    handler: commit\n    commit_action_type: submit_expense\n"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A folder of two packages: the toy form (broken by each test) and the toy interview (valid)."""
    require_reference_fixtures()
    root = tmp_path / "data"
    root.mkdir()
    editable_copy(TOY_FORM, root)
    editable_copy(TOY_INTERVIEW, root)
    return root


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_run_refuses_a_package_that_fails_lint_with_the_lint_message(data, tmp_path):
    edit(data / "toy_form_001", "grading/gold.yaml", MISSPELLED, "kind: commit_authorised")
    out = tmp_path / "out"
    result = _invoke("run", "--data", str(data), "--sandbox", "local", "--out", str(out))
    assert result.exit_code == 2, result.output
    assert ("error: toy_form_001: lint: grading/gold.yaml: required_actions[1].kind: 'commit_authorised' is not one of"
            in " ".join(result.output.split()))
    assert "--skip-invalid" in result.output and "FAILURE" not in result.output
    assert not out.exists(), "nothing was planned, nothing scored"


def test_skip_invalid_runs_the_others_and_lists_the_broken_one_as_not_run(data, tmp_path, monkeypatch):
    edit(data / "toy_form_001", "grading/gold.yaml", MISSPELLED, "kind: commit_authorised")
    monkeypatch.setattr(campaign_request, "get_backend", lambda name: _BrokenBackend())  # cells stay empty: fast
    out = tmp_path / "out"
    result = _invoke("run", "--data", str(data), "--skip-invalid", "--out", str(out))
    assert "not run: toy_form_001: lint: grading/gold.yaml" in " ".join(result.output.split())
    assert "not run (invalid package, --skip-invalid): toy_form_001" in result.output
    manifest = json.loads((out / "campaign.json").read_text())
    assert manifest["planned_cells"] == {"toy_interview_001": [0]}  # the broken task is no cell of the model's
    assert not (out / "toy_form_001").exists()


def _drop_commit_action(task: Path) -> None:
    edit(task, "tools/tool_spec.yaml", COMMIT_ACTION, "    handler: commit\n")


def test_a_commit_tool_without_its_action_type_is_refused_naming_file_tool_and_field(data, tmp_path):
    _drop_commit_action(data / "toy_form_001")
    expected = ("task 'toy_form_001': tools/tool_spec.yaml: tools[2].commit_action_type: tool 'submit_expense' has "
                "handler 'commit' but no commit_action_type")
    validated = _invoke("validate", "--data", str(data / "toy_form_001"))
    assert validated.exit_code == 1, validated.output
    assert expected in " ".join(validated.output.split())
    refused = _invoke("run", "--data", str(data), "--sandbox", "local", "--out", str(tmp_path / "out"))
    assert refused.exit_code == 2 and expected in " ".join(refused.output.split())
