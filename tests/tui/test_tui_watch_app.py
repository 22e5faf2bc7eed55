"""``apex-voice watch`` over a campaign directory: the table, opening a session, and tailing a
session while another process writes it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import pytest

from harness.events import RunEvent, read_event_lines
from tests.tui.helpers import DEMO_TASK, session_dir, shown, until
from tui.monitor_app import WatchApp
from tui.screens import SessionScreen
from tui.sources.runs_dir import RunsDirWatcher
from tui.state import CampaignView, reduce_all, rows
from tui.state.updates import CampaignSeen, EventsRead, ResultRead, apply_update
from tui.widgets.session_parts import render_verdict


async def test_the_campaign_table_shows_each_cell_and_enter_opens_it(recorded_runs):
    app = WatchApp(recorded_runs["noop"])
    async with app.run_test(size=(120, 30)) as pilot:
        key = (DEMO_TASK, 0)
        await until(pilot, lambda: key in app.campaign.results and app.campaign.sessions.get(key))
        await until(pilot, lambda: "failed" in shown(app.screen.query_one("#cells")))
        table = shown(app.screen.query_one("#cells"))
        assert DEMO_TASK in table and "failed" in table
        assert "GS✗ PC✓ RA✗ WA✗" in table and "0.00" in table
        assert "1 run: 1 failed" in shown(app.screen.query_one("#campaign-title"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and "AFA" in shown(app.screen.query_one("#gates")))
        assert "verdict FAILURE pts 0 (closing) AFA 0.00" in shown(app.screen.query_one("#gates"))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, SessionScreen))


_WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    lines = Path(sys.argv[1]).read_bytes().splitlines(keepends=True)
    out = Path(sys.argv[2])
    out.parent.mkdir(parents=True)
    with out.open("wb") as f:
        for i, line in enumerate(lines):
            if i % 7 == 3:  # a torn write: half a line, flushed, then the rest
                f.write(line[: len(line) // 2]); f.flush(); time.sleep(0.02)
                f.write(line[len(line) // 2 :])
            else:
                f.write(line)
            f.flush()
            if i % 20 == 0:
                time.sleep(0.01)
    """
)


def test_a_session_tailed_while_another_process_writes_it(recorded_runs, tmp_path):
    recorded = session_dir(recorded_runs["oracle"]) / "events.jsonl"
    (tmp_path / "campaign.json").write_text(json.dumps({"model": "oracle", "repeats": 1, "task_ids": [DEMO_TASK]}))
    target = tmp_path / DEMO_TASK / "rep0" / "abc123" / "events.jsonl"
    updates = []
    watcher = RunsDirWatcher(tmp_path, updates.append, rescan_every=1)
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(recorded), str(target)])
    try:
        expected = read_event_lines(recorded)
        deadline = time.monotonic() + 60
        while True:
            watcher.poll()
            tailed: list[RunEvent] = [e for u in updates if isinstance(u, EventsRead) for e in u.events]
            if len(tailed) >= len(expected) or time.monotonic() > deadline:
                break
            time.sleep(0.005)
    finally:
        assert writer.wait(timeout=60) == 0
    assert isinstance(updates[0], CampaignSeen) and updates[0].cells == ((DEMO_TASK, 0),)
    assert [e.seq for e in tailed] == [e.seq for e in expected]  # every line once, none torn
    assert reduce_all(tailed) == reduce_all(expected)
    assert not [u for u in updates if isinstance(u, ResultRead)]


def test_a_retried_session_restarts_the_cells_view(recorded_runs, tmp_path):
    recorded = (session_dir(recorded_runs["oracle"]) / "events.jsonl").read_bytes()
    first = tmp_path / DEMO_TASK / "rep0" / "first" / "events.jsonl"
    first.parent.mkdir(parents=True)
    first.write_bytes(recorded[:2000])
    updates = []
    watcher = RunsDirWatcher(tmp_path, updates.append, rescan_every=1)
    watcher.poll()
    time.sleep(0.01)
    second = tmp_path / DEMO_TASK / "rep0" / "second" / "events.jsonl"
    second.parent.mkdir(parents=True)
    second.write_bytes(recorded)
    watcher.poll()
    kinds = [type(u).__name__ for u in updates]
    assert kinds == ["EventsRead", "SessionRestarted", "EventsRead"]
    assert updates[1].run_id == "second"


