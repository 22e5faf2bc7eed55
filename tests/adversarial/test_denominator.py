"""The denominator belongs to the campaign: an agent cannot raise its score by making cells unscorable.

Run directories are made by the real writers (``run_campaign``, ``write_manifest``,
``ResultRecord.write``) and read by the real ``apex-voice results`` CLI.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.agents.registry import get_model
from harness.blame.errors import ProviderError, ProviderTransient
from harness.campaign.campaign import CampaignCell, CampaignSettings, run_campaign
from harness.campaign.manifest import CampaignManifest, write_manifest
from harness.cli import campaign_request
from harness.cli.main import app
from harness.results import plots
from harness.results.result_record import ResultRecord
from tests.conftest import DEMO_DATA
from tests.test_results_published import (
    LEADERBOARD,
    PUBLISHED,
    _table,
    task_outcomes,
    write_published_campaign,
)
from tests.test_run_cli import DEMO_TASK, _BrokenBackend

A, B = "task_a", "task_b"


def _record(task: str, rep: int, pts: int | None = 1, model: str = "oracle", **extra) -> ResultRecord:
    return ResultRecord(task_id=task, rep=rep, model=model, run_id=f"{task}-{rep}", pts=pts,
                        components={"GS": True, "PC": True, "RA": True} | ({} if pts is None else {"WA": bool(pts)}),
                        outcome="SUCCESS" if pts else "FAILURE", **extra)


def _manifest(out: Path, tasks: list[str], repeats: int = 1, **extra) -> None:
    write_manifest(out, CampaignManifest(
        model="oracle", display_name="Oracle", repeats=repeats, max_turns=44, user_audio="auto", n_tasks=len(tasks),
        task_ids=tasks, planned_cells={t: list(range(repeats)) for t in tasks}, acoustics="none", tool_mode="bridge",
        **extra))


def _results(out: Path, *dirs: Path, plots_too: bool = False, extra: tuple[str, ...] = ()):
    args = ["results", *map(str, dirs), "--out", str(out), *extra, *([] if plots_too else ["--no-plots"])]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    written = json.loads((out / "results.json").read_text())
    # The exit code says what the files say: 1 while a campaign is incomplete (issue 36 §10).
    assert result.exit_code == (0 if written["complete"] else 1), result.output
    return result, written, (out / "results.md").read_text()


class Cells:
    """A cell runner: passes every cell, except those scripted to raise (each raise used once)."""

    def __init__(self, failures: dict[tuple[str, int], list[BaseException]] | None = None):
        self.failures = failures or {}

    async def __call__(self, cell: CampaignCell, rep_dir: Path) -> ResultRecord:
        pending = self.failures.get((cell.task_id, cell.rep), [])
        if pending:
            raise pending.pop(0)
        return _record(cell.task_id, cell.rep)


def _campaign(settings: CampaignSettings, tasks: list[str], cells: Cells) -> None:
    asyncio.run(run_campaign(settings, tasks, cells))


def _settings(out: Path, **overrides) -> CampaignSettings:
    return CampaignSettings(**{"model": get_model("oracle"), "out_dir": out, "repeats": 1, "retry_backoff_s": 0.0,
                               **overrides})


def test_a_dodged_cell_is_a_failure_and_the_campaign_is_incomplete_everywhere(tmp_path):
    campaign = tmp_path / "oracle"
    _manifest(campaign, [A, B])
    _record(A, 0).write(campaign / A / "rep0")  # task_b rep0: no result.json at all
    result, data, markdown = _results(tmp_path / "out", campaign)
    model = data["models"]["oracle"]
    assert (model["n"], model["pass1_mean"], model["pass1_pct"], model["pass_at_k"]) == (2, 1.0, 50.0, 1)
    assert (model["complete"], model["n_planned"], model["n_scored"], data["complete"]) == (False, 2, 1, False)
    assert model["unscored"] == [{"task_id": B, "rep": 0, "reason": "not run", "detail": "", "counted_as": "failure"}]
    assert model["pass1_pct_scored_cells_only"] == 100.0
    # Terminal: rates under rate labels, the status, the cell and its reason.
    assert "INCOMPLETE" in result.output and f"{B} rep0: not run — counted as a failure" in result.output
    assert "1/2" in result.output and "pass@1 % scored only" in result.output
    # results.md: the note at the top, the completeness table with the labelled scored-only figure, the cell.
    assert "> INCOMPLETE: Oracle: 1 of 2 planned cells unscored (1 counted as failures)" in markdown
    assert "| Oracle | **INCOMPLETE** | 2 | 1 | 1 | 0 | 50.0 | 100.0 |" in markdown
    assert "pass@1 % (scored cells only)" in markdown and f"- {B} rep0: not run — counted as a failure" in markdown
    assert "| Oracle | 2 | 1.0 | 50.0 |" in markdown  # k = 1: pass@k and Reliable@k are pass@1, not repeated


def test_the_plots_say_incomplete(tmp_path, monkeypatch):
    campaign = tmp_path / "oracle"
    _manifest(campaign, [A, B])
    _record(A, 0).write(campaign / A / "rep0")
    seen: dict[str, tuple[str, list[str], list[str]]] = {}
    save = plots._save

    def spy(plt, fig, path):
        ax = fig.axes[0]
        seen[path.name] = (ax.get_title(), [t.get_text() for t in ax.get_xticklabels()],
                           [t.get_text() for t in (ax.get_legend().get_texts() if ax.get_legend() else [])])
        save(plt, fig, path)

    monkeypatch.setattr(plots, "_save", spy)
    _results(tmp_path / "out", campaign, plots_too=True)
    title, ticks, legend = seen["leaderboard.png"]
    assert "INCOMPLETE" in title and "Oracle" in title
    assert ticks == ["Oracle\nn=2 INCOMPLETE"]
    assert legend == ["pass@1 %"]  # k = 1: one series, not three called alike


def test_harness_error_infrastructure_and_refusal_cells_are_failures_with_their_reason(tmp_path):
    out = tmp_path / "oracle"
    cells = Cells({(A, 0): [ValueError("bad tool schema")], (A, 1): [ProviderTransient("503")] * 3,
                   (B, 1): [ProviderError("401 invalid api key")]})
    _campaign(_settings(out, repeats=2), [A, B], cells)
    result, data, _ = _results(tmp_path / "out", out)
    model = data["models"]["oracle"]
    reasons = {(c["task_id"], c["rep"]): (c["reason"], c["detail"]) for c in model["unscored"]}
    assert reasons == {
        (A, 0): ("harness error", "ValueError: bad tool schema"),
        (A, 1): ("infrastructure", "3 attempt(s): attempt 3: ProviderTransient: 503"),
        (B, 1): ("provider refused", "ProviderError: 401 invalid api key"),
    }
    # Only task_b rep0 scored (a pass): pass@1 = 1 of 4 cells over 2 reps; pass@2 1 of 2 tasks; Reliable@2 none.
    assert (model["n"], model["rep_pass"], model["pass_at_k"], model["reliable_at_k"]) == (2, [1, 0], 1, 0)
    assert (model["n_planned"], model["n_scored"], model["pass1_pct"]) == (4, 1, 25.0)
    assert "harness error (ValueError: bad tool schema)" in result.output


def test_a_harness_error_left_by_an_interrupted_start_is_read_from_its_file(tmp_path):
    out = tmp_path / "oracle"
    _campaign(_settings(out), [A, B], Cells({(B, 0): [RuntimeError("our bug")]}))
    manifest = json.loads((out / "campaign.json").read_text())
    manifest["unscored_cells"] = []  # as if the start had been killed before it wrote its reasons
    (out / "campaign.json").write_text(json.dumps(manifest))
    _, data, _ = _results(tmp_path / "out", out)
    (cell,) = data["models"]["oracle"]["unscored"]
    assert (cell["task_id"], cell["reason"], cell["detail"]) == (B, "harness error", "RuntimeError: our bug")


def test_a_stopped_campaigns_unrun_cells_count(tmp_path):
    out = tmp_path / "oracle"
    # parallel 1, coverage-first: task_a rep0 refuses and stops the campaign; the other three never run.
    _campaign(_settings(out, repeats=2), [A, B], Cells({(A, 0): [ProviderError("401")]}))
    _, data, _ = _results(tmp_path / "out", out)
    model = data["models"]["oracle"]
    assert [(c["task_id"], c["rep"], c["reason"]) for c in model["unscored"]] == [
        (A, 0, "provider refused"), (A, 1, "stopped"), (B, 0, "stopped"), (B, 1, "stopped")]
    assert (model["n"], model["pass1_mean"], model["n_planned"], model["n_scored"]) == (2, 0.0, 4, 0)
    assert model["pass1_pct_scored_cells_only"] is None


def test_a_later_start_that_fills_the_cells_clears_their_reasons_and_keeps_the_plan(tmp_path):
    out = tmp_path / "oracle"
    _campaign(_settings(out), [A, B], Cells({(B, 0): [ProviderTransient("503")] * 3}))
    assert [c["reason"] for c in json.loads((out / "campaign.json").read_text())["unscored_cells"]] == ["infrastructure"]
    _campaign(_settings(out, repeats=2, extend=True), [B], Cells())  # --only task_b --repeats 2 --extend
    manifest = json.loads((out / "campaign.json").read_text())
    assert manifest["planned_cells"] == {A: [0], B: [0, 1]} and manifest["unscored_cells"] == []
    _, data, _ = _results(tmp_path / "out", out, extra=("--repeats", "1"))
    assert data["models"]["oracle"]["complete"] is True


def test_pending_cells_cannot_lift_pass1_and_are_listed_as_pending_until_regraded(tmp_path):
    """Issue 33 break 6: 10 tasks, 5 passing, and each failing task's cell left waiting on a judge the
    agent talked out of a verdict. Before: pass@1 50 % -> 100 %. Now the pending cells are failures."""
    campaign = tmp_path / "oracle"
    tasks = [f"task_{i:02d}" for i in range(10)]

    async def half_pending(cell: CampaignCell, rep_dir: Path) -> ResultRecord:
        if tasks.index(cell.task_id) < 5:
            return _record(cell.task_id, cell.rep)
        return _record(cell.task_id, cell.rep, pts=None, pending_verdicts=["form_1.summary"])

    # The real campaign writes the plan and the records (no regrader: the judge stays silent).
    asyncio.run(run_campaign(_settings(campaign), tasks, half_pending))
    result, data, markdown = _results(tmp_path / "out", campaign)
    model = data["models"]["oracle"]
    assert (model["n"], model["pass1_pct"], model["pass_at_k"], model["reliable_at_k"]) == (10, 50.0, 5, 5)
    assert (model["complete"], data["complete"], model["incomplete_tasks"], model["pending_runs"]) == (False, False, [], 5)
    assert [(c["task_id"], c["reason"], c["counted_as"]) for c in model["unscored"]] == [
        (task, "pending", "failure") for task in tasks[5:]]
    assert model["unscored"][0]["detail"] == "judge verdicts for form_1.summary"
    assert f"{tasks[5]} rep0: pending (judge verdicts for form_1.summary) — counted as a failure" in result.output
    assert "INCOMPLETE" in result.output and "> INCOMPLETE: Oracle (reference policy): 5 of 10 planned cells unscored" in markdown
    assert "5 counted as failures, 5 of them pending the judge" in markdown
    assert "| Oracle (reference policy) | 10 | 5.0 | 50.0 |" in markdown
    assert "| Oracle (reference policy) | **INCOMPLETE** | 10 | 5 | 5 | 0 | 50.0 | 100.0 |" in markdown  # scored-only beside, labelled

    # `regrade` settles them (here: the judge's verdicts came back FAIL): complete, and still 50 %.
    for task in tasks[5:]:
        _record(task, 0, pts=0).write(campaign / task / "rep0")
    _, data, _ = _results(tmp_path / "out2", campaign)
    model = data["models"]["oracle"]
    assert (model["pass1_pct"], model["complete"], model["unscored"]) == (50.0, True, [])


def test_an_error_row_counts_as_a_failure(tmp_path):
    campaign = tmp_path / "oracle"
    _manifest(campaign, [A, B])
    _record(A, 0).write(campaign / A / "rep0")
    _record(B, 0, pts=1, error="RuntimeError: session raised").write(campaign / B / "rep0")
    _, data, _ = _results(tmp_path / "out", campaign)
    model = data["models"]["oracle"]
    assert (model["pass1_mean"], model["n_scored"]) == (1.0, 1)
    assert model["unscored"][0]["reason"] == "error"


@pytest.mark.parametrize(("condition", "acoustics"), [("C0", "none"), ("C1", "none"), ("C3", "harsh")])
def test_run_records_the_condition_it_measured(monkeypatch, tmp_path, condition, acoustics):
    monkeypatch.setattr(campaign_request, "get_backend", lambda name: _BrokenBackend())
    args = ["run", "--condition", condition, "--data", str(DEMO_DATA), "--only", DEMO_TASK, "--out", str(tmp_path)]
    result = CliRunner().invoke(app, [*args, *(["--acoustics", "harsh"] if condition == "C3" else [])])
    assert result.exit_code == 1, result.output  # the broken sandbox leaves the cell empty
    manifest = json.loads((tmp_path / "campaign.json").read_text())
    identity = manifest["identity"]
    assert (manifest["condition"], identity["condition"], identity["acoustics"], identity["tool_mode"]) == \
        (condition, condition, acoustics, "bridge")
    assert manifest["planned_cells"] == {DEMO_TASK: [0]}
    assert manifest["unscored_cells"][0]["reason"] == "infrastructure"
    # The end-of-run table counts the empty cell as `results` does.
    assert "oracle: pass@1 0.0 % over 1 planned cells (0 scored): INCOMPLETE" in result.output


def test_campaigns_of_one_model_in_different_conditions_are_kept_apart(tmp_path):
    c2, c3 = tmp_path / "runs" / "oracle", tmp_path / "cond_C3"
    _manifest(c2, [A, B])
    _record(A, 0).write(c2 / A / "rep0")
    _record(B, 0).write(c2 / B / "rep0")
    _manifest(c3, [A], condition="C3")
    _record(A, 0, pts=0, condition="C3").write(c3 / A / "rep0")  # each result.json names its condition
    result, data, markdown = _results(tmp_path / "out", c2, c3)
    assert set(data["models"]) == {"oracle[C2]", "oracle[C3]"}  # the condition alone tells them apart
    assert data["models"]["oracle[C2]"]["n"] == 2
    assert "kept apart" in result.output and "kept apart" in markdown and "(condition, tasks)" in markdown
    assert "conditions C2 (oracle[C2]), C3 (oracle[C3])" in markdown


def test_a_manifest_that_does_not_record_a_field_is_not_taken_to_match(tmp_path):
    new, old = tmp_path / "new" / "oracle", tmp_path / "old" / "oracle"
    _manifest(new, [A])
    _record(A, 0).write(new / A / "rep0")
    old.mkdir(parents=True)  # written before acoustics and tool mode were recorded
    (old / "campaign.json").write_text(json.dumps({"model": "oracle", "display_name": "Oracle", "condition": "C2",
                                                   "repeats": 1, "user_audio": "auto", "task_ids": [A]}))
    _record(A, 0).write(old / A / "rep0")
    _, data, _ = _results(tmp_path / "out", new, old)
    assert set(data["models"]) == {"oracle[acoustics=none]", "oracle[acoustics=unknown]"}


def test_the_same_directory_twice_is_one_campaign(tmp_path):
    campaign = tmp_path / "oracle"
    _manifest(campaign, [A])
    _record(A, 0).write(campaign / A / "rep0")
    _, data, _ = _results(tmp_path / "out", campaign, campaign)
    assert list(data["models"]) == ["oracle"]


def test_published_runs_without_a_plan_reproduce_the_published_tables(tmp_path):
    root = tmp_path / "apex-voice-runs"
    for key, display, rep_pass, distribution in PUBLISHED:
        write_published_campaign(root, key, display, task_outcomes(rep_pass, distribution))
    result, data, markdown = _results(tmp_path / "out", extra=("--runs-root", str(root)))
    assert [tuple(row) for row in _table(markdown, "Leaderboard")] == LEADERBOARD
    assert data["complete"] is True and "INCOMPLETE" not in markdown + result.output
    grok = data["models"]["grok-voice"]
    assert (grok["plan"], grok["n_planned"], grok["n_scored"], grok["unscored"]) == (
        "inferred from the runs present", 360, 360, [])


def test_a_published_task_missing_a_repetition_is_left_out_as_published(tmp_path):
    campaign = tmp_path / "gpt-realtime"
    campaign.mkdir()
    (campaign / "campaign.json").write_text(json.dumps({"model": "gpt-realtime", "repeats": 2, "condition": "C2"}))
    for task, reps in ((A, (0, 1)), (B, (0,))):
        for rep in reps:
            _record(task, rep, model="gpt-realtime").write(campaign / task / f"rep{rep}")
    _, data, _ = _results(tmp_path / "out", campaign)
    model = data["models"]["gpt-realtime"]
    assert (model["n"], model["pass_at_k"], model["incomplete_tasks"]) == (1, 1, [B])
    assert [(c["task_id"], c["rep"], c["reason"], c["counted_as"]) for c in model["unscored"]] == [
        (B, 1, "missing", "excluded")]


def test_a_real_c0_campaign_records_c0_and_resumes(tmp_path):
    """Issue 23 items 1 and 15: the manifest said C2, so the identical command then refused its own records."""
    args = ["run", "--condition", "C0", "--model", "oracle", "--sandbox", "local", "--data", str(DEMO_DATA),
            "--only", DEMO_TASK, "--out", str(tmp_path)]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    assert json.loads((tmp_path / "campaign.json").read_text())["condition"] == "C0"
    assert "oracle: pass@1 100.0 % over 1 planned cells (1 scored): complete" in first.output
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output


def test_an_in_process_adapter_is_flagged_wherever_the_figures_are(tmp_path):
    campaign = tmp_path / "mine"
    _manifest(campaign, [A])
    _record(A, 0, model="mine", agent_isolation="in-process").write(campaign / A / "rep0")
    result, data, markdown = _results(tmp_path / "out", campaign)
    assert data["models"]["oracle"]["agent_isolation"] == {"in-process": 1}
    assert "IN-PROCESS AGENT: Oracle: 1 run(s)" in markdown and "IN-PROCESS AGENT" in result.output
