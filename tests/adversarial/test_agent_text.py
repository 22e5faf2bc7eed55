"""Agent text is made safe once, at the agent boundary: no writer or the TUI breaks on what it wrote.

A lone surrogate in a ``ws://`` agent's error event made ``result.json`` unwritable (a
``UnicodeEncodeError`` in ``atomic_write_text``: a harness error, the cell unscored). Surrogates,
NUL, control and bidi characters in any field of any event, a close reason or an error are now
replaced by U+FFFD where the event enters the harness (``harness/agents/agent_text.py``, applied by
``agent_event_check``), so the cell is scored and every file of the run parses — checked here for
each agent kind through the real CLI, and as a property over arbitrary strings in every field.
"""

from __future__ import annotations

import json
import wave
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from harness.agents.agent_text import _UNSAFE, REPLACEMENT, safe_text, safe_value
from harness.agents.limits import AGENT_LIMITS
from harness.agents.realtime import (
    AdapterError,
    AdapterInfo,
    AudioDelta,
    McpCallReported,
    PlayoutCleared,
    ResponseDone,
    SpeechStarted,
    SpeechStopped,
    ToolCallCancelled,
    ToolCallRequested,
    TranscriptDelta,
    TranscriptDone,
    UserTranscript,
)
from harness.cli.main import app
from harness.events import read_event_lines
from harness.session.agent_blame import describe
from harness.session.agent_event_check import EventCheck
from tests.adversarial import hostile_adapters
from tests.adversarial.test_bounded_input import _run_against, _run_cli
from tests.fakes.flooding_agent import FloodPlan
from tui.state import reduce_all

TASK_ID = "demo_benefits_enrollment_001"
ODD = "a\ud800b\x00c\x1b[2J\u202ed\u2066e\udfff\u2028f\x85g"

#: Any code point, surrogates and controls included (hypothesis leaves surrogates out by default).
ANY_TEXT = st.text(st.characters(codec=None, categories=None), max_size=40)


def _is_safe(text: str) -> bool:
    text.encode("utf-8")  # raises on a surrogate
    return _UNSAFE.search(text) is None


def _strings(value: Any) -> list[str]:
    """Every string inside an event, a dict or a list (keys included)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings(k) + _strings(v)]
    if isinstance(value, list | tuple):
        return [s for item in value for s in _strings(item)]
    if hasattr(value, "__dataclass_fields__") or hasattr(value, "__slots__"):
        names = getattr(value, "__dataclass_fields__", None) or value.__slots__
        return [s for name in names for s in _strings(getattr(value, name))]
    return []


# -- the one function ------------------------------------------------------------------------------


def test_unsafe_code_points_are_replaced_one_for_one_and_tabs_and_newlines_stay():
    assert safe_text(ODD) == "a\ufffdb\ufffdc\ufffd[2J\ufffdd\ufffde\ufffd\ufffdf\ufffdg"
    assert len(safe_text(ODD)) == len(ODD)  # a budget counted before equals the one after
    clean = "Line one\n\tindented, naïve café — 你好 👋"
    assert safe_text(clean) is clean
    for bidi in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c":
        assert safe_text(bidi) == REPLACEMENT
    assert safe_value({ODD: [ODD, {"k": ODD}, 3, None, True]}) == {
        safe_text(ODD): [safe_text(ODD), {"k": safe_text(ODD)}, 3, None, True]}


def test_an_exception_the_agent_raised_is_described_safely():
    assert _is_safe(describe(RuntimeError(ODD)))

    class Lies(Exception):
        def __str__(self):
            class Sneaky(str):
                def __format__(self, spec):
                    raise RuntimeError("no")
            return Sneaky("x")

    assert describe(Lies()) == "Exception: <unprintable>"


# -- every field of every event, as a property ---------------------------------------------------


def _every_event(text: str) -> list[object]:
    return [
        AudioDelta(b"\x00\x00", text, text),
        TranscriptDelta(f"hi {text}", text, text, ((text or "w", 0, 10),)),
        TranscriptDone(f"hi {text}", text, text),
        UserTranscript(text, True, text),
        SpeechStarted(0, text),
        SpeechStopped(10, text),
        ToolCallRequested(text, text, text, text, text),
        ToolCallCancelled((text,)),
        McpCallReported(text, text, "failed", text, text),
        PlayoutCleared(text),
        AdapterInfo({text: [text, {text: text}]}),
        AdapterError(text, kind="provider", code=text),
        ResponseDone(text, None, text),
    ]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=ANY_TEXT)
def test_every_string_field_of_every_event_comes_out_of_the_boundary_safe(text):
    checked = EventCheck(AGENT_LIMITS).events(_every_event(text))
    strings = _strings(checked)
    assert strings and all(_is_safe(s) for s in strings), [s for s in strings if not _is_safe(s)]
    assert json.loads(json.dumps(strings, ensure_ascii=False).encode("utf-8")) == strings


async def test_a_text_agents_odd_reply_and_tool_call_names_come_out_safe():
    """C0 text sessions check the agent's turn at their own boundary: the same one function."""
    from harness.agents.text_agents import AgentTurn, ToolCallRequest
    from tests.adversarial.test_agent_boundary import _text_session, _TextAgentReplying

    reply = AgentTurn(ODD, [ToolCallRequest(ODD, {}, ODD)], True)
    result = await _text_session(_TextAgentReplying(reply))
    strings = _strings([event.payload for event in result.events.events])
    assert any("\ufffd" in s for s in strings)
    assert all(_is_safe(s) for s in strings), [s for s in strings if not _is_safe(s)]


