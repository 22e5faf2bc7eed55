"""The published worked example (§5.7, toy_form_001) driven directly against the environment."""

from __future__ import annotations

from test_env_public_bundle import fixture_bundle

from mcp_servers.environment import TaskEnvironment


def test_correction_then_approved_submit_commits_a_clean_form(toy_form):
    env = TaskEnvironment(fixture_bundle(toy_form), wall_clock_ns=lambda: 0)
    assert env.snapshot().artifacts["expense_1"].lifecycle == "EMPTY"

    for t, fields in enumerate(
        [{"employee_id": "E1042"}, {"trip_purpose": "client onsite"}, {"cost_center": "CC-330"}], start=1
    ):
        record = env.call_tool("update_expense", {"fields": fields}, media_time_ms=2000 * t)
        assert record.ok, record.error
    first_total = env.call_tool("update_expense", {"fields": {"total_amount": 240.0}}, media_time_ms=8000)
    assert first_total.ok and first_total.mutations == ["expense_1.total_amount"]
    after_first_total = env.snapshot().artifacts["expense_1"]
    assert after_first_total.lifecycle == "DRAFT"
    assert after_first_total.stale_fields == ["approval_status"], (
        "a dependent is stale even before it has a value"
    )

    env.apply_event(
        "evt_correct_total", stale_fields=["expense_1.total_amount"], world_updates={}, media_time_ms=9000
    )
    assert env.snapshot().artifacts["expense_1"].stale_fields == ["approval_status", "total_amount"]

    corrected = env.call_tool("update_expense", {"fields": {"total_amount": 200.0}}, media_time_ms=10000)
    assert corrected.ok
    assert env.snapshot().artifacts["expense_1"].stale_fields == ["approval_status"]

    request = env.call_tool("request_approval", {"target_id": "expense_1"}, media_time_ms=10500)
    assert request.ok
    assert request.result == {
        "requested_action": "submit_expense",
        "target_id": "expense_1",
        "status": "awaiting_approval",
    }
    assert request.approval_request == {"action_type": "submit_expense", "target_id": "expense_1"}
    assert env.pending_approval == ("submit_expense", "expense_1")

    token = env.grant_approval(
        "submit_expense", "expense_1", media_time_ms=12000, source_event_id="approve_submit"
    )
    assert token.token_id == "tok_1"

    submit = env.call_tool("submit_expense", {"target_id": "expense_1", "artifact_id": "expense_1"}, 14000)
    assert submit.ok
    assert submit.auth_decision == "AUTHORIZED"
    assert submit.commit_attempt == "submit_expense"
    assert submit.result == {"action_type": "submit_expense", "target_id": "expense_1", "committed": True}
    assert submit.mutations == ["expense_1.approval_status"]
    assert env.pending_approval is None

    snapshot = env.snapshot()
    form = snapshot.artifacts["expense_1"]
    assert form.lifecycle == "COMMITTED"
    assert form.stale_fields == []
    assert form.fields == {
        "employee_id": "E1042",
        "trip_purpose": "client onsite",
        "cost_center": "CC-330",
        "total_amount": 200.0,
        "approval_status": "submitted",
    }
    assert [r.index for r in snapshot.call_log] == list(range(7))
    assert [v.seq for v in snapshot.versions] == list(range(6))
    assert snapshot.versions[-1].cause == "commit:submit_expense"
    assert [(v.old, v.new) for v in snapshot.versions if v.path == "total_amount"] == [
        (None, 240.0),
        (240.0, 200.0),
    ]
    assert [(a.kind, a.token_ids) for a in snapshot.approval_log] == [
        ("granted", ["tok_1"]),
        ("consumed", ["tok_1"]),
    ]
    assert snapshot.tokens[0].consumed_by_call == submit.index
    assert snapshot.media_time_ms == 14000


def test_event_world_updates_are_recorded_with_their_cause(toy_form):
    env = TaskEnvironment(fixture_bundle(toy_form))
    env.apply_event("evt_x", stale_fields=[], world_updates={"expense_policy.meal_cap": 80}, media_time_ms=5)

    snapshot = env.snapshot()
    assert snapshot.state["expense_policy"] == {"meal_cap": 80}
    assert [(m.path, m.old, m.new, m.cause) for m in snapshot.world_mutations] == [
        ("expense_policy.meal_cap", 100, 80, "event:evt_x")
    ]


def test_event_stale_fields_split_at_the_first_dot(toy_interview):
    env = TaskEnvironment(fixture_bundle(toy_interview))
    env.apply_event(
        "evt_fix", stale_fields=["interview_1.technical_depth.evidence"], world_updates={}, media_time_ms=0
    )
    assert env.snapshot().artifacts["interview_1"].stale_fields == ["technical_depth.evidence"]


def test_event_naming_an_unknown_artifact_changes_nothing(toy_form):
    env = TaskEnvironment(fixture_bundle(toy_form))
    try:
        env.apply_event(
            "evt_bad",
            stale_fields=["expense_1.total_amount", "expense_9.total_amount"],
            world_updates={"company": "X"},
            media_time_ms=0,
        )
    except ValueError as error:
        assert "evt_bad" in str(error) and "expense_9.total_amount" in str(error)
    else:
        raise AssertionError("an event naming an unknown artifact must be rejected")
    snapshot = env.snapshot()
    assert snapshot.artifacts["expense_1"].stale_fields == [] and snapshot.state["company"] == "Acme Corp"


def test_interview_oracle_reaches_ready_for_review(toy_interview):
    env = TaskEnvironment(fixture_bundle(toy_interview))
    fields = {
        "technical_depth.evidence": ["Built a payments service", "Scaled it to 1M users"],
        "technical_depth.status": "covered",
    }
    assert env.call_tool("update_interview", {"fields": fields}).ok
    finish = env.call_tool("set_ready", {})
    assert finish.ok and finish.result == {"artifact_id": "interview_1", "lifecycle": "READY_FOR_REVIEW"}
    artifact = env.snapshot().artifacts["interview_1"]
    assert artifact.lifecycle == "READY_FOR_REVIEW"
    assert artifact.fields["subject_id"] == "cand_501"
    assert artifact.fields["technical_depth.evidence"] == fields["technical_depth.evidence"]
