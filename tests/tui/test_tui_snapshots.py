"""SVG snapshots of the main screens at 80×24 and 160×48 (``pytest --snapshot-update`` to accept).

Sessions run on the virtual clock are deterministic, so the recorded runs draw the same every time.
"""

from __future__ import annotations

import pytest

from tests.tui.helpers import DEMO_TASK, session_dir, shown, until
from tui.monitor_app import WatchApp
from tui.replay_app import ReplayApp


async def _settled(pilot) -> None:
    """Let layout and scrolling finish (nothing changes any more once the replay is at rest)."""
    await pilot.wait_for_scheduled_animations()
    await pilot.pause(0.5)


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

    async def settled(pilot):
        key = (DEMO_TASK, 0)
        await until(pilot, lambda: key in app.campaign.results and app.campaign.sessions.get(key) is not None)
        await until(pilot, lambda: "failed" in shown(app.screen.query_one("#cells")))
        await _settled(pilot)

    assert snap_compare(app, terminal_size=size, run_before=settled)
