"""Rerunning what failed, choosing tasks by glob or count, and listing the suite (issue 23).

``run --retry-failed`` runs again only the cells of an existing campaign that have no scored
result (infrastructure, a harness error, a provider refusal, a stop, never run), over the
campaign's own plan; a scored failure is a measurement and is never rerun.
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager

import pytest
from typer.testing import CliRunner

from harness.blame.errors import SessionInfraError
from harness.cli import campaign_request
from harness.cli.main import app
from sandbox.backend import get_backend
from tests.conftest import DEMO_DATA

TASK_A = "demo_warranty_advice_001"
TASK_B = "demo_benefits_enrollment_001"


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


class _LocalFailingFor:
    """The local sandbox, except that one task's sandboxes never start (not transient)."""

    def __init__(self, task_id: str) -> None:
        self.inner = get_backend("local")
        self.task_id = task_id

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def start(self, public_dir, run_id, *, task_id: str):
        if task_id != self.task_id:
            return self.inner.start(public_dir, run_id, task_id=task_id)

        @asynccontextmanager
        async def never():
            raise SessionInfraError(f"no sandbox for {task_id}", transient=False)
            yield

        return never()


def test_retry_failed_reruns_only_the_empty_cells_of_the_campaigns_own_plan(monkeypatch, tmp_path):
    out = ["--data", str(DEMO_DATA), "--out", str(tmp_path)]
    monkeypatch.setattr(campaign_request, "get_backend", lambda name: _LocalFailingFor(TASK_B))
    first = _invoke("run", *out, "--only", TASK_A, "--only", TASK_B)
    assert first.exit_code == 1, first.output
    kept_run_id = json.loads((tmp_path / TASK_A / "rep0" / "result.json").read_text())["run_id"]
    assert not (tmp_path / TASK_B / "rep0" / "result.json").exists()

    monkeypatch.setattr(campaign_request, "get_backend", lambda name: get_backend("local"))
    retry = _invoke("run", *out, "--retry-failed")  # no --only: the plan is the campaign's, not the suite
    assert retry.exit_code == 0, retry.output
    assert "--retry-failed: 1 of 2 planned cells to run again (1 scored cell kept)" in retry.output
    assert "resumed 1, ran 1" in retry.output
    assert json.loads((tmp_path / TASK_A / "rep0" / "result.json").read_text())["run_id"] == kept_run_id
    assert (tmp_path / TASK_B / "rep0" / "result.json").is_file()
    manifest = json.loads((tmp_path / "campaign.json").read_text())
    assert sorted(manifest["planned_cells"]) == [TASK_B, TASK_A] and manifest["unscored_cells"] == []


def test_retry_failed_never_reruns_a_scored_failure(tmp_path):
    out = ["--model", "noop", "--data", str(DEMO_DATA), "--sandbox", "local", "--out", str(tmp_path)]
    first = _invoke("run", *out, "--only", TASK_A)
    assert first.exit_code == 0 and "FAILURE" in first.output
    retry = _invoke("run", *out, "--retry-failed")
    assert retry.exit_code == 0, retry.output
    assert f"--retry-failed: nothing to run again, every planned cell of {tmp_path} has a scored result" in retry.output
    assert "resumed 1, ran 0" in retry.output


def test_retry_failed_without_a_campaign_is_a_usage_error(tmp_path):
    result = _invoke("run", "--data", str(DEMO_DATA), "--out", str(tmp_path / "nothing"), "--retry-failed")
    assert result.exit_code == 2
    assert f"error: --retry-failed: {tmp_path / 'nothing'} holds no campaign.json (nothing ran there yet)" in result.output


def test_only_takes_globs_and_says_when_one_matches_nothing(tmp_path):
    listed = _invoke("tasks", "--data", str(DEMO_DATA), "--only", "demo_w*", "--only", "demo_benefits_*", "--json")
    assert listed.exit_code == 0, listed.output
    assert [json.loads(line)["task_id"] for line in listed.stdout.splitlines()] == [TASK_B, TASK_A]
    nothing = _invoke("run", "--data", str(DEMO_DATA), "--only", "zzz_*", "--out", str(tmp_path))
    assert nothing.exit_code == 2
    (line,) = nothing.output.strip().splitlines()
    assert line.startswith(f"error: --only 'zzz_*' matches no task in {DEMO_DATA}; known: demo_auto_claim_intake_001")


def test_limit_takes_the_first_tasks_in_suite_order(tmp_path):
    result = _invoke("run", "--data", str(DEMO_DATA), "--sandbox", "local", "--limit", "1", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    first_task = sorted(p.name for p in (DEMO_DATA / "tasks").iterdir() if (p / "task.yaml").is_file())[0]
    assert json.loads((tmp_path / "campaign.json").read_text())["task_ids"] == [first_task]


def test_tasks_lists_the_suite_with_versions(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    table = _invoke("tasks", "--data", str(DEMO_DATA))
    assert table.exit_code == 0, table.output
    rows = [json.loads(line) for line in _invoke("tasks", "--data", str(DEMO_DATA), "--json").stdout.splitlines()]
    assert len(rows) == 10 and {"task_id", "version", "title", "domain", "archetype"} <= set(rows[0])
    warranty = next(row for row in rows if row["task_id"] == TASK_A)
    for value in (TASK_A, warranty["version"], warranty["domain"]):
        assert value in table.output
    assert "10 tasks" in table.output
    one = _invoke("tasks", "--data", str(DEMO_DATA), "--only", TASK_A)
    assert "1 task in" in one.output  # not "1 tasks"


@pytest.mark.parametrize("columns", [80, 120])
def test_tasks_keeps_every_title_whole_and_the_domain_gives_way_at_80_columns(monkeypatch, columns):
    """At 80 columns the titles were cut to five characters ("Take …")."""
    monkeypatch.setenv("COLUMNS", str(columns))
    table = _invoke("tasks", "--data", str(DEMO_DATA))
    assert table.exit_code == 0, table.output
    assert "…" not in table.output and max(map(len, table.output.splitlines()[:-1])) <= columns  # the footer: a path
    words = table.output.split()
    rows = [json.loads(line) for line in _invoke("tasks", "--data", str(DEMO_DATA), "--json").stdout.splitlines()]
    for row in rows:
        assert row["task_id"] in words and all(word in words for word in row["title"].split())
    domains_shown = all(row["domain"] in words for row in rows)
    assert domains_shown == (columns == 120)
    assert ("domains: --json, or a wider terminal" in table.output) == (not domains_shown)
