"""The grade's failing checks, structured: what ``GATE_STATUS`` carries so no reader parses the words."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harness.agents.text_agents import ScriptedAgent
from harness.events import EventBus, EventType
from harness.grading import GradingContext, grade
from harness.grading.report import GradeReport
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import run_text_session
from harness.tasks.loader import load_task
from tests.event_builders import events
from tui.state import reduce_all

TASK = Path(__file__).resolve().parents[1] / "harness" / "demo_data" / "tasks" / "demo_benefits_enrollment_001"


@pytest.fixture(scope="module")
def spoiled_grade() -> GradeReport:
    """The oracle's enrollment, then spoiled: a protected field stale, one wrong, one gone, not committed,
    and the read-back act never observed."""
    bundle = load_task(TASK)
    session = asyncio.run(run_text_session(bundle, ScriptedAgent.oracle(bundle.policy),
                                           InProcessEnvironment(bundle.public_bundle())))
    assert session.pts == 1
    snapshot = session.snapshot.model_copy(deep=True)
    form = snapshot.artifacts["enrollment_1"]
    form.stale_fields = ["fsa_per_paycheck"]
    form.fields["phone"] = "503-555-0000"
    del form.fields["full_name"]
    form.lifecycle = "DRAFT"
    return asyncio.run(grade(bundle.gold, GradingContext(snapshot=snapshot, observed_act_keys=set(),
                                                         gold_doc_ids=bundle.gold_doc_ids)))


def test_every_failing_check_is_an_item_and_a_line(spoiled_grade):
    items = spoiled_grade.failing_items()
    structured = {(i.gate, i.check, i.kind) for i in items}
    assert {
        ("RA", "read_back_fsa", "required"),
        ("WA", "enrollment_1", "lifecycle"),
        ("WA", "enrollment_1.fsa_per_paycheck", "stale"),
        ("WA", "enrollment_1.phone", "wrong"),
        ("WA", "enrollment_1.full_name", "missing"),
    } <= structured
    lines = spoiled_grade.explain()
    assert len(lines) == len(items)
    for item, line in zip(items, lines, strict=True):
        assert line.startswith(f"{item.gate}: ") and item.check in line and line.endswith(item.reason)
    (stale,) = [i for i in items if i.kind == "stale"]
    assert (stale.artifact, stale.field, stale.reason) == ("enrollment_1", "fsa_per_paycheck", "stale")
    assert "WA: enrollment_1 lifecycle DRAFT is below COMMITTED" in lines


def test_gate_status_carries_the_items_and_the_tui_marks_stale_fields_from_them(spoiled_grade):
    bus = EventBus(run_id="r", task_version="1", condition="C2")
    emitted = bus.emit(EventType.GATE_STATUS, "harness", 100, {
        **spoiled_grade.components, "pts": spoiled_grade.pts, "after_call": 3, "failing": spoiled_grade.explain(),
        "failing_items": spoiled_grade.failing_items(),
    })
    view = reduce_all(events((emitted.type, emitted.media_time_ms, emitted.payload)))
    assert view.artifact("enrollment_1").field("fsa_per_paycheck").stale
    assert view.gates.failing == tuple(spoiled_grade.explain()) and view.gates.WA is False
    assert [c.check for c in view.gates.checks] == [i.check for i in spoiled_grade.failing_items()]