async def test_watch_of_an_empty_directory_says_it_waits_for_a_campaign(tmp_path):
    app = WatchApp(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "waiting" in shown(app.screen.query_one("#campaign-title")))
        title = " ".join(shown(app.screen.query_one("#campaign-title")).split())
        assert title == f"waiting: no campaign in {tmp_path} yet (apex-voice run --out {tmp_path} writes one)"
        assert "0 runs" not in title


async def test_a_draw_while_the_app_closes_skips_a_screen_whose_widgets_are_gone(tmp_path):
    """CI failure: the redraw timer fired while Textual closed the app, after it had removed the
    campaign screen's widgets but before the screen's unmount, and the draw found no title."""
    app = WatchApp(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "waiting" in shown(app.screen.query_one("#campaign-title")))
        screen = app.screen
        await screen.remove_children()  # what closing does first
        app.exit()
        app._drawn = (None, 0.0, None)  # past the table's once-a-second limit
        app.draw()  # must not raise NoMatches
        assert not screen.children


@pytest.mark.parametrize("level", ["rep", "session"])
async def test_watch_of_a_rep_or_session_directory_opens_that_session(recorded_runs, level):
    session = session_dir(recorded_runs["noop"])
    given = session.parent if level == "rep" else session
    app = WatchApp(given)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and "AFA" in shown(app.screen.query_one("#gates")))
        assert app.screen.key == (DEMO_TASK, 0) and app.sub_title == f"{level} directory {given}".replace("session directory", "session")
        assert "verdict FAILURE pts 0 (closing) AFA 0.00" in shown(app.screen.query_one("#gates"))
        assert list(app.campaign.cells) == [(DEMO_TASK, 0)]


def test_unscored_cells_show_the_reason_campaign_json_gives(tmp_path):
    manifest = {"model": "native-oracle", "repeats": 1, "task_ids": ["a", "b"], "planned_cells": {"a": [0], "b": [0]},
                "unscored_cells": [
                    {"task_id": "a", "rep": 0, "reason": "infrastructure",
                     "detail": "1 attempt(s): AgentImageError: apex-voice/native-oracle:latest is missing"},
                    {"task_id": "b", "rep": 0, "reason": "stopped", "detail": "sandbox failure no retry can fix"}]}
    (tmp_path / "campaign.json").write_text(json.dumps(manifest))
    updates = []
    RunsDirWatcher(tmp_path, updates.append).poll()
    campaign = CampaignView()
    for update in updates:
        campaign = apply_update(campaign, update)
    assert [(row.key[0], row.status) for row in rows(campaign)] == [("a", "infra error"), ("b", "not run")]
    assert render_verdict(campaign.session(("b", 0))).plain == "not run · sandbox failure no retry can fix"
    assert "AgentImageError" in render_verdict(campaign.session(("a", 0))).plain
    manifest["unscored_cells"] = []  # a new start plans them again: the old reasons go
    (tmp_path / "campaign.json").write_text(json.dumps(manifest))
    campaign = apply_update(campaign, CampaignSeen("native-oracle", ((("a", 0)), ("b", 0)), ()))
    assert {row.status for row in rows(campaign)} == {"queued"}


class _NoBackend:
    name = "local"

    async def aclose(self) -> None:
        pass


async def test_a_live_campaign_whose_agent_image_is_missing_shows_why_and_not_run(tmp_path):
    from harness.agents.registry import get_model
    from harness.campaign.campaign import CampaignSettings
    from sandbox.errors import AgentImageError
    from tui.live import LiveApp

    async def missing_image(cell, rep_dir):
        raise AgentImageError("apex-voice/native-oracle:latest is not on the engine and no build is possible")

    settings = CampaignSettings(model=get_model("native-oracle"), out_dir=tmp_path, repeats=2, sandbox="local")
    app = LiveApp(settings, [DEMO_TASK], missing_image, _NoBackend())
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: len(app.campaign.results) == 2 and "not run" in shown(app.screen.query_one("#cells")))
        table = shown(app.screen.query_one("#cells"))
        assert "infra error" in table and "not run" in table and "native-oracle" in table
        await pilot.press("down", "enter")
        await until(pilot, lambda: isinstance(app.screen, SessionScreen))
        await until(pilot, lambda: "not run" in shown(app.screen.query_one("#verdict-line")))
        verdict = " ".join(shown(app.screen.query_one("#verdict-line")).split())
        assert verdict.startswith("not run · sandbox failure no retry can fix (AgentImageError: apex-voice/native-oracle")
        assert "pts None" not in shown(app.screen.query_one("#gates"))
        await pilot.press("q")
