"""The demo suite with three repetitions, run through the CLI: the noise-floor lines of `results`
against a direct computation from the result.json files, and `apex-voice metrics` on our own runs
(ours equals result.json)."""

from __future__ import annotations

import json
import shutil
from math import comb, sqrt
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from tests.conftest import DEMO_DATA

pytestmark = pytest.mark.slow

K = 3
#: Cells made to fail in a copy of the oracle campaign, so that verdicts flip.
FLIPPED = [("demo_auto_claim_intake_001", 1), ("demo_hvac_inspection_001", 0), ("demo_hvac_inspection_001", 2)]


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("campaigns")
    oracle = root / "oracle"
    result = CliRunner().invoke(app, ["run", "--data", str(DEMO_DATA), "--sandbox", "local", "--repeats", str(K),
                                      "--out", str(oracle)])
    assert result.exit_code == 0, result.output
    # The run's own table ends with the noise floor too: the oracle never flips.
    assert "noise floor: oracle: verdict flips in 0/10 tasks (0.0 %)" in result.output
    flaky = root / "flaky"
    shutil.copytree(oracle, flaky)
    for task, rep in FLIPPED:
        path = flaky / task / f"rep{rep}" / "result.json"
        record = json.loads(path.read_text())
        record.update(pts=0, outcome="FAILURE")
        path.write_text(json.dumps(record))
    return {"oracle": oracle, "flaky": flaky}


def _verdicts(campaign: Path) -> dict[str, list[int]]:
    """Direct: every task's PTS per repetition, read from the files."""
    verdicts: dict[str, list[int]] = {}
    for path in sorted(campaign.glob("*/rep*/result.json")):
        verdicts.setdefault(path.parent.parent.name, [0] * K)[int(path.parent.name[3:])] = json.loads(path.read_text())["pts"]
    return verdicts


