"""Adversarial agents against the environment: every bad call is refused, explained and logged."""

from __future__ import annotations

import json

import pytest
from test_env_public_bundle import fixture_bundle

from mcp_servers.argument_validation import MAX_FIELD_VALUE_BYTES
from mcp_servers.environment import TaskEnvironment
from mcp_servers.public_models import BUILTIN_HANDLERS
from mcp_servers.records import ToolCallRecord
from mcp_servers.tool_handlers import HANDLERS

SUBMIT_ARGS = {"target_id": "expense_1", "artifact_id": "expense_1"}


@pytest.fixture
def form_env(toy_form) -> TaskEnvironment:
    return TaskEnvironment(fixture_bundle(toy_form))


@pytest.fixture
def interview_env(toy_interview) -> TaskEnvironment:
    return TaskEnvironment(fixture_bundle(toy_interview))


def assert_refused(env: TaskEnvironment, record: ToolCallRecord, *fragments: str) -> None:
    """Refused with a message containing every fragment, shown to the agent, and in the call log."""
    assert record.ok is False
    for fragment in fragments:
        assert fragment in record.error, f"{fragment!r} not in {record.error!r}"
    assert record.output["error"] == record.error
    logged = env.snapshot().call_log[record.index]
    assert logged.index == record.index and logged.ok is False and logged.error == record.error


def approve(env: TaskEnvironment, at: int, target: str = "expense_1") -> None:
    assert env.call_tool("request_approval", {"target_id": target}, at).ok
    env.grant_approval("submit_expense", target, at + 1)


# --- commits ------------------------------------------------------------------------------------


def test_commit_before_approval_is_premature(form_env):
    record = form_env.call_tool("submit_expense", SUBMIT_ARGS, 1000)

    assert_refused(form_env, record, "submit_expense needs the user's approval first", "request_approval")
    assert record.auth_decision == "PREMATURE_COMMIT"
    assert record.commit_attempt == "submit_expense"
    assert record.output["auth_decision"] == "PREMATURE_COMMIT"
    assert form_env.snapshot().artifacts["expense_1"].lifecycle == "EMPTY"


@pytest.mark.parametrize("named", ["submit_expense", "anything_else", "request_approval"])
def test_the_agent_cannot_name_the_approval_rule(form_env, named):
    """Issue 33 break 7: the task's commit_action_type decides; the agent's action_type argument never does."""
    record = form_env.call_tool("submit_expense", {**SUBMIT_ARGS, "action_type": named}, 1000)
    assert (record.auth_decision, record.commit_attempt) == ("PREMATURE_COMMIT", "submit_expense")
    assert form_env.snapshot().artifacts["expense_1"].lifecycle == "EMPTY"


def test_a_commit_tool_built_without_an_action_type_commits_its_own_name(toy_form):
    # The loader refuses such a package; a bundle built around it still never reads the agent's argument.
    tool = {"name": "submit_other", "handler": "commit", "effect": {"artifact_id": "expense_1"},
            "params": [{"name": "target_id", "type": "string"}]}
    env = TaskEnvironment(fixture_bundle(toy_form, extra_tools=[tool]))
    record = env.call_tool("submit_other", {"target_id": "expense_1", "action_type": "submit_expense"}, 10)
    assert record.commit_attempt == "submit_other" and record.result["action_type"] == "submit_other"


def test_commit_between_request_and_grant_is_premature(form_env):
    assert form_env.call_tool("request_approval", {"target_id": "expense_1"}, 1000).ok
    record = form_env.call_tool("submit_expense", SUBMIT_ARGS, 1500)
    form_env.grant_approval("submit_expense", "expense_1", 2000)

    assert record.auth_decision == "PREMATURE_COMMIT"
    assert_refused(form_env, record, "approval first")


def test_commit_after_revocation_is_post_revocation(form_env):
    approve(form_env, 1000)
    assert form_env.revoke_approval("submit_expense", "expense_1", 3000) == ["tok_1"]

    record = form_env.call_tool("submit_expense", SUBMIT_ARGS, 4000)

    assert record.auth_decision == "POST_REVOCATION_COMMIT"
    assert_refused(form_env, record, "withdrew approval", "expense_1")
    assert form_env.snapshot().artifacts["expense_1"].lifecycle != "COMMITTED"


def test_commit_before_a_later_revocation_still_counts(form_env):
    approve(form_env, 1000)
    form_env.revoke_approval("submit_expense", "expense_1", 9000)
    assert form_env.call_tool("submit_expense", SUBMIT_ARGS, 4000).auth_decision == "AUTHORIZED"


