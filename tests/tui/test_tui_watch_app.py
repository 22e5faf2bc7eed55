"""``apex-voice watch`` over a campaign directory: the table, opening a session, and tailing a
session while another process writes it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

from harness.events import RunEvent
from tests.tui.helpers import DEMO_TASK, session_dir, shown, until
from tui.monitor_app import WatchApp
from tui.screens import SessionScreen
from tui.sources.event_lines import read_session_events
from tui.sources.runs_dir import RunsDirWatcher
from tui.state import reduce_all
from tui.state.updates import CampaignSeen, EventsRead, ResultRead


async def test_the_campaign_table_shows_each_cell_and_enter_opens_it(recorded_runs):
    app = WatchApp(recorded_runs["noop"])
    async with app.run_test(size=(120, 30)) as pilot:
        key = (DEMO_TASK, 0)
        await until(pilot, lambda: key in app.campaign.results and app.campaign.sessions.get(key))
        await until(pilot, lambda: "failed" in shown(app.screen.query_one("#cells")))
        table = shown(app.screen.query_one("#cells"))
        assert DEMO_TASK in table and "failed" in table and "noop" in table
        assert "GS✗ PC✓ RA✗ WA✗" in table and "0.00" in table
        assert "1 runs: 1 failed" in shown(app.screen.query_one("#campaign-title"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, SessionScreen))
        await pilot.pause(0.2)
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
        expected = read_session_events(recorded)
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
