"""Issue 34's drifted numbers, read through ``apex-voice results``: the ranking by rates, and the
published yield column with no-opportunity barge-ins left out and counted beside it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.campaign.manifest import CampaignManifest, write_manifest
from harness.cli.main import app
from harness.events import EventType
from harness.metrics.duplex_metrics import duplex_metrics
from harness.results.result_record import ResultRecord
from tests.event_builders import events


def _campaign(root: Path, model: str, n_tasks: int, passes: int, *, duplex: dict | None = None) -> Path:
    path = root / model
    tasks = [f"task_{i:02d}" for i in range(n_tasks)]
    write_manifest(path, CampaignManifest(
        model=model, display_name=model, repeats=1, max_turns=44, user_audio="auto", n_tasks=n_tasks, task_ids=tasks,
        planned_cells={t: [0] for t in tasks}, acoustics="none", tool_mode="bridge"))
    for i, task in enumerate(tasks):
        pts = int(i < passes)
        ResultRecord(task_id=task, rep=0, model=model, run_id=f"{task}-0", pts=pts,
                     components={"GS": True, "PC": True, "RA": True, "WA": bool(pts)},
                     outcome="SUCCESS" if pts else "FAILURE", duplex=duplex).write(path / task / "rep0")
    return path


def _results(out: Path, *dirs: Path) -> tuple[dict, str]:
    result = CliRunner().invoke(app, ["results", *map(str, dirs), "--out", str(out), "--no-plots"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads((out / "results.json").read_text()), (out / "results.md").read_text()


def _leaderboard_order(markdown: str) -> list[str]:
    section = markdown.split("## Leaderboard", 1)[1].split("\n## ", 1)[0]
    return [line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| ") and "---" not in line][1:]


def test_campaigns_are_ranked_by_rates_not_counts(tmp_path):
    a = _campaign(tmp_path, "model-a", 10, 6)  # 6/10 = 60 %
    b = _campaign(tmp_path, "model-b", 5, 4)  # 4/5 = 80 %: fewer passes, the higher rate
    data, markdown = _results(tmp_path / "out", a, b)
    assert (data["models"]["model-a"]["pass_at_k"], data["models"]["model-b"]["pass_at_k"]) == (6, 4)
    assert _leaderboard_order(markdown) == ["model-b", "model-a"]


def test_equal_rates_are_ordered_by_their_interval_whatever_the_order_given(tmp_path):
    small = _campaign(tmp_path, "small", 5, 3)  # 60 % of 5 tasks
    large = _campaign(tmp_path, "large", 20, 12)  # 60 % of 20 tasks: the narrower interval
    data, first = _results(tmp_path / "one", small, large)
    _, second = _results(tmp_path / "two", large, small)
    low = {key: model["ci95"]["pass1_pct"][0] for key, model in data["models"].items()}
    assert low["large"] > low["small"]
    assert _leaderboard_order(first) == _leaderboard_order(second) == ["large", "small"]


def _delivery(event_id: str, *, yielded: bool | None, stop: int | None = None, **extra) -> tuple:
    return (EventType.DUPLEX_EVENT, 1000, {
        "event_id": event_id, "type": "MID_SPEECH_CORRECTION", "delivery": "BARGE_IN", "onset_ms": 1000,
        "expected_floor_action": "YIELD", "agent_speaking_at_onset": True, "stop_latency_ms": stop, "isl_ms": stop,
        "max_stop_latency_ms": 1000, "agent_yielded": yielded, "yield_opportunity": True, **extra})


def test_the_published_yield_column_leaves_out_barge_ins_without_a_floor_and_agrees_with_the_run(tmp_path):
    # One yield, one barge-in over silence, one over audio that finished on its own (as the session writes them).
    duplex = duplex_metrics(events(
        _delivery("e1", yielded=True, stop=300, floor_outcome="yielded"),
        _delivery("e2", yielded=None, agent_speaking_at_onset=False, yield_opportunity=False,
                  no_opportunity="agent_silent"),
        _delivery("e3", yielded=False, stop=200, floor_outcome="finished"),
        (EventType.RUN_END, 4000, {}),
    ))
    assert duplex["isl_ms"]["miss_rate"] == 0.0  # the run's own reading: nothing missed
    campaign = _campaign(tmp_path, "model-a", 1, 1, duplex=duplex)
    data, markdown = _results(tmp_path / "out", campaign)
    pooled = data["models"]["model-a"]["duplex"]
    # Before: 1 yielded of 3 = 33.3 %. Now: 1 of 1, and the two without a floor counted beside it.
    assert (pooled["yield_pct"], pooled["n_yield_events"], pooled["n_yield_no_opportunity"]) == (100.0, 1, 2)
    assert pooled["yield_pct"] == 100.0 * (1 - duplex["isl_ms"]["miss_rate"])
    assert pooled["yield_pct_audio"] == 100.0
    assert "| model-a | 0.0 | 100.0 | 2 | 300 | 300 | 100.0 | 300 | 300 | 1 |" in markdown


def test_a_result_json_written_before_the_fix_is_read_the_same_way(tmp_path):
    # The older writer turned agent_yielded None into False; ``correct: None`` still says it was not scored.
    listed = [
        {"type": "MID_SPEECH_CORRECTION", "expected_floor_action": "YIELD", "agent_speaking_at_onset": True,
         "agent_yielded": True, "stop_latency_ms": 300, "isl_ms": 300, "correct": True},
        {"type": "MID_SPEECH_CORRECTION", "expected_floor_action": "YIELD", "agent_speaking_at_onset": False,
         "agent_yielded": False, "stop_latency_ms": None, "isl_ms": None, "correct": None,
         "no_opportunity": "agent_silent"},
        {"type": "MID_SPEECH_CORRECTION", "expected_floor_action": "YIELD", "agent_speaking_at_onset": True,
         "agent_yielded": False, "stop_latency_ms": 200, "isl_ms": 200, "correct": None, "floor_outcome": "finished"},
    ]
    campaign = _campaign(tmp_path, "model-a", 1, 1, duplex={"n_events": 3, "events": listed})
    data, _ = _results(tmp_path / "out", campaign)
    pooled = data["models"]["model-a"]["duplex"]
    assert (pooled["yield_pct"], pooled["n_yield_no_opportunity"]) == (100.0, 2)


def test_slices_and_uptake_use_the_campaigns_denominator_and_only_repetitions_below_k(tmp_path):
    from tests.test_results_tables import BENEFITS, CLAIM, DEMO_TASKS, _row

    data = tmp_path / "tasks"
    for task in (CLAIM, BENEFITS):
        shutil.copytree(DEMO_TASKS / task, data / task)
    path = tmp_path / "runs" / "model-a"
    write_manifest(path, CampaignManifest(
        model="model-a", display_name="model-a", repeats=2, max_turns=44, user_audio="auto", n_tasks=2,
        task_ids=[CLAIM, BENEFITS], planned_cells={CLAIM: [0, 1], BENEFITS: [0, 1]}, acoustics="none",
        tool_mode="bridge"))
    for rep, (pts, score) in enumerate(((1, 1.0), (0, 0.0))):  # rep1 lies beyond k = 1: it must not count
        ResultRecord(task_id=CLAIM, rep=rep, model="model-a", run_id=f"r{rep}", pts=pts,
                     components={"GS": True, "PC": True, "RA": True, "WA": bool(pts)},
                     outcome="SUCCESS" if pts else "FAILURE",
                     fields=[_row("claim_1", "incident_date", score)]).write(path / CLAIM / f"rep{rep}")
    # BENEFITS rep0 never ran: a failure here too, read as an empty workspace (11 required fields missed).
    result = CliRunner().invoke(app, ["results", str(path), "--repeats", "1", "--data", str(data), "--out",
                                      str(tmp_path / "out"), "--no-plots"], catch_exceptions=False)
    assert result.exit_code == 1, result.output  # written; the unrun cell leaves the campaign incomplete
    out = json.loads((tmp_path / "out" / "results.json").read_text())
    archetype = {row["label"]: row["model-a"] for row in out["slices"]["archetype"]}
    assert archetype["INTAKE"] == {"success": 1.0, "afa": 1.0}  # claim rep0 only
    assert archetype["FORM_FILL"] == {"success": 0.0, "afa": 0.0}  # the cell that never ran
    duplex = out["models"]["model-a"]["duplex"]
    # Corrected fields: claim's incident_date right in rep0, benefits' fsa election missed -> 50 %;
    # other required fields: claim's 12 kept, benefits' 10 missed -> 12 of 22; the one WA failure (the empty
    # cell) is attributed to its corrected field.
    assert (duplex["afa_corrected"], duplex["afa_other"], duplex["attrib_pct"]) == (50.0, pytest.approx(100.0 * 12 / 22), 100.0)
