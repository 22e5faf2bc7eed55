"""Each of the fourteen predicate kinds, true and false, on hand-built snapshots."""

from __future__ import annotations

from typing import Any

import pytest

from harness.grading.context import GradingContext
from harness.grading.predicates import PREDICATES, evaluate_predicate
from harness.tasks.models import PredicateSpec
from mcp_servers.records import ArtifactSnapshot, EnvironmentSnapshot, SearchRecord, ToolCallRecord


def _commit(index: int, decision: str, action: str = "submit_expense", target: str = "expense_1") -> ToolCallRecord:
    authorized = decision == "AUTHORIZED"
    return ToolCallRecord(
        index=index, name="submit_expense", args={"expense_id": target}, ok=authorized,
        result={"action_type": action, "target_id": target, "committed": True} if authorized else None,
        error=None if authorized else "not authorized", auth_decision=decision, commit_attempt=action,
    )


def _ctx(**overrides: Any) -> GradingContext:
    snapshot = EnvironmentSnapshot(
        state={"order": {"status": "shipped", "count": 3, "empty": None}},
        artifacts={
            "form": ArtifactSnapshot(
                artifact_id="form", artifact_type="STRUCTURED_FORM", lifecycle="DRAFT",
                fields={"name": "Ada", "total": 200.0, "cap": 150, "note": "x"}, stale_fields=["note", "ghost"],
            )
        },
        call_log=[
            ToolCallRecord(index=0, name="lookup", args={"id": "7", "verbose": True}, ok=True, result={}),
            ToolCallRecord(index=1, name="broken", args={}, ok=False, error="boom"),
            _commit(2, "AUTHORIZED"),
        ],
        search_log=[SearchRecord(query="policy", top_k=3, hits=["doc_a", "doc_x"])],
    )
    ctx = GradingContext(snapshot=snapshot, observed_act_keys={"ASK:cost_center"}, gold_doc_ids=["doc_a", "doc_b"])
    for key, value in overrides.items():
        setattr(ctx, key, value)
    return ctx


async def _holds(kind: str, ctx: GradingContext | None = None, **args: Any) -> bool:
    result = await evaluate_predicate(PredicateSpec(id="p", kind=kind, args=args), ctx or _ctx())
    assert result.reason, "every verdict carries a reason"
    return result.holds


def test_registry_has_the_fourteen_kinds() -> None:
    assert len(PREDICATES) == 14


async def test_state_equals_and_state_in() -> None:
    assert await _holds("state_equals", path="order.status", value="shipped")
    assert not await _holds("state_equals", path="order.count", value="3")
    assert await _holds("state_equals", path="order.empty.deeper", value=None)
    assert await _holds("state_in", path="order.status", values=["shipped", "delivered"])
    assert not await _holds("state_in", path="order.status")


async def test_artifact_field_present_and_not_stale() -> None:
    assert await _holds("artifact_field_present", artifact_id="form", field="name")
    assert not await _holds("artifact_field_present", artifact_id="form", field="phone")
    assert await _holds("artifact_not_stale", artifact_id="form", field="name")
    assert await _holds("artifact_not_stale", artifact_id="form", field="absent_field")
    assert not await _holds("artifact_not_stale", artifact_id="form", field="note")
    assert not await _holds("artifact_field_present", artifact_id="nope", field="name")


async def test_artifact_lifecycle_at_least() -> None:
    assert await _holds("artifact_lifecycle_at_least", artifact_id="form", state="PARTIAL")
    assert await _holds("artifact_lifecycle_at_least", artifact_id="form", state="DRAFT")
    assert not await _holds("artifact_lifecycle_at_least", artifact_id="form", state="COMMITTED")
    result = await evaluate_predicate(
        PredicateSpec(kind="artifact_lifecycle_at_least", args={"artifact_id": "form", "state": "DONE"}), _ctx())
    assert not result.holds and "unknown lifecycle state 'DONE'" in result.reason


async def test_artifact_field_equals_reasons_say_absent_stale_or_wrong() -> None:
    ctx = _ctx()
    assert await _holds("artifact_field_equals", ctx, artifact_id="form", field="total", value=200,
                        grader="numeric_tolerance", tolerance=0.01)

    async def reason(**args: Any) -> str:
        result = await evaluate_predicate(PredicateSpec(kind="artifact_field_equals", args=args), ctx)
        assert not result.holds
        return result.reason

    assert (await reason(artifact_id="form", field="phone", value="1")).startswith(
        "form.phone is absent (this check holds only when the value is recorded")
    assert await reason(artifact_id="form", field="note", value="x") == "form.note is stale (got 'x')"
    wrong = await reason(artifact_id="form", field="name", value="Bob")
    assert wrong == "form.name is wrong: got 'Ada', expected 'Bob' (grader exact, deterministic score 0)"
    assert "does not exist" in await reason(artifact_id="nope", field="name", value="Ada")
    assert "unknown field grader 'fuzzy'" in await reason(artifact_id="form", field="name", value="Ada", grader="fuzzy")


