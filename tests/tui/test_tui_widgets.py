"""The panes' pure render functions, and redraw decisions, without a terminal."""

from __future__ import annotations

import io

from rich.console import Console

from harness.events import EventType as E
from tests.event_builders import events
from tests.tui.helpers import DEMO_TASK
from tui.monitor_app import WatchApp
from tui.screens import SessionScreen
from tui.state import reduce_all
from tui.state.session_view import LEVEL_CHUNK
from tui.widgets.session_parts import render_artifacts, render_status, render_verdict, tool_entries
from tui.widgets.text_pane import _same
from tui.widgets.timeline import BARS, LABEL_WIDTH, render_timeline


def _plain(renderable, width: int = 100) -> list[str]:
    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    console.print(renderable)
    return console.export_text().splitlines()


def _barge_in_session():
    return reduce_all(events(
        (E.FLOOR_CHANGE, 0, {"channel": "agent", "speaking": True}),
        (E.FLOOR_CHANGE, 1000, {"channel": "user", "speaking": True}),
        (E.FLOOR_CHANGE, 1500, {"channel": "agent", "speaking": False}),
        (E.FLOOR_CHANGE, 2000, {"channel": "user", "speaking": False}),
        (E.TOOL_CALL, 2500, {"tool": "kb_search", "args": {}, "call_id": "c"}),
        (E.DUPLEX_EVENT, 2600, {"event_id": "e", "type": "CORRECTION", "onset_ms": 1000,
                                "expected_floor_action": "YIELD", "stop_latency_ms": 500, "agent_yielded": True}),
        (E.APPROVAL_EVENT, 3000, {"target_id": "x", "granted": "submit"}),
    ))


def test_the_timeline_places_speech_and_marks_on_the_media_clock():
    view = _barge_in_session()
    axis, user, agent, marks = _plain(render_timeline(view, width=LABEL_WIDTH + 40, ms_per_col=100), width=200)
    column = LABEL_WIDTH  # the window starts at 0: column c is [100c, 100c + 100) ms
    assert user[column + 9] == "·" and user[column + 10] == "█" and user[column + 19] == "█" and user[column + 20] == "·"
    assert agent[column] == "█" and agent[column + 14] == "█" and agent[column + 15] == "·"
    assert marks[column + 10] == "B" and marks[column + 15] == "Y" and marks[column + 25] == "T" and marks[column + 30] == "A"
    assert axis.startswith(" " * LABEL_WIDTH + "|0:00.0")


def test_the_timeline_follows_the_clock():
    view = _barge_in_session()
    *_, marks = _plain(render_timeline(view, width=LABEL_WIDTH + 10, ms_per_col=100), width=200)
    assert marks[LABEL_WIDTH + 9] == "A"  # the last column is the clock (3000 ms)


def test_gates_tools_and_artifact_text():
    view = reduce_all(events(
        (E.TOOL_CALL, 100, {"tool": "update_form", "args": {"fields": {"plan": "ppo"}}, "call_id": "c1"}),
        (E.TOOL_RESULT, 140, {"tool": "update_form", "ok": True, "call_id": "c1", "result": {"updated": ["plan"], "artifact_id": "f"}}),
        (E.GATE_STATUS, 140, {"GS": False, "PC": True, "RA": True, "WA": False, "pts": 0, "failing": ["WA: f.plan: stale"]}),
    ))
    assert "GS… PC✓ RA✓ WA… pts 0" in render_status(view).plain  # not met yet: the session runs on
    assert render_verdict(view).plain == "not met yet: WA: f.plan: stale"
    (entry_id, call, row), = tool_entries(view)
    assert entry_id == "call-0" and call is view.tools[0]
    tools = "\n".join(_plain(row))
    assert '✓ update_form({"fields": {"plan": "ppo"}}) 40 ms' in tools
    artifact = "\n".join(_plain(render_artifacts(view)))
    assert "f" in artifact and "DRAFT" in artifact and "ppo [stale]" in artifact


def test_a_pane_redraws_only_when_one_of_its_parts_changed():
    view = _barge_in_session()
    assert _same((view.tools, view.approvals), (view.tools, view.approvals))  # a new tuple, the same parts
    later = reduce_all(events((E.FLOOR_CHANGE, 4000, {"channel": "user", "speaking": True})), view)
    assert _same((later.tools, later.approvals), (view.tools, view.approvals))
    assert not _same((later.transcript,), ((),))


async def test_a_session_screen_drawn_before_it_is_mounted_does_not_fail(tmp_path):
    app = WatchApp(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(SessionScreen((DEMO_TASK, 0)))
        app.draw()  # pushed, not mounted yet: nothing to draw into
        await pilot.pause()
        app.draw()
        assert isinstance(app.screen, SessionScreen)


def _long_session(seconds: int):
    """Both channels speaking the whole time, a level window every 100 ms (more than any old cap)."""
    specs = [(E.FLOOR_CHANGE, 0, {"channel": "user", "speaking": True})]
    specs += [(E.AUDIO_LEVEL, t * 100, {"window_ms": 100, "user_dbfs": -24.0, "agent_dbfs": -90.0}) for t in range(seconds * 10)]
    return reduce_all(events(*specs))


def test_the_timeline_draws_speech_from_levels_however_far_back_it_reaches():
    """Zoomed out over a whole 10-minute session (6,000 windows), or wide: every speech column is a
    level bar, as it is live; none falls back to a full block where old levels were dropped."""
    view = _long_session(600)
    assert len(view.user.levels) > 20 * LEVEL_CHUNK
    for width, ms in ((LABEL_WIDTH + 120, 5000), (LABEL_WIDTH + 300, 250), (LABEL_WIDTH + 60, 100)):
        _, user, *_ = _plain(render_timeline(view, width=width, ms_per_col=ms), width=width + 10)
        lane = user[LABEL_WIDTH:].rstrip()[:-1]  # the last column is the clock's own, not spoken yet
        assert lane and set(lane) == {BARS[round((-24.0 + 60) / 60 * (len(BARS) - 1))]}, (ms, lane)


def test_the_timeline_draws_the_same_columns_at_any_width():
    view = reduce_all(events(
        (E.FLOOR_CHANGE, 0, {"channel": "agent", "speaking": True}),
        *((E.AUDIO_LEVEL, t * 100, {"window_ms": 100, "user_dbfs": -90.0, "agent_dbfs": -10.0 - t % 40}) for t in range(900)),
    ))
    narrow = _plain(render_timeline(view, width=LABEL_WIDTH + 40, ms_per_col=250), width=300)[2]
    wide = _plain(render_timeline(view, width=LABEL_WIDTH + 200, ms_per_col=250), width=300)[2]
    assert wide.rstrip().endswith(narrow[LABEL_WIDTH:].rstrip())  # the last 40 columns, drawn alike
