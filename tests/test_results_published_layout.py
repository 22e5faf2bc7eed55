"""A run in the published layout (no field verdicts, only the final workspace and events.jsonl) is read as published."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from typer.testing import CliRunner

from harness.agents.text_agents import ScriptedAgent
from harness.cli.main import app
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import run_text_session
from harness.tasks.loader import load_task

DEMO_TASKS = Path(__file__).resolve().parents[1] / "harness" / "demo_data" / "tasks"
TASK = "demo_auto_claim_intake_001"


def _final_workspace() -> dict:
    bundle = load_task(DEMO_TASKS / TASK)
    session = asyncio.run(run_text_session(bundle, ScriptedAgent.oracle(bundle.policy),
                                           InProcessEnvironment(bundle.public_bundle())))
    return {aid: art.model_dump(mode="json") for aid, art in session.snapshot.artifacts.items()}


def _published_run(campaign: Path, rep: int, workspace: dict, barges: list[tuple[bool, float]]) -> None:
    session = campaign / TASK / f"rep{rep}" / f"run{rep}"
    (session / "workspace").mkdir(parents=True)
    (session / "workspace" / "final_workspace.json").write_text(json.dumps(workspace))
    lines = [json.dumps({"seq": 0, "type": "RUN_START", "payload": {}})]
    lines += [json.dumps({"seq": i + 1, "type": "DUPLEX_EVENT",
                          "payload": {"type": "MID_SPEECH_CORRECTION", "agent_yielded": yielded, "isl_ms": isl}})
              for i, (yielded, isl) in enumerate(barges)]
    (session / "events.jsonl").write_text("\n".join(lines) + "\n")
    (session.parent / "result.json").write_text(json.dumps({
        "task_id": TASK, "rep": rep, "model": "gpt-realtime", "run_id": f"run{rep}", "condition": "C2", "pts": 1,
        "components": {"GS": True, "PC": True, "RA": True, "WA": True}, "turns": 9, "outcome": "SUCCESS",
        "duplex": {"n_events": len(barges), "fda": None, "isl_ms": {}, "overlap_ms": 10, "overlap_ratio": 0.01},
        "latency": {"response_start_latency_ms": {"median": 500, "n": 4}}, "wall_s": 300.0, "error": None,
    }))


def test_published_runs_are_regraded_and_their_barge_ins_read_from_events(tmp_path):
    workspace = _final_workspace()
    wrong = json.loads(json.dumps(workspace))
    wrong["claim_1"]["fields"]["incident_date"] = "2026-05-13"  # the corrected field left wrong
    campaign = tmp_path / "apex-voice-runs" / "gpt-realtime"
    _published_run(campaign, 0, workspace, [(True, 120.0), (True, 8.0)])
    _published_run(campaign, 1, wrong, [(False, 0.0)])
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["results", "--runs-root", str(tmp_path / "apex-voice-runs"), "--repeats", "2",
                                      "--out", str(out), "--no-plots"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    model = json.loads((out / "results.json").read_text())["models"]["gpt-realtime"]
    # The stored PTS counts for the leaderboard; the slices re-grade the workspace (analysis rule).
    assert (model["pass_at_k"], model["reliable_at_k"]) == (1, 1)
    duplex = model["duplex"]
    # 3 barge-ins, 2 yielded; the 8 ms sample is below the published 10 ms floor.
    assert (duplex["yield_pct"], duplex["stop_p50_ms"], duplex["n_barge_ins"]) == (200 / 3, 120.0, 1)
    assert duplex["n_yield_events_audio"] == 0  # no audio-measured records in the published layout
    # Correction uptake: incident_date is the corrected field; wrong in 1 of 2 runs, and that run fails WA.
    assert (duplex["afa_corrected"], duplex["afa_other"], duplex["attrib_pct"]) == (50.0, 100.0, 100.0)
    slices = json.loads((out / "results.json").read_text())["slices"]
    (intake,) = [row for row in slices["archetype"] if row["label"] == "INTAKE"]
    assert intake["gpt-realtime"]["success"] == 0.5