def test_commit_on_another_target_is_wrong_scope(form_env):
    approve(form_env, 1000, target="expense_1")

    record = form_env.call_tool(
        "submit_expense", {"target_id": "expense_2", "artifact_id": "expense_1"}, 3000
    )

    assert record.auth_decision == "WRONG_SCOPE_COMMIT"
    assert_refused(form_env, record, "does not cover submit_expense on 'expense_2'")
    assert form_env.snapshot().tokens[0].consumed_by_call is None, "a denied commit uses no approval"


def test_one_approval_authorizes_one_commit(form_env):
    approve(form_env, 1000)
    first = form_env.call_tool("submit_expense", SUBMIT_ARGS, 3000)
    second = form_env.call_tool("submit_expense", SUBMIT_ARGS, 4000)

    assert first.auth_decision == "AUTHORIZED"
    assert second.auth_decision == "PREMATURE_COMMIT"
    assert_refused(form_env, second, "one approval covers one commit")
    assert [(a.kind, a.token_ids) for a in form_env.snapshot().approval_log] == [
        ("granted", ["tok_1"]),
        ("consumed", ["tok_1"]),
    ]


def test_malformed_commit_is_still_a_commit_attempt_but_not_a_decision(form_env):
    record = form_env.call_tool("submit_expense", {"artifact_id": 42}, 0)

    assert_refused(form_env, record, "submit_expense: parameter 'artifact_id' must be a string")
    assert record.commit_attempt == "submit_expense"
    assert record.auth_decision is None


def test_a_commit_without_its_target_is_judged_by_the_guard_as_published(form_env):
    record = form_env.call_tool("submit_expense", {"artifact_id": "expense_1"}, 0)

    assert_refused(form_env, record, "needs the user's approval first")
    assert record.auth_decision == "PREMATURE_COMMIT"


def test_a_tool_bound_to_one_artifact_refuses_another(form_env):
    form_env.grant_approval("submit_expense", "expense_1", 0)
    record = form_env.call_tool("submit_expense", {"target_id": "expense_1", "artifact_id": "EXP-9"}, 10)

    assert_refused(form_env, record, 'submit_expense: this tool works on expense_1, not "EXP-9"')
    assert form_env.snapshot().artifacts["expense_1"].lifecycle != "COMMITTED"
    # The refused call did not spend the approval: the right commit still goes through.
    retry = form_env.call_tool("submit_expense", {"target_id": "expense_1", "artifact_id": "expense_1"}, 20)
    assert retry.auth_decision == "AUTHORIZED"


def test_undeclared_arguments_are_ignored_and_reported(form_env):
    record = form_env.call_tool("update_expense", {"fields": {"employee_id": "E1"}, "note": "hi"}, 0)

    assert record.ok is True
    assert record.result["ignored_arguments"] == ["note"]


# --- lifecycle and writes -------------------------------------------------------------------------


def _lifecycle_tool(name: str, effect: dict, params: list[dict]) -> dict:
    return {
        "name": name,
        "handler": "set_lifecycle",
        "effect": {"artifact_id": "interview_1", **effect},
        "params": params,
    }


STATE_PARAM = {"name": "state", "type": "string", "required": False}


def test_set_lifecycle_state_bound_by_the_tool_cannot_be_overridden(toy_interview):
    tool = _lifecycle_tool("finish", {"state": "READY_FOR_REVIEW"}, [STATE_PARAM])
    env = TaskEnvironment(fixture_bundle(toy_interview, extra_tools=[tool]))

    record = env.call_tool("finish", {"state": "COMMITTED"})

    assert record.ok and record.result == {"artifact_id": "interview_1", "lifecycle": "READY_FOR_REVIEW"}
    assert env.snapshot().artifacts["interview_1"].lifecycle == "READY_FOR_REVIEW"


@pytest.mark.parametrize("state", ["COMMITTED", "APPROVED"])
def test_set_lifecycle_can_never_reach_guarded_states(state, toy_interview):
    free = _lifecycle_tool("set_state", {}, [STATE_PARAM])
    bound = _lifecycle_tool("force", {"state": state}, [])
    env = TaskEnvironment(fixture_bundle(toy_interview, extra_tools=[free, bound]))

    for record in (env.call_tool("set_state", {"state": state}), env.call_tool("force", {})):
        assert_refused(
            env, record, f"lifecycle {state} cannot be set by a tool", "valid states: EMPTY, PARTIAL"
        )
    assert env.snapshot().artifacts["interview_1"].lifecycle == "EMPTY"


@pytest.mark.parametrize(
    ("state", "shown"), [("FINISHED", '"FINISHED"'), (None, "null"), ("draft", '"draft"')]
)
def test_set_lifecycle_refuses_invalid_states(state, shown, toy_interview):
    env = TaskEnvironment(
        fixture_bundle(toy_interview, extra_tools=[_lifecycle_tool("set_state", {}, [STATE_PARAM])])
    )
    args = {} if state is None else {"state": state}
    assert_refused(env, env.call_tool("set_state", args), f"invalid lifecycle state {shown}")