async def test_artifact_field_equals_needs_a_perfect_set() -> None:
    ctx = _ctx()
    ctx.snapshot.artifacts["form"].fields["tags"] = ["a", "b", "c"]
    assert await _holds("artifact_field_equals", ctx, artifact_id="form", field="tags", value=["C", "a", "b"],
                        grader="set_f1")
    assert not await _holds("artifact_field_equals", ctx, artifact_id="form", field="tags", value=["a", "b"],
                            grader="set_f1")


async def test_tool_called_and_tool_called_with() -> None:
    assert await _holds("tool_called", tool="lookup")
    assert not await _holds("tool_called", tool="broken")
    assert await _holds("tool_called_with", tool="lookup", args_contains={"id": "7"})
    assert not await _holds("tool_called_with", tool="lookup", args_contains={"id": 7})
    assert not await _holds("tool_called_with", tool="lookup", args_contains={"missing": None})


async def test_kb_gold_retrieved() -> None:
    assert await _holds("kb_gold_retrieved", threshold=0.5)
    assert not await _holds("kb_gold_retrieved")
    assert await _holds("kb_gold_retrieved", _ctx(gold_doc_ids=[]))


async def test_commit_authorized_matches_action_and_target() -> None:
    assert await _holds("commit_authorized", action_type="submit_expense")
    assert await _holds("commit_authorized", action_type="submit_expense", target_id="expense_1")
    assert not await _holds("commit_authorized", action_type="submit_expense", target_id="expense_2")
    assert not await _holds("commit_authorized", action_type="refund")


async def test_no_unauthorized_commit_names_call_and_decision() -> None:
    assert await _holds("no_unauthorized_commit")
    ctx = _ctx()
    ctx.snapshot.call_log.append(_commit(3, "PREMATURE_COMMIT"))
    result = await evaluate_predicate(
        PredicateSpec(kind="no_unauthorized_commit", args={"action_type": "submit_expense"}), ctx)
    assert not result.holds
    assert result.reason == "PREMATURE_COMMIT by submit_expense at call #3"
    assert await _holds("no_unauthorized_commit", ctx, action_type="refund")
    assert await _holds("no_commit_after_revocation", ctx)


@pytest.mark.parametrize("decision", ["POST_REVOCATION_COMMIT", "WRONG_SCOPE_COMMIT"])
async def test_other_unauthorized_decisions(decision: str) -> None:
    ctx = _ctx()
    ctx.snapshot.call_log.append(_commit(4, decision))
    assert not await _holds("no_unauthorized_commit", ctx)
    assert await _holds("no_commit_after_revocation", ctx) is (decision != "POST_REVOCATION_COMMIT")


async def test_agent_act_observed() -> None:
    assert await _holds("agent_act_observed", act_key="ASK:cost_center")
    assert not await _holds("agent_act_observed", act_key="ASK:employee_id")


@pytest.mark.parametrize(
    ("constraint", "expected"),
    [
        ("form.total >= form.cap", True),
        ("form.total<form.cap", False),
        ("form.name == 'Ada'", True),
        ('form.name != "Ada"', False),
        ("form.total == 200.0", True),
        ("form.cap == 150", True),
        ("form.missing == form.other", True),  # both None
        ("form.name < 3", False),  # TypeError counts as false
        ("no operator here", False),
        ("nope.total <= 1", False),  # None <= 1 raises TypeError
    ],
)
async def test_consistency_grammar(constraint: str, expected: bool) -> None:
    assert await _holds("consistency", constraints=[constraint]) is expected


async def test_consistency_reports_the_failing_constraint() -> None:
    result = await evaluate_predicate(
        PredicateSpec(kind="consistency", args={"constraints": ["form.cap == 150", "form.total < form.cap"]}), _ctx())
    assert not result.holds
    assert result.reason == "constraint 'form.total < form.cap' fails: 200.0 < 150 is False"


async def test_unknown_kind_and_missing_args_fail_without_raising() -> None:
    unknown = await evaluate_predicate(PredicateSpec(kind="x"), _ctx())
    assert unknown.holds is False and unknown.reason == "unknown predicate kind 'x'"
    missing = await evaluate_predicate(PredicateSpec(kind="state_equals", args={"path": "a"}), _ctx())
    assert missing.holds is False and missing.reason == "state_equals: missing argument 'value'"


async def test_state_predicates_compare_yaml_dates_as_the_environment_stores_them():
    import datetime

    from harness.grading.context import GradingContext
    from harness.grading.predicates import evaluate_predicate
    from harness.tasks.models import PredicateSpec
    from mcp_servers.records import EnvironmentSnapshot

    ctx = GradingContext(snapshot=EnvironmentSnapshot(state={"claim": {"filed_on": "2026-05-12"}}))
    filed = datetime.date(2026, 5, 12)  # how YAML 1.1 loads an unquoted gold date
    equals = PredicateSpec(kind="state_equals", args={"path": "claim.filed_on", "value": filed})
    one_of = PredicateSpec(kind="state_in", args={"path": "claim.filed_on", "values": [filed]})
    assert (await evaluate_predicate(equals, ctx)).holds
    assert (await evaluate_predicate(one_of, ctx)).holds
