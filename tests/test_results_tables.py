"""Every other table on a small synthetic tree, against figures computed by hand (see the comments)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.grading.report import FieldRow
from harness.results.result_record import ResultRecord

DEMO_TASKS = Path(__file__).resolve().parents[1] / "harness" / "demo_data" / "tasks"
CLAIM, BENEFITS = "demo_auto_claim_intake_001", "demo_benefits_enrollment_001"  # oracle calls 13 and 12


def _row(artifact: str, name: str, score: float, tier: str = "deterministic") -> FieldRow:
    return FieldRow(artifact=artifact, field=name, grader="exact", tier=tier, score=score, required=True, present=True)


def _write(campaign: Path, task: str, rep: int, *, pts: int | None, wa: bool | None, rsl: float, ttr_ms: float,
           calls: int, overlap: float = 0.0, events: list | None = None, fields: list | None = None,
           cost: float | None = None, early_starts: int = 0) -> None:
    components = {"GS": True, "PC": True, "RA": True} | ({} if wa is None else {"WA": wa})
    record = ResultRecord(
        task_id=task, rep=rep, model=campaign.name, run_id=f"r{rep}", pts=pts, components=components,
        outcome="SUCCESS" if pts else "FAILURE", fields=fields or [], cost_usd=cost,
        latency={"response_start_latency_ms": {"median": rsl, "n": 3, "early_starts": early_starts},
                 "time_to_resolution_ms": ttr_ms,
                 "tool_calls": calls},
        duplex={"n_events": len(events or []), "events": events or [], "overlap_ratio": overlap},
    )
    record.write(campaign / task / f"rep{rep}")


def _barge(yielded: bool, stop_ms: float | None, isl_ms: float | None) -> dict:
    return {"type": "MID_SPEECH_CORRECTION", "expected_floor_action": "YIELD", "agent_speaking_at_onset": True,
            "agent_yielded": yielded, "stop_latency_ms": stop_ms, "isl_ms": isl_ms, "correct": yielded}


@pytest.fixture
def tree(tmp_path) -> tuple[Path, Path]:
    data = tmp_path / "tasks"
    for task in (CLAIM, BENEFITS):
        shutil.copytree(DEMO_TASKS / task, data / task)
    runs = tmp_path / "runs"
    alpha, beta = runs / "alpha", runs / "beta"
    date_ok, date_bad = _row("claim_1", "incident_date", 1.0), _row("claim_1", "incident_date", 0.0)
    fsa_ok = _row("enrollment_1", "fsa_annual_election", 1.0)
    _write(alpha, CLAIM, 0, pts=1, wa=True, rsl=400, ttr_ms=100_000, calls=13, overlap=0.02,
           events=[_barge(True, 200, 150)], fields=[date_ok], cost=0.25, early_starts=1)
    _write(alpha, CLAIM, 1, pts=0, wa=False, rsl=600, ttr_ms=200_000, calls=26, overlap=0.06,
           events=[_barge(False, None, None)], fields=[date_bad], cost=0.25)
    _write(alpha, BENEFITS, 0, pts=1, wa=True, rsl=800, ttr_ms=150_000, calls=12, fields=[fsa_ok], cost=0.25)
    _write(alpha, BENEFITS, 1, pts=1, wa=True, rsl=1000, ttr_ms=250_000, calls=12, fields=[fsa_ok], cost=0.25)
    _write(beta, CLAIM, 0, pts=0, wa=False, rsl=500, ttr_ms=100_000, calls=5, fields=[date_bad])
    _write(beta, CLAIM, 1, pts=0, wa=False, rsl=500, ttr_ms=100_000, calls=5, fields=[date_bad])
    _write(beta, BENEFITS, 0, pts=1, wa=True, rsl=500, ttr_ms=100_000, calls=6, fields=[fsa_ok])
    _write(beta, BENEFITS, 1, pts=None, wa=None, rsl=500, ttr_ms=100_000, calls=6,
           fields=[_row("enrollment_1", "fsa_annual_election", 0.0, tier="pending")])
    return runs, data


def _results(runs: Path, data: Path | None, out: Path, *extra: str):
    args = ["results", str(runs / "beta"), str(runs / "alpha"), "--repeats", "2", "--out", str(out), *extra]
    if data is not None:
        args += ["--data", str(data)]
    return CliRunner().invoke(app, args, catch_exceptions=False)


def test_every_table_matches_the_hand_computed_figures(tree, tmp_path):
    runs, data = tree
    out = tmp_path / "out"
    result = _results(runs, data, out, "--compare", "alpha", "beta")
    assert result.exit_code == 1, result.output  # written; the pending cell leaves beta incomplete
    models = json.loads((out / "results.json").read_text())["models"]
    assert list(models) == ["beta", "alpha"]  # campaign order (the tables are ranked: alpha first)
    a, b = models["alpha"], models["beta"]

    # Reliability: alpha claim (1, 0), benefits (1, 1); beta's benefits rep1 is still pending -> a failure
    # (listed as pending) until regraded: claim (0, 0), benefits (1, 0).
    assert (a["n"], a["rep_pass"], a["distribution"], a["pass1_mean"], a["pass_at_k"], a["reliable_at_k"]) == (
        2, [2, 1], [0, 1, 1], 1.5, 2, 1)
    assert (b["n"], b["pass_at_k"], b["pass1_mean"], b["incomplete_tasks"], b["pending_runs"]) == (2, 1, 0.5, [], 1)
    assert [(c["task_id"], c["rep"], c["reason"], c["counted_as"]) for c in b["unscored"]] == [
        (BENEFITS, 1, "pending", "failure")]
    # Gates pooled over runs: alpha WA 3/4; beta's pending run carries no WA -> 1/3.
    assert (a["gate_pass"]["WA"], a["gate_total"]["WA"], a["gate_rates"]["WA"]) == (3, 4, 75.0)
    assert (b["gate_pass"]["WA"], b["gate_total"]["WA"], b["gate_rates"]["WA"], b["gate_total"]["GS"]) == (1, 3, 33.3, 4)
    # Latency: RSL medians 400/600/800/1000 -> p50 700, p95 800 + 0.85·200; TTR 100/150/200/250 s.
    assert (a["rsl_p50"], a["rsl_p95"], a["ttr_p50"], a["ttr_p95"]) == (700.0, pytest.approx(970.0), 175.0, 242.5)
    # Tool use: (13+26+12+12)/4 calls; ratios claim 19.5/13 = 1.5, benefits 12/12 = 1.
    assert (a["tool_calls_mean"], a["tool_ratio_mean"], a["tool_ratio_p50"]) == (15.75, 1.25, 1.25)
    assert a["tool_ratio_by_task"] == {CLAIM: 1.5, BENEFITS: 1.0}
    # Floor control: overlap mean(0.02, 0.06, 0, 0) = 2 %; both readings 1 of 2 yielded.
    d = a["duplex"]
    assert d["overlap_pct"] == pytest.approx(2.0)
    assert (d["yield_pct"], d["stop_p50_ms"], d["n_barge_ins"]) == (50.0, 150.0, 1)
    assert (d["yield_pct_audio"], d["stop_latency_p50_ms"], d["n_stop_latency"]) == (50.0, 200.0, 1)
    # Correction uptake: corrected fields claim.incident_date and enrollment.fsa_annual_election, 4 verdicts,
    # 1 bad (claim rep1) -> 75 %; 12 + 10 other required fields per run, none bad -> 100 %; the one WA
    # failure is attributed to the corrected field.
    assert (d["afa_corrected"], d["afa_other"], d["gap"], d["attrib_pct"]) == (75.0, 100.0, 25.0, 100.0)
    # τ-voice panel: 1 of 2 barge-ins yielded within 2 s; 1 early start among 4 × 3 answered turns.
    assert a["interaction"] == {"L_R_p50_ms": 700.0, "L_Y_p50_ms": 200.0, "R_Y": 0.5, "R_Y_n": 2,
                                "I_A": 1 / 12, "I_A_n": 12}
    # Cost: 4 × 0.25 USD over 3 passes.
    assert (a["cost_usd_total"], a["cost_per_pass_usd"], b["cost_runs"]) == (1.0, 0.3333, 0)

    data_json = json.loads((out / "results.json").read_text())
    archetype = {row["label"]: row for row in data_json["slices"]["archetype"]}
    assert archetype["INTAKE"]["alpha"] == {"success": 0.5, "afa": 0.5}
    assert archetype["FORM_FILL"]["alpha"] == {"success": 1.0, "afa": 1.0}
    # The pending run is a failure here too: success mean(1, 0); AFA 1 of 1 + 0 of its 11 required fields.
    assert archetype["FORM_FILL"]["beta"] == {"success": 0.5, "afa": 1 / 12}
    compare = data_json["compare"]
    assert (compare["n_tasks"], compare["pass1_diff_pp"], compare["wins"], compare["losses"], compare["sign_test_p"]) == (
        2, 50.0, 2, 0, 0.5)

    with (out / "tooluse_by_task.csv").open() as handle:
        assert list(csv.reader(handle)) == [
            ["task_id", "oracle_tool_calls", "alpha_tool_ratio", "beta_tool_ratio"],
            [CLAIM, "13", "1.500", "0.385"], [BENEFITS, "12", "1.000", "0.500"]]
    with (out / "per_task.csv").open() as handle:
        assert list(csv.reader(handle))[1:] == [[CLAIM, "13", "1", "0"], [BENEFITS, "12", "2", "1"]]
    with (out / "slices.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert {"axis": "archetype", "label": "INTAKE", "n": "1", "model": "alpha", "success": "0.5000",
            "afa": "0.5000"} in rows

    markdown = (out / "results.md").read_text()
    assert "| alpha | 2 | 1.5 | 75.0 | 2 | 100.0 | 1 | 50.0 |" in markdown
    assert "| alpha | 4 | 100.0 (4) | 100.0 (4) | 100.0 (4) | 75.0 (3) |" in markdown
    assert "| alpha | 700 | 970 | 175.0 | 242.5 | 15.8 | 1.25 | 1.25 |" in markdown
    assert "| alpha | 2.0 | 50.0 | 0 | 150 | 150 | 50.0 | 200 | 200 | 1 | 75.0 | 100.0 | +25.0 | 100.0 |" in markdown
    assert "1 run(s) wait on pending judge verdicts" in markdown
    assert "| alpha | 700 | 200 | 50.0 (n=2) | 8.3 (n=12) |" in markdown
    assert "## Paired comparison: alpha vs beta (ours)" in markdown
    assert "### Archetype" in markdown and "| INTAKE (1) | 50% (50%) | 0% (0%) |" in markdown
    for png in ("leaderboard.png", "gates.png", "afa_vs_pts.png", "latency.png", "slices.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_task_packages_the_tables_that_need_them_are_left_out(tree, tmp_path, monkeypatch):
    runs, _ = tree
    for campaign in ("alpha", "beta"):  # tasks outside the bundled suite: no facts at hand
        for task in (CLAIM, BENEFITS):
            shutil.move(runs / campaign / task, runs / campaign / f"x_{task}")
            for rep_dir in (runs / campaign / f"x_{task}").iterdir():
                record = ResultRecord.read(rep_dir)
                record.model_copy(update={"task_id": f"x_{task}"}).write(rep_dir)
    out = tmp_path / "out"
    result = _results(runs, None, out, "--no-plots")
    assert result.exit_code == 1, result.output  # written; the pending cell leaves beta incomplete
    assert not (out / "slices.csv").exists()
    data = json.loads((out / "results.json").read_text())
    assert data["slices"] is None and data["models"]["alpha"]["tool_ratio_mean"] is None
    assert data["models"]["alpha"]["pass_at_k"] == 2
    assert "left out" in (out / "results.md").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "no campaigns"),
        (["--run", "nonsense"], "expected KEY=DIR"),
        (["--compare", "alpha", "gamma"], "no campaign named gamma"),
    ],
)
def test_usage_errors(tree, tmp_path, args, message):
    runs, _ = tree
    if args[:1] == ["--compare"]:
        args = [str(runs / "alpha"), *args]
    result = CliRunner().invoke(app, ["results", "--out", str(tmp_path / "o"), *args])
    assert result.exit_code == 2 and message in result.output


def test_runs_root_picks_every_campaign_and_run_renames(tree, tmp_path):
    runs, data = tree
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["results", "--runs-root", str(runs), "--run", f"gamma={runs / 'beta'}",
                                      "--data", str(data), "--out", str(out), "--no-plots"])
    assert result.exit_code == 1, result.output  # written; the pending cell leaves beta incomplete
    assert json.loads((out / "results.json").read_text())["reps"] == 2  # no campaign.json: the reps found
    assert "| gamma | 1 |" in (out / "results.md").read_text()  # a renamed campaign shows its new name
    assert list(json.loads((out / "results.json").read_text())["models"]) == ["alpha", "beta", "gamma"]
    assert "| alpha | 2 |" in (out / "results.md").read_text().split("## Leaderboard", 1)[1].split("\n\n")[1]


def test_unusable_result_files_are_warned_about_and_skipped(tree, tmp_path):
    runs, data = tree
    (runs / "alpha" / CLAIM / "rep1" / "result.json").unlink()
    (runs / "alpha" / CLAIM / "rep1" / "result.json").mkdir()
    (runs / "alpha" / BENEFITS / "rep1" / "result.json").write_text("{oops")
    out = tmp_path / "out"
    result = _results(runs, data, out, "--no-plots")
    assert result.exit_code == 1  # written; beta is incomplete
    assert f"warning: {runs / 'alpha' / CLAIM / 'rep1' / 'result.json'}: is a directory, not a file" in result.output
    assert "rep1/result.json: not JSON" in result.output
    alpha = json.loads((out / "results.json").read_text())["models"]["alpha"]
    assert (alpha["n"], alpha["runs"], len(alpha["problems"])) == (0, 2, 2)
