"""SVG snapshots of the main screens at 80×24 and 160×48 (``pytest --snapshot-update`` to accept):
a live session (as ``watch`` and ``run --tui`` draw it mid-session), the campaign table, replays.

Sessions run on the virtual clock are deterministic, so the recorded runs draw the same every time.
"""

from __future__ import annotations

import pytest

from tests.tui.helpers import DEMO_TASK, live_campaign, session_dir, shown, until
from tui.monitor_app import WatchApp
from tui.replay_app import ReplayApp
from tui.screens import SessionScreen


async def _settled(pilot) -> None:
    """Let layout and scrolling finish: until no widget waits to be redrawn, and no animation runs."""
    await pilot.wait_for_scheduled_animations()
    await until(pilot, lambda: not any(widget._repaint_required or widget._layout_required for widget in pilot.app.screen.walk_children()))


SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((160, 48), id="160x48")]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("model", ["oracle", "noop"])
def test_session_view_at_the_end(snap_compare, recorded_runs, model, size):
    app = ReplayApp(session_dir(recorded_runs[model]))

    async def finished(pilot):
        await until(pilot, lambda: app.cursor.events and app.cursor.at_end)
        await _settled(pilot)

    assert snap_compare(app, terminal_size=size, run_before=finished)


@pytest.mark.parametrize("size", SIZES)
def test_session_view_mid_session_after_the_barge_in(snap_compare, recorded_runs, size):
    app = ReplayApp(session_dir(recorded_runs["oracle"]), paused=True)

    async def seek(pilot):
        await until(pilot, lambda: bool(app.cursor.events))
        await pilot.press("g", *"1:41", "enter")
        await _settled(pilot)

    assert snap_compare(app, terminal_size=size, run_before=seek)


@pytest.mark.parametrize("size", SIZES)
def test_campaign_view(snap_compare, recorded_runs, size):
    app = WatchApp(recorded_runs["noop"])
    written = len((session_dir(recorded_runs["noop"]) / "events.jsonl").read_text(encoding="utf-8").splitlines())

    async def settled(pilot):
        key = (DEMO_TASK, 0)
        await until(pilot, lambda: key in app.campaign.results and app.campaign.sessions.get(key) is not None)
        # Every event read (the tail reads in pieces, and the row's clock comes from the last one),
        # then drawn: the table redraws at most once a second, so CI once caught "failed 0:00", a
        # row drawn when the result was in and the events not yet.
        await until(pilot, lambda: app.campaign.sessions[key].events == written)
        await until(pilot, lambda: app.drawn_up_to_date)
        assert "failed" in shown(app.screen.query_one("#cells"))
        await _settled(pilot)

    assert snap_compare(app, terminal_size=size, run_before=settled)


@pytest.mark.parametrize("size", SIZES)
def test_live_session_view(snap_compare, recorded_runs, tmp_path, size):
    """Mid-session, before any result: the provisional gates and the ``failing:`` line."""
    out = live_campaign(recorded_runs["oracle"], tmp_path, until_ms=100_000)
    written = len((out / DEMO_TASK / "rep0" / "live0001" / "events.jsonl").read_text(encoding="utf-8").splitlines())
    app = WatchApp(out)

    async def opened(pilot):
        key = (DEMO_TASK, 0)
        # Every written event read (the tail reads in pieces: a clock past 99 s may still lack the last results).
        await until(pilot, lambda: key in app.campaign.sessions and app.campaign.sessions[key].events == written)
        await until(pilot, lambda: "running" in shown(app.screen.query_one("#cells")))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.drawn_up_to_date)
        assert "not met yet" in shown(app.screen.query_one("#gates"))
        tools = app.screen.query_one("#tools")
        await until(pilot, lambda: tools.scroll_y >= tools.max_scroll_y)  # it follows the end
        await _settled(pilot)

    assert snap_compare(app, terminal_size=size, run_before=opened)


@pytest.mark.parametrize("size", SIZES)
def test_why_view_of_a_failing_session(snap_compare, recorded_runs, size):
    app = ReplayApp(session_dir(recorded_runs["noop"]))

    async def why(pilot):
        await until(pilot, lambda: app.cursor.events and app.cursor.at_end)
        await pilot.press("w")
        await until(pilot, lambda: pilot.app.screen.query("#detail-body"))
        await _settled(pilot)

    assert snap_compare(app, terminal_size=size, run_before=why)
