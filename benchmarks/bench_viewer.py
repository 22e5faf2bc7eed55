"""`apex-voice view` on a synthetic 1,800-session campaign (120 tasks × 15 repetitions).

Two real sessions are recorded first (`apex-voice run` of the oracle and the no-op agent on one demo
task, local sandbox); every cell of the synthetic campaign is one of them under its own task id,
repetition and run id (hard links: the events and the 13 MB recording are not copied), with 1 cell
in 60 left unscored in `campaign.json`. Measured:

- the index: `read_site` (every `result.json`, the planned cells) and `data/index.js`'s size;
- the written folder: `apex-voice view CAMPAIGN --out DIR` (every session page, every recording linked);
- in Chromium (when installed): the campaign page opened from the disk until its 1,800 cells are
  counted and the rows in view drawn, re-sorting them, and one session page until its audio is ready. Aim: the campaign page
  in about a second.

    .venv/bin/python benchmarks/bench_viewer.py [--keep DIR] [--no-browser]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from typer.testing import CliRunner

from harness.cli.main import app
from harness.results.result_record import ResultRecord
from tui.web.campaign_index import read_site
from tui.web.session_page import build_session_page

DEMO_TASK = "demo_benefits_enrollment_001"
DEMO_DATA = Path(__file__).resolve().parents[1] / "harness" / "demo_data"
TASKS, REPS = 120, 15
UNSCORED_EVERY = 60
CHROMIUM = "/usr/lib/chromium/chromium"


def record_templates(root: Path) -> dict[str, Path]:
    """``{"oracle" | "noop": session_dir}`` of two real runs."""
    sessions = {}
    for model in ("oracle", "noop"):
        out = root / model
        result = CliRunner().invoke(app, ["run", "--model", model, "--data", str(DEMO_DATA), "--only", DEMO_TASK,
                                          "--sandbox", "local", "--out", str(out)])
        if result.exit_code not in (0, 1):
            raise SystemExit(f"run --model {model} failed: {result.output}")
        sessions[model] = next(out.glob(f"{DEMO_TASK}/rep0/*/events.jsonl")).parent
    return sessions


def link_tree(source: Path, target: Path) -> None:
    for path in source.rglob("*"):
        if path.is_file():
            (target / path.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
            os.link(path, target / path.relative_to(source))


def build_campaign(root: Path, templates: dict[str, Path]) -> Path:
    rng = random.Random(7)
    campaign = root / "campaign"
    planned: dict[str, list[int]] = {}
    unscored = []
    records = {name: ResultRecord.load(session.parent) for name, session in templates.items()}
    for t in range(TASKS):
        task = f"apexv1_{t:03d}"
        planned[task] = list(range(REPS))
        for rep in range(REPS):
            if (t * REPS + rep) % UNSCORED_EVERY == 7:
                unscored.append({"task_id": task, "rep": rep, "reason": "infrastructure",
                                 "detail": "sandbox did not start (3 attempts)"})
                continue
            name = "oracle" if rng.random() < 0.6 else "noop"
            template = records[name]
            assert template is not None
            run_id = f"{t:03d}{rep:02d}{name[0]}"
            rep_dir = campaign / task / f"rep{rep}"
            template.model_copy(update={"task_id": task, "rep": rep, "run_id": run_id}).write(rep_dir)
            link_tree(templates[name], rep_dir / run_id)
    manifest = {"model": "oracle", "condition": "C2", "repeats": REPS, "planned_cells": planned,
                "unscored_cells": unscored}
    (campaign / "campaign.json").write_text(json.dumps(manifest))
    return campaign


def browser_figures(site: Path, first_session: str) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    figures = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        loads = []
        for _ in range(3):
            page.goto("about:blank")
            page.goto((site / "index.html").as_uri())
            page.wait_for_function(f"(document.getElementById('count') || {{}}).textContent === "
                                   f"'{TASKS * REPS} of {TASKS * REPS} cells' && document.querySelector('#rows tr.cell')",
                                   polling=10)
            loads.append(page.evaluate("performance.now()"))
        figures["campaign page load ms (median of 3)"] = statistics.median(loads)
        started = page.evaluate("performance.now()")
        page.click("th[data-key=afa]")
        page.wait_for_selector("th.sorted-asc")
        figures["re-sort 1,800 rows ms"] = page.evaluate("performance.now()") - started
        page.goto("about:blank")
        page.goto(f"{(site / 'index.html').as_uri()}#/s/{first_session}")
        page.wait_for_function("document.getElementById('audio') && document.getElementById('audio').readyState >= 1")
        figures["session page until audio ready ms"] = page.evaluate("performance.now()")
        browser.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="Build in this directory and keep it.")
    parser.add_argument("--no-browser", action="store_true", help="Skip the Chromium figures.")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-viewer-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        templates = record_templates(root / "templates")
        started = time.perf_counter()
        campaign = build_campaign(root, templates)
        print(f"synthetic campaign: {TASKS} tasks x {REPS} reps, built in {time.perf_counter() - started:.1f} s")

        times = []
        for _ in range(3):
            started = time.perf_counter()
            site = read_site(campaign)
            times.append(time.perf_counter() - started)
        print(f"index (read_site): {len(site.index.cells)} cells, {len(site.sessions)} sessions, "
              f"median {statistics.median(times):.2f} s of 3")

        builds = []
        for page_id, source in list(site.sessions.items())[:20]:
            started = time.perf_counter()
            build_session_page(page_id, source.session_dir, source.record, audio_url="a.wav")
            builds.append(time.perf_counter() - started)
        print(f"one session page: median {statistics.median(builds) * 1000:.0f} ms of 20")

        out = root / "site"
        started = time.perf_counter()
        result = CliRunner().invoke(app, ["view", str(campaign), "--out", str(out), "--json"])
        elapsed = time.perf_counter() - started
        if result.exit_code != 0:
            raise SystemExit(f"view failed: {result.output}")
        summary = json.loads(result.output)
        sessions_bytes = sum(p.stat().st_size for p in (out / "data" / "sessions").iterdir())
        print(f"view --out: {elapsed:.1f} s for {summary['sessions']} sessions "
              f"({elapsed / summary['sessions'] * 1000:.0f} ms a session), {summary['recordings']} recordings linked")
        print(f"data/index.js: {summary['index_bytes'] / 1024:.0f} KiB "
              f"({summary['index_bytes'] / summary['cells']:.0f} bytes a cell); session files: "
              f"{sessions_bytes / summary['sessions'] / 1024:.1f} KiB each")
        if not args.no_browser and Path(CHROMIUM).exists():
            for name, value in browser_figures(out, next(iter(site.sessions))).items():
                print(f"chromium: {name}: {value:.0f}")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