# -- through the real CLI, for each agent kind -----------------------------------------------------


def _every_file_parses(out: Path) -> dict:
    """Every file the run wrote parses as what its name says; the cell's record, which was scored."""
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files
    for path in files:
        data = path.read_bytes()
        text = data.decode("utf-8") if path.suffix != ".wav" else ""
        if path.suffix == ".json":
            json.loads(text)
        elif path.suffix == ".jsonl":
            for line in text.splitlines():
                json.loads(line)
        elif path.suffix == ".wav":
            with wave.open(str(path)) as audio:
                assert audio.getnframes() >= 0
    (result,) = out.glob(f"{TASK_ID}/rep0/result.json")
    record = json.loads(result.read_text(encoding="utf-8"))
    assert record["error"] is None and record["infra_errors"] == [], record
    assert record["pts"] is not None and record["outcome"] in ("FAILURE", "SUCCESS"), record
    (events,) = out.glob(f"{TASK_ID}/rep0/*/events.jsonl")
    logged = read_event_lines(events)
    assert not [e for e in logged if e.type == "HARNESS_ERROR"]
    view = reduce_all(logged)  # the TUI's reading of the session
    assert all(_is_safe(s) for s in _strings([line.text for line in view.transcript]))
    assert all(_is_safe(s) for s in _strings(record)), [s for s in _strings(record) if not _is_safe(s)]
    return record


@pytest.mark.slow
@pytest.mark.parametrize("close_raw", [False, True], ids=["close_reason_text", "close_reason_not_utf8"])
async def test_a_ws_agents_odd_error_event_transcripts_and_close_reason_leave_its_cell_scored(tmp_path, close_raw):
    out = tmp_path / "runs"
    _, stderr, _ = await _run_against(FloodPlan("odd_text", close_raw=close_raw), out)
    record = _every_file_parses(out)
    assert record["agent_failure"] is not None, stderr.decode()[-2000:]
    assert any("\ufffd" in error for error in record["agent_errors"]), record["agent_errors"]


@pytest.mark.slow
async def test_a_hosted_adapters_odd_text_leaves_its_cell_scored(tmp_path):
    out = tmp_path / "runs"
    returncode, stderr, _ = await _run_cli("tests.adversarial.hostile_adapters:SpeaksOddText", out)
    _every_file_parses(out)
    assert returncode == 0, stderr.decode()[-2000:]


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=ANY_TEXT)
def test_an_in_process_adapter_putting_any_text_in_every_field_is_scored_and_every_file_parses(tmp_path_factory, text):
    out = tmp_path_factory.mktemp("runs")
    adapter = hostile_adapters.SpeaksOddText
    before = adapter.TEXT, adapter.model_id
    adapter.TEXT = adapter.model_id = text  # read in this process: the adapter is trusted
    try:
        result = CliRunner().invoke(app, ["run", "--model", "tests.adversarial.hostile_adapters:SpeaksOddText",
                                          "--only", TASK_ID, "--sandbox", "local", "--repeats", "1",
                                          "--out", str(out), "--trust-adapter"])
    finally:
        adapter.TEXT, adapter.model_id = before
    record = _every_file_parses(out)
    assert record["agent_isolation"] == "in-process"
    assert result.exit_code == 0, result.output