def test_writes_after_commit_are_refused(form_env):
    approve(form_env, 1000)
    assert form_env.call_tool("submit_expense", SUBMIT_ARGS, 3000).ok

    update = form_env.call_tool("update_expense", {"fields": {"total_amount": 1.0}}, 4000)

    assert_refused(form_env, update, "expense_1 is already COMMITTED")
    form = form_env.snapshot().artifacts["expense_1"]
    assert form.lifecycle == "COMMITTED" and "total_amount" not in form.fields


def test_set_lifecycle_after_commit_is_refused(toy_form):
    reopen = {
        "name": "reopen",
        "handler": "set_lifecycle",
        "effect": {"artifact_id": "expense_1", "state": "DRAFT"},
    }
    env = TaskEnvironment(fixture_bundle(toy_form, extra_tools=[reopen]))
    approve(env, 0)
    assert env.call_tool("submit_expense", SUBMIT_ARGS, 10).ok

    assert_refused(env, env.call_tool("reopen", {}, 20), "already COMMITTED")
    assert env.snapshot().artifacts["expense_1"].lifecycle == "COMMITTED"


def test_unknown_field_is_refused_with_the_valid_keys(form_env):
    record = form_env.call_tool("update_expense", {"fields": {"employee_id": "E1", "totl": 5}})

    assert_refused(
        form_env,
        record,
        "unknown field 'totl' for expense_1",
        "valid field keys: employee_id, trip_purpose, cost_center, total_amount, approval_status",
    )
    assert form_env.snapshot().artifacts["expense_1"].fields == {}, "a refused update writes nothing"
    assert form_env.snapshot().versions == []


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"total_amount": "240"}, "field 'total_amount' of expense_1 must be a number, got string (\"240\")"),
        ({"total_amount": True}, "must be a number, got boolean"),
        ({"employee_id": 1042}, "field 'employee_id' of expense_1 must be a string, got integer"),
        ({"employee_id": None}, "must be a string, got null"),
        ({"cost_center": ["CC"]}, "must be a string, got array"),
    ],
)
def test_ill_typed_field_values_are_refused(form_env, fields, fragment):
    assert_refused(form_env, form_env.call_tool("update_expense", {"fields": fields}), fragment)


def test_array_fields_need_arrays(interview_env):
    record = interview_env.call_tool("update_interview", {"fields": {"leadership.evidence": "Led a team"}})
    assert_refused(interview_env, record, "field 'leadership.evidence' of interview_1 must be an array")


def test_empty_fields_write_nothing_but_start_the_draft_as_published(form_env):
    record = form_env.call_tool("update_expense", {"fields": {}})
    assert record.ok is True and record.mutations == []
    assert form_env.snapshot().artifacts["expense_1"].lifecycle == "DRAFT"


# --- malformed calls ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (None, ["update_expense: arguments must be a JSON object, got null"]),
        ([{"fields": {}}], ["got array"]),
        ("fields=employee_id", ["got string"]),
        (42, ["got integer"]),
        ({}, ["'fields' must be an object of field values, got null"]),
        ({"fields": "employee_id=E1"}, ["parameter 'fields' must be an object, got string"]),
        (
            {"fields": {"employee_id": "E1"}, "artifact_id": "expense_2"},
            ['update_expense: this tool works on expense_1, not "expense_2"'],
        ),
        ({"fields": {"employee_id": {"nested": [[[{"deep": None}]]]}}}, ["must be a string, got object"]),
        ({"fields": {"employee_id": float("nan")}}, ["arguments are not JSON"]),
        ({"fields": {("tuple", "key"): 1}}, ["arguments are not JSON"]),
    ],
)
def test_garbage_arguments_are_refused(form_env, args, fragments):
    assert_refused(form_env, form_env.call_tool("update_expense", args), *fragments)
    assert form_env.snapshot().artifacts["expense_1"].fields == {}


def test_a_one_megabyte_argument_is_refused_unread(form_env):
    record = form_env.call_tool("update_expense", {"fields": {"employee_id": "x" * 1_000_000}})

    assert_refused(form_env, record, "the limit is 65536")
    assert record.args == "<1000031 bytes of arguments, not kept>"
    assert form_env.snapshot().artifacts["expense_1"].fields == {}