def test_noise_floor_lines_match_a_direct_computation(campaigns, tmp_path):
    out = tmp_path / "results"
    result = CliRunner().invoke(app, ["results", str(campaigns["oracle"]), "--run", f"flaky={campaigns['flaky']}",
                                      "--out", str(out), "--no-plots", "--compare", "oracle", "flaky"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    figures = json.loads((out / "results.json").read_text())
    for key, campaign in campaigns.items():
        verdicts = _verdicts(campaign)
        n = len(verdicts)
        passes = [sum(v) for v in verdicts.values()]
        flips = sum(0 < s < K for s in passes)
        pass_hat = [sum(comb(s, j) for s in passes) / (comb(K, j) * n) for j in range(1, K + 1)]
        variance = sum(s * (K - s) / (K * K * (K - 1)) for s in passes) / n
        mde = 100 * 2.8015852 * sqrt(2 * variance / n)
        floor = figures["models"][key]["noise_floor"]
        assert floor["flip_rate"] == pytest.approx(flips / n)
        assert floor["pass_hat"] == pytest.approx(pass_hat)
        assert floor["pass_hat"][-1] * n == figures["models"][key]["reliable_at_k"]
        assert floor["mde_pp"] == pytest.approx(mde, abs=1e-4)
        line = f"noise floor: {key}: verdict flips in {flips}/{n} tasks ({100 * flips / n:.1f} %)"
        assert line in result.output.replace("\n", " ")
        assert f"pass^{K} {100 * pass_hat[-1]:.1f} %" in (out / "results.md").read_text()
    # The oracle is deterministic: no noise; the flaky copy flips 2 of its 10 tasks.
    assert figures["models"]["oracle"]["noise_floor"]["mde_pp"] == 0.0
    assert figures["models"]["flaky"]["noise_floor"]["flipping_tasks"] == ["demo_auto_claim_intake_001",
                                                                           "demo_hvac_inspection_001"]
    pair = figures["compare_noise"]
    flaky_passes = [sum(v) for v in _verdicts(campaigns["flaky"]).values()]
    n = len(flaky_passes)
    assert pair["diff_pp"] == pytest.approx(100 * (K * n - sum(flaky_passes)) / (K * n))  # 10 pp
    assert pair["mde_pp"] == pytest.approx(100 * 2.8015852 * sqrt(sum(s * (K - s) / 18 for s in flaky_passes) / n / n), abs=1e-4)
    assert pair["inside_noise"] is (pair["diff_pp"] < pair["mde_pp"])
    assert "inside the noise" in result.output.replace("\n", " ")


def test_metrics_on_our_own_run_equals_result_json(campaigns):
    cell = campaigns["oracle"] / "demo_auto_claim_intake_001" / "rep0"
    result = CliRunner().invoke(app, ["metrics", str(cell), "--json", "--no-asr"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    record = json.loads((cell / "result.json").read_text())
    ours = report["variants"]["ours_events"]
    assert report["session"] and report["speech"]["tool_calls"] > 0
    assert ours["rsl_median_ms"] == record["latency"]["response_start_latency_ms"]["median"]
    assert ours["rsl_n"] == record["latency"]["response_start_latency_ms"]["n"]
    assert ours["stop_latency_median_ms"] == record["duplex"]["stop_latency_ms"]["median"]
    assert ours["overlap_ratio"] == record["duplex"]["overlap_ratio"]
    # From the audio, with the same segmentation, ours reads the same turns.
    assert report["variants"]["ours_audio"]["rsl_n"] == ours["rsl_n"]
    rows = {row["variant"]: row["value"] for row in report["rows"]}
    assert rows["ours RSL median (events = result.json)"] == ours["rsl_median_ms"]
    assert rows["EVA turn_taking score"] is not None and rows["τ-Voice L_R (mean, 200 ms ticks)"] is not None


def test_metrics_on_a_campaign_pools_every_cell(campaigns):
    result = CliRunner().invoke(app, ["metrics", str(campaigns["oracle"]), "--json", "--no-asr"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    pooled = json.loads(result.output)
    assert pooled["sessions"] == 10 * K and len(pooled["per_task"]) == 10 and not pooled["skipped"]
    rsl = {row["variant"]: row for row in pooled["rows"]}["ours RSL median (events = result.json)"]
    records = [json.loads(p.read_text())["latency"]["response_start_latency_ms"]
               for p in sorted(campaigns["oracle"].glob("*/rep*/result.json"))]
    # Weighted by each session's n: Σ median·n / Σ n over the sessions that have one.
    valued = [r for r in records if r["median"] is not None]
    assert rsl["n"] == sum(r["n"] for r in records)
    assert rsl["value"] == pytest.approx(sum(r["median"] * r["n"] for r in valued) / sum(r["n"] for r in valued), abs=1e-3)


def test_results_with_metrics_adds_the_sources_columns(campaigns, tmp_path):
    # Two tasks of the campaign, as a directory of runs without a manifest (the plan is what is present).
    trimmed = tmp_path / "oracle2"
    for task in ("demo_auto_claim_intake_001", "demo_hvac_inspection_001"):
        shutil.copytree(campaigns["oracle"] / task, trimmed / task)
    out = tmp_path / "results"
    result = CliRunner().invoke(app, ["results", str(trimmed), "--out", str(out), "--metrics", "tau-voice,eva,ours"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    rows = json.loads((out / "results.json").read_text())["compared_metrics"]["oracle2"]  # named by its directory
    variants = {row["variant"] for row in rows}
    assert "τ-Voice L_R (mean, 200 ms ticks)" in variants and "EVA turn_taking score" in variants
    assert not any(v.startswith("FDB") for v in variants)  # not asked for
    rsl = next(r for r in rows if r["variant"] == "ours RSL median (events = result.json)")
    records = [json.loads(p.read_text())["latency"]["response_start_latency_ms"] for p in sorted(trimmed.glob("*/rep*/result.json"))]
    assert rsl["n"] == sum(r["n"] for r in records)
    assert "## Turn-taking under other benchmarks' definitions" in (out / "results.md").read_text()
    assert (out / "compared_metrics.png").stat().st_size > 0
