"""`apex-voice results` reproduces the published leaderboard (reference §11.1, §11.2) exactly.

The runs tree is built in the published layout from per-task outcomes that have the published
per-repetition passes and k-of-3 distribution of each of the five models.
"""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app

N_TASKS = 120
#: key, display name, rep passes (rep0..rep2), distribution (0/3..3/3) — reference §11.2.
PUBLISHED = [
    ("grok-voice", "Grok-Voice-Think-2.0", (24, 26, 33), (70, 23, 21, 6)),
    ("gpt-realtime", "GPT-realtime-2.1", (28, 27, 30), (76, 16, 15, 13)),
    ("gemini-live", "Gemini-3.8-Live", (19, 14, 16), (86, 21, 11, 2)),
    ("gpt-live-1", "GPT-live-1", (13, 7, 12), (101, 9, 7, 3)),
    ("step-audio3", "Step-Audio3", (3, 3, 3), (114, 4, 1, 1)),
]
#: Reference §11.1, as printed: pass@1 (mean of 3), pass@1 %, pass@3, pass@3 %, Reliable@3, Reliable@3 %.
LEADERBOARD = [
    ("Grok-Voice-Think-2.0", "120", "27.7", "23.1", "50", "41.7", "6", "5.0"),
    ("GPT-realtime-2.1", "120", "28.3", "23.6", "44", "36.7", "13", "10.8"),
    ("Gemini-3.8-Live", "120", "16.3", "13.6", "34", "28.3", "2", "1.7"),
    ("GPT-live-1", "120", "10.7", "8.9", "19", "15.8", "3", "2.5"),
    ("Step-Audio3", "120", "3.0", "2.5", "6", "5.0", "1", "0.8"),
]


def task_outcomes(rep_pass: tuple[int, ...], distribution: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """Per-task outcomes over 3 reps with exactly these rep sums and k-of-3 counts.

    Tasks passed twice fail one rep (``a[r]`` of them fail rep r); tasks passed once pass one rep
    (``b[r]``); then rep_pass[r] = d3 + d2 − a[r] + b[r]. Solved by search over a.
    """
    d0, d1, d2, d3 = distribution
    for a0, a1 in itertools.product(range(d2 + 1), repeat=2):
        a = (a0, a1, d2 - a0 - a1)
        b = tuple(rep_pass[r] - d3 - d2 + a[r] for r in range(3))
        if min(a) >= 0 and min(b) >= 0 and sum(b) == d1:
            break
    else:
        raise AssertionError("no per-task outcomes have these sums")
    rows = [(1, 1, 1)] * d3
    for r in range(3):
        rows += [tuple(int(i != r) for i in range(3))] * a[r]
        rows += [tuple(int(i == r) for i in range(3))] * b[r]
    rows += [(0, 0, 0)] * d0
    assert len(rows) == N_TASKS
    return rows


def write_published_campaign(root: Path, key: str, display: str, outcomes: list[tuple[int, int, int]]) -> Path:
    campaign = root / key
    campaign.mkdir(parents=True)
    (campaign / "campaign.json").write_text(json.dumps({"model": key, "display_name": display, "repeats": 3,
                                                        "condition": "C2", "n_tasks": N_TASKS}))
    for index, passes in enumerate(outcomes):
        task = f"apexv1_{index:03d}"
        for rep, pts in enumerate(passes):
            rep_dir = campaign / task / f"rep{rep}"
            rep_dir.mkdir(parents=True)
            row = {"task_id": task, "rep": rep, "model": key, "run_id": f"{index:03d}{rep}", "condition": "C2",
                   "pts": pts, "components": {"GS": True, "PC": True, "RA": True, "WA": bool(pts)}, "turns": 9,
                   "outcome": "SUCCESS" if pts else "FAILURE", "duplex": {}, "latency": {}, "wall_s": 200.0,
                   "error": None}
            (rep_dir / "result.json").write_text(json.dumps(row, indent=2))
    return campaign


@pytest.fixture(scope="module")
def published_tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("apex-voice-runs")
    for key, display, rep_pass, distribution in PUBLISHED:
        write_published_campaign(root, key, display, task_outcomes(rep_pass, distribution))
    return root


def _table(markdown: str, title: str) -> list[list[str]]:
    section = markdown.split(f"## {title}\n", 1)[1]
    table = section[section.index("\n|") + 1:].split("\n\n", 1)[0]
    lines = table.splitlines()
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


def test_the_published_leaderboard_is_reproduced_exactly(published_tree, tmp_path):
    out = tmp_path / "results"
    result = CliRunner().invoke(app, ["results", "--runs-root", str(published_tree), "--out", str(out), "--no-plots"])
    assert result.exit_code == 0, result.output
    markdown = (out / "results.md").read_text()
    assert [tuple(row) for row in _table(markdown, "Leaderboard")] == LEADERBOARD
    repetitions = _table(markdown, "Per-repetition pass@1 and k-of-3 distribution")
    assert [(row[0], *map(int, row[1:])) for row in repetitions] == [
        (display, *rep_pass, *distribution)
        for key, display, rep_pass, distribution in sorted(
            PUBLISHED, key=lambda p: [m[0] for m in LEADERBOARD].index(p[1]))
    ]

    data = json.loads((out / "results.json").read_text())
    # results.json lists models in campaign order (with --runs-root: the published registry order).
    assert list(data["models"]) == ["gpt-realtime", "grok-voice", "gemini-live", "gpt-live-1", "step-audio3"]
    grok = data["models"]["grok-voice"]
    assert (grok["n"], grok["pass_at_k"], grok["reliable_at_k"], grok["rep_pass"], grok["distribution"]) == (
        120, 50, 6, [24, 26, 33], [70, 23, 21, 6])
    assert grok["pass1_mean"] == pytest.approx(83 / 3)
    low, high = grok["ci95"]["pass1_pct"]
    assert low < 100 * 83 / 3 / 120 < high

    with (out / "per_task.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 120 and list(rows[0]) == [
        "task_id", "oracle_tool_calls", "grok-voice_passes_of_3", "gpt-realtime_passes_of_3",
        "gemini-live_passes_of_3", "gpt-live-1_passes_of_3", "step-audio3_passes_of_3"]
    assert sum(int(r["grok-voice_passes_of_3"]) for r in rows) == 24 + 26 + 33
    assert "slices.csv" not in {p.name for p in out.iterdir()}
    assert "tool ratios, taxonomy slices and correction uptake are left out" in markdown