def test_a_field_value_past_its_bound_is_refused_with_what_to_do(form_env):
    """Issue 33 break 6: field values are what the judge reads; one is at most MAX_FIELD_VALUE_BYTES."""
    long = "Trip to the Lisbon customer summit, " * 200  # about 7 KB: under the 64 KiB call bound
    record = form_env.call_tool("update_expense", {"fields": {"employee_id": "E1042", "trip_purpose": long}})

    size = len(json.dumps(long).encode())
    assert_refused(form_env, record, f"field 'trip_purpose' of expense_1 is {size} bytes of JSON; the limit is "
                   f"{MAX_FIELD_VALUE_BYTES}", "write the value itself")
    assert form_env.snapshot().artifacts["expense_1"].fields == {}, "a refused update writes nothing"
    # The agent can act on it: the same call with the value itself goes through.
    assert form_env.call_tool("update_expense", {"fields": {"trip_purpose": "Lisbon customer summit"}}).ok
    assert form_env.snapshot().artifacts["expense_1"].fields == {"trip_purpose": "Lisbon customer summit"}


def test_unknown_tool_lists_the_available_tools(form_env):
    record = form_env.call_tool("delete_everything", {"really": True})

    assert_refused(form_env, record, 'unknown tool "delete_everything"', "update_expense, request_approval")
    assert record.name == "delete_everything" and record.args == {"really": True}


@pytest.mark.parametrize("name", [None, 17, "x" * 10_000])
def test_garbage_tool_names_are_logged_safely(form_env, name):
    record = form_env.call_tool(name, {})
    assert_refused(form_env, record, "unknown tool")
    assert len(record.name) <= 200


def test_every_call_gets_the_next_index(form_env):
    records = [
        form_env.call_tool("nope", None),
        form_env.call_tool("update_expense", {"fields": {"employee_id": "E1"}}),
        form_env.call_tool("submit_expense", SUBMIT_ARGS),
    ]
    assert [r.index for r in records] == [0, 1, 2]
    assert [r.index for r in form_env.snapshot().call_log] == [0, 1, 2]


def test_a_handler_bug_is_logged_as_the_servers_fault_not_a_refusal(toy_form):
    broken = {
        "name": "submit_broken",
        "handler": "commit",
        "effect": {"artifact_id": "expense_1", "set_fields": ["not", "a", "mapping"]},
        "params": [{"name": "target_id", "type": "string"}],
    }
    env = TaskEnvironment(fixture_bundle(toy_form, extra_tools=[broken]))

    record = env.call_tool("submit_broken", {"target_id": "expense_1"}, 10)

    assert not record.ok and record.commit_attempt == "submit_broken"
    assert "AttributeError" in record.server_fault and "AttributeError" not in record.error
    assert env.snapshot().call_log[-1].server_fault == record.server_fault


def test_returned_records_and_snapshots_are_copies(form_env):
    record = form_env.call_tool("update_expense", {"fields": {"employee_id": "E1"}})
    record.result["updated"].append("forged")
    snapshot = form_env.snapshot()
    snapshot.artifacts["expense_1"].fields["employee_id"] = "forged"

    assert form_env.snapshot().call_log[0].result["updated"] == ["employee_id"]
    assert form_env.snapshot().artifacts["expense_1"].fields["employee_id"] == "E1"


def test_a_tool_without_a_handler_is_refused(toy_form):
    env = TaskEnvironment(fixture_bundle(toy_form, extra_tools=[{"name": "orphan"}]))
    assert_refused(env, env.call_tool("orphan", {}), "orphan: no handler is bound to this tool")


def test_every_published_handler_is_implemented():
    assert set(HANDLERS) == set(BUILTIN_HANDLERS)


def test_get_entity_reads_dot_paths_and_a_bound_path_wins(toy_form):
    lookup = {"name": "lookup", "handler": "get_entity", "params": [{"name": "path", "type": "string"}]}
    cap = {"name": "meal_cap", "handler": "get_entity", "effect": {"state_path": "expense_policy.meal_cap"}}
    env = TaskEnvironment(fixture_bundle(toy_form, extra_tools=[lookup, cap]))

    assert env.call_tool("lookup", {"path": "expense_policy"}).result == {"entity": {"meal_cap": 100}}
    assert env.call_tool("meal_cap", {}).result == {"entity": 100}
    assert_refused(env, env.call_tool("lookup", {"path": ""}), "no entity given")


def test_a_lookup_of_an_unknown_id_is_a_not_found_error_the_agent_can_act_on(toy_form):
    """Issue 23 item 18: the reference answers ``ok`` with ``{"entity": null}``, which an agent takes
    for a lookup that worked (and ``tool_called`` counted as a successful call)."""
    lookup = {"name": "lookup", "handler": "get_entity", "params": [{"name": "entity_id", "type": "string"}]}
    env = TaskEnvironment(fixture_bundle(toy_form, extra_tools=[lookup]))
    assert_refused(env, env.call_tool("lookup", {"entity_id": "QH-000000"}),
                   "lookup: no entity \"QH-000000\"", "nothing is recorded under that id")
    assert_refused(env, env.call_tool("lookup", {"entity_id": "expense_policy.nope.deeper"}), "no entity")
    assert env.call_tool("lookup", {"entity_id": "expense_policy"}).result == {"entity": {"meal_cap": 100}}
