"""A failing session's reasons within reach: the verdict line whole, the "why" screen with the
graded evidence of ``result.json``, a finished silent session said so, tool calls opened whole."""

from __future__ import annotations

import json
import re

from harness.events import EventType as E
from tests.event_builders import events
from tests.tui.helpers import plain, session_dir, shown, until
from tui.replay_app import ReplayApp
from tui.screens import SessionDetail, SessionScreen
from tui.state import CellResult, reduce_all
from tui.state.campaign_view import with_settled
from tui.widgets.session_parts import render_status, render_verdict
from tui.widgets.tool_list import ToolCallList
from tui.widgets.verdict_parts import render_why


def _flat(text: str) -> str:
    return " ".join(text.split())


def _result(campaign_dir) -> dict:
    return json.loads((session_dir(campaign_dir).parent / "result.json").read_text(encoding="utf-8"))


async def test_the_verdict_line_is_whole_at_120_columns_and_a_silent_session_says_it_ended(recorded_runs):
    app = ReplayApp(session_dir(recorded_runs["noop"]))
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.cursor.events and app.cursor.at_end and "AFA" in shown(app.screen.query_one("#gates")))
        first_reason = _result(recorded_runs["noop"])["explain"][0]
        assert first_reason in _flat(shown(app.screen.query_one("#verdict-line")))
        assert "(+16 more: w)" in _flat(shown(app.screen.query_one("#verdict-line")))
        assert shown(app.screen.query_one("#tools")).strip() == "(no tool calls in this session)"
        assert shown(app.screen.query_one("#artifact")).strip() == "(no artifact was written)"


async def test_the_why_screen_lists_every_predicate_field_and_explanation_line(recorded_runs):
    record = _result(recorded_runs["noop"])
    app = ReplayApp(session_dir(recorded_runs["noop"]))
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.cursor.events and app.cursor.at_end)
        await pilot.press("w")
        await until(pilot, lambda: isinstance(app.screen, SessionDetail))
        why = _flat(shown(app.screen.query_one("#detail-body")))
        for predicate in record["failed_predicates"]:
            assert predicate["id"] in why and f"{predicate['role']} {predicate['kind']}: {predicate['reason']}" in why
        assert f"fields ({len(record['fields'])} of {len(record['fields'])} failing)" in why
        for row in record["fields"]:
            assert f"{row['artifact']}.{row['field']}" in why
        assert "TFC-40718" in why and "employee_plus_children" in why  # expected values, from the field rows
        for line in record["explain"]:
            assert _flat(line) in why
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, SessionScreen))


async def test_tab_reaches_the_tool_calls_and_enter_or_maximize_opens_a_call_whole(recorded_runs):
    app = ReplayApp(session_dir(recorded_runs["oracle"]))
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.cursor.events and app.cursor.at_end)
        await pilot.press("tab")
        tools = app.screen.query_one(ToolCallList)
        assert app.screen.focused is tools
        calls = app.cursor.view.tools
        index = next(i for i, call in enumerate(calls) if call.tool == "update_enrollment")
        tools.highlighted = next(i for i, option in enumerate(tools.options) if option.id == f"call-{index}")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, SessionDetail))
        body = shown(app.screen.query_one("#detail-body"))
        assert '"full_name": "Marisol Ferreira-Dunn"' in body and '"artifact_id": "enrollment_1"' in body
        assert "…" not in body  # nothing cut: the pane's one-line preview is
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, SessionScreen))
        app.screen.action_maximize()  # the palette's "Maximize" on the focused tool calls
        await until(pilot, lambda: isinstance(app.screen, SessionDetail))
        assert f"tool call · {calls[index].tool}" == app.screen.query_one("#detail").border_title
        await pilot.press("escape")
        await pilot.press("shift+tab")
        app.screen.action_maximize()  # any other pane maximizes as before
        await until(pilot, lambda: app.screen.maximized is not None)
        assert app.screen.maximized.id == "transcript"


def test_an_unscored_cell_says_why_and_never_pts_none():
    view = with_settled(reduce_all(events()), CellResult.unscored_cell(
        "infrastructure", "1 attempt(s): AgentImageError: apex-voice/agent:x is not on the engine"))
    line = render_verdict(view).plain
    assert line.startswith("infra error · 1 attempt(s): AgentImageError") and "None" not in line


def test_the_why_text_before_the_result_is_the_provisional_failing_checks():
    view = reduce_all(events(
        (E.GATE_STATUS, 100, {"GS": False, "PC": True, "RA": False, "WA": False, "pts": 0,
                              "failing": ["GS: submitted: never", "RA: asked: never"]}),
    ))
    text = plain(render_why(view))
    assert "provisional: the grade after" in text
    assert re.search(r"not met yet: GS: submitted: never\n\s+not met yet: RA: asked: never", text)


def test_a_broken_policy_is_failing_mid_session_and_the_rest_is_not_met_yet():
    """Issue 36: mid-session every unmet gate was a red failure; only a broken policy is final."""
    view = reduce_all(events(
        (E.GATE_STATUS, 100, {"GS": False, "PC": False, "RA": False, "WA": True, "pts": 0,
                              "failing": ["GS: submitted: never", "PC: premature commit of f"]}),
    ))
    assert render_status(view).plain.startswith("0:00.1 queued GS… PC✗ RA… WA✓ pts 0")
    assert render_verdict(view).plain == "failing: PC: premature commit of f (+1 more: w)"
    text = plain(render_why(view))
    assert "  failing: PC: premature commit of f" in text and "  not met yet: GS: submitted: never" in text
