"""``apex-voice replay`` driven by Pilot over recorded sessions: what each pane shows, and the controls."""

from __future__ import annotations

import re

from tests.tui.helpers import session_dir, shown, until
from tui.replay_app import ReplayApp, parse_seek
from tui.widgets.timeline import BARS


def _pane(app, selector: str) -> str:
    return shown(app.screen.query_one(selector))


async def test_a_passing_oracle_session_shows_every_pane(recorded_runs):
    app = ReplayApp(session_dir(recorded_runs["oracle"]))
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.cursor.events and app.cursor.at_end)
        gates = _pane(app, "#gates")
        assert "passed" in gates and "GS✓ PC✓ RA✓ WA✓" in gates and "pts 1" in gates
        assert "verdict SUCCESS pts 1 (agent_ended) AFA 1.00" in gates
        transcript = _pane(app, "#transcript")
        assert "Hi! I just started at Tidewell" in transcript
        assert "Welcome to Tidewell!" in transcript
        assert "barge-in evt_correct_fsa: yielded in 500 ms ok" in transcript
        tools = _pane(app, "#tools")
        assert "✓ get_enrollment_window({})" in tools
        assert "approval granted: submit_enrollment on enrollment_1" in tools
        assert "[AUTHORIZED]" in tools
        artifact = _pane(app, "#artifact")
        assert re.search(r"enrollment_1\s+COMMITTED", artifact)
        assert re.search(r"fsa_annual_election\s+1200.0", artifact)  # the corrected value, not the first one
        timeline = _pane(app, "#timeline")
        user_lane, agent_lane, marks = timeline.splitlines()[1:4]
        assert user_lane.startswith("user") and set(user_lane) & set(BARS)  # speech, as tall as its level
        assert agent_lane.startswith("agent") and set(agent_lane) & set(BARS)
        assert "A" in marks and "T" in marks
        n = len(app.cursor.events)
        end_ms = app.cursor.events[-1].media_time_ms  # the session's end, shown at the last event
        end = f"{end_ms // 60_000}:{end_ms % 60_000 / 1000:04.1f}"
        assert f"{end} / {end}  event {n}/{n}" in _pane(app, "#replay-bar")


async def test_a_failing_noop_session_shows_why(recorded_runs):
    app = ReplayApp(session_dir(recorded_runs["noop"]))
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.cursor.events and app.cursor.at_end)
        gates = _pane(app, "#gates")
        assert "failed" in gates and "verdict FAILURE pts 0 (closing)" in gates
        assert "GS✗" in gates and "terminal predicate enrollment_submitted failed" in gates
        assert "agent" not in _pane(app, "#transcript").replace("agent_", "")
        assert "(no tool calls in this session)" in _pane(app, "#tools")
        assert "(no artifact was written)" in _pane(app, "#artifact")


async def test_replay_controls_step_seek_and_play(recorded_runs):
    app = ReplayApp(session_dir(recorded_runs["oracle"]), paused=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: bool(app.cursor.events))
        assert app.cursor.position == 0 and not app.playing
        await pilot.press("n", "n", "n")
        assert app.cursor.position == 3
        await pilot.press("p")
        assert app.cursor.position == 2
        await pilot.press("g", *"1:40", "enter")
        await until(pilot, lambda: app.play_ms == 100_000)
        assert app.cursor.view.clock_ms <= 100_000 and app.play_ms == 100_000
        gates = _pane(app, "#gates")
        assert "running" in gates and "not met yet: GS: terminal predicate enrollment_submitted failed" in gates
        await pilot.press("g", *"#20", "enter")
        await until(pilot, lambda: app.cursor.position > 0 and app.cursor.events[app.cursor.position - 1].seq == 20)
        assert app.cursor.events[app.cursor.position - 1].seq == 20
        await pilot.press("end")
        assert app.cursor.at_end
        await pilot.press("home")
        assert app.cursor.position == 0
        await pilot.press("4")
        assert app.playing and app.speed == "4"
        await until(pilot, lambda: app.play_ms >= 1000)
        await pilot.press("space")
        assert not app.playing
        position = app.cursor.position
        await pilot.press("right_square_bracket")
        assert app.cursor.position >= position and app.play_ms >= 5000
        await pilot.press("m")
        await until(pilot, lambda: app.cursor.at_end)
        assert "passed" in _pane(app, "#gates")


async def test_a_bad_seek_is_reported_and_changes_nothing(recorded_runs):
    app = ReplayApp(session_dir(recorded_runs["oracle"]), paused=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: bool(app.cursor.events))
        await pilot.press("n", "g", *"soon", "enter")
        await until(pilot, lambda: bool(app._notifications))
        assert app.cursor.position == 1
        assert [n.message for n in app._notifications] == ["cannot seek to 'soon': give 1:23.4, 83 or #120"]


def test_seek_targets():
    assert parse_seek("#120") == ("event", 120)
    assert parse_seek("1:23.4") == ("time", 83_400)
    assert parse_seek(" 83 ") == ("time", 83_000)
    assert parse_seek("soon") is None
