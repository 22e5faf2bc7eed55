"""``read_events`` leaves out only a torn last line; any other bad line names the file and line."""

from __future__ import annotations

import pytest

from harness.events.jsonl import EventLogError, read_events
from tests.event_builders import events


def _lines(n: int) -> list[str]:
    return [e.to_line() for e in events(*[("AGENT_SIGNAL", "agent", i * 20, {"signal": "x", "detail": {}}) for i in range(n)])]


def test_a_torn_last_line_is_left_out(tmp_path):
    path = tmp_path / "events.jsonl"
    lines = _lines(3)
    path.write_text("\n".join(lines[:2]) + "\n" + lines[2][:17], encoding="utf-8")
    assert len(read_events(path)) == 2


def test_a_bad_line_in_the_middle_is_an_error_naming_it(tmp_path):
    path = tmp_path / "events.jsonl"
    lines = _lines(3)
    path.write_text("\n".join([lines[0], '{"type": "nonsense"}', lines[2]]) + "\n", encoding="utf-8")
    with pytest.raises(EventLogError, match=r"events.jsonl:2: not an event"):
        read_events(path)


def test_a_complete_bad_last_line_is_an_error_too(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text(_lines(1)[0] + "\n{oops}\n", encoding="utf-8")
    with pytest.raises(EventLogError, match=":2:"):
        read_events(path)
