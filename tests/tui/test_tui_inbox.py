"""The app's inbox under a flood: bounded by the events it holds, honest about what it skipped."""

from __future__ import annotations

import threading

from harness.events import EventType as E
from tests.event_builders import events
from tests.tui.helpers import plain
from tui.inbox import Inbox
from tui.state.campaign_view import CampaignView
from tui.state.updates import EventsRead, EventsSkipped, ResultRead, SessionRestarted, apply_update
from tui.widgets.session_parts import render_status

KEY = ("demo_benefits_enrollment_001", 0)
OTHER = ("demo_hvac_inspection_001", 0)
ONE = events((E.AGENT_SIGNAL, 20, {"signal": "x"}))


def _drain(inbox: Inbox) -> list:
    out = []
    while inbox:
        out.append(inbox.popleft())
    return out


def test_a_flood_keeps_at_most_the_bound_and_says_how_many_it_skipped():
    inbox = Inbox(max_events=100)
    for _ in range(10_000):
        inbox.append(EventsRead(KEY, ONE))
    assert len(inbox) == 100
    taken = _drain(inbox)
    skipped = [u for u in taken if isinstance(u, EventsSkipped)]
    assert skipped == [EventsSkipped(KEY, 9_900)]
    assert sum(len(u.events) for u in taken if isinstance(u, EventsRead)) == 100


def test_skipped_events_stay_in_order_and_other_sessions_and_results_are_never_skipped():
    inbox = Inbox(max_events=4)
    for _ in range(6):
        inbox.append(EventsRead(KEY, ONE))
    inbox.append(EventsRead(OTHER, ONE))  # full: skipped too, and told apart
    inbox.append(ResultRead(KEY, result=None))  # not an event: always kept
    taken = [inbox.popleft() for _ in range(3)]  # down to half: the skips are told, after what was kept
    inbox.append(EventsRead(KEY, ONE))  # room again: kept, after the notice
    rest = _drain(inbox)
    kinds = [type(u).__name__ for u in taken + rest]
    assert kinds == ["EventsRead"] * 3 + ["EventsRead", "ResultRead", "EventsSkipped", "EventsSkipped", "EventsRead"]
    assert {u for u in rest if isinstance(u, EventsSkipped)} == {EventsSkipped(KEY, 2), EventsSkipped(OTHER, 1)}


def test_a_restarted_session_forgets_the_skips_of_the_attempt_before():
    inbox = Inbox(max_events=1)
    inbox.append(EventsRead(KEY, ONE))
    inbox.append(EventsRead(KEY, ONE))
    inbox.append(SessionRestarted(KEY, "run-2"))
    assert not any(isinstance(u, EventsSkipped) for u in _drain(inbox))


def test_a_tailing_source_waits_for_room_instead_of_skipping():
    inbox = Inbox(max_events=10)
    cancelled = threading.Event()

    def tail() -> None:
        for _ in range(100):
            inbox.put_when_room(EventsRead(KEY, ONE), cancelled.is_set, poll_s=0.01)

    source = threading.Thread(target=tail)
    source.start()
    taken = []
    while source.is_alive() or inbox:
        if inbox:
            taken.append(inbox.popleft())
        assert len(inbox) <= 10 + 1  # at most one update past half plus what was there
    source.join()
    assert len(taken) == 100 and not any(isinstance(u, EventsSkipped) for u in taken)


def test_the_session_view_counts_what_it_did_not_see_and_says_so():
    campaign = CampaignView()
    for update in (EventsRead(KEY, ONE), EventsSkipped(KEY, 7), EventsSkipped(KEY, 5)):
        campaign = apply_update(campaign, update)
    view = campaign.session(KEY)
    assert view.skipped_events == 12
    assert "12 events not shown" in plain(render_status(view))
