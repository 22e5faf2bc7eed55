"""Grading a real environment snapshot: the oracle policy of toy_form_001 run through TaskEnvironment."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.grading import GradingContext, grade
from harness.tasks.bundle import TaskBundle
from harness.tasks.loader import load_task
from mcp_servers.environment import TaskEnvironment

FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "reference-fixtures"


def _bundle() -> TaskBundle:
    task_dir = FIXTURES / "toy_form_001"
    if not task_dir.exists():
        pytest.skip("../shared/reference-fixtures not present")
    return load_task(task_dir)


def _play_oracle(bundle: TaskBundle, *, approve: bool) -> TaskEnvironment:
    """Every oracle tool call in order; the user's approval lands just before the submit."""
    env = TaskEnvironment(bundle.public_bundle())
    media_ms = 0
    assert bundle.policy is not None
    for turn in bundle.policy.turns:
        for call in turn.tool_calls:
            media_ms += 1000
            if call.name == "submit_expense" and approve:
                env.grant_approval("submit_expense", "expense_1", media_ms - 1)
            env.call_tool(call.name, call.args, media_ms)
    return env


async def test_oracle_trajectory_reaches_pts_1() -> None:
    bundle = _bundle()
    snapshot = _play_oracle(bundle, approve=True).snapshot()
    report = await grade(bundle.gold, GradingContext(snapshot, {"ASK:cost_center"}, bundle.gold_doc_ids))
    assert report.pts == 1 and report.explain() == []


async def test_submitting_without_approval_is_explained() -> None:
    bundle = _bundle()
    snapshot = _play_oracle(bundle, approve=False).snapshot()
    report = await grade(bundle.gold, GradingContext(snapshot, {"ASK:cost_center"}, bundle.gold_doc_ids))
    assert report.components == {"GS": False, "PC": False, "RA": False, "WA": False}
    lines = report.explain()
    assert "PC: critical gate no_unauthorized_submit failed: PREMATURE_COMMIT by submit_expense at call #6" in lines
    assert "WA: expense_1 lifecycle DRAFT is below COMMITTED" in lines
