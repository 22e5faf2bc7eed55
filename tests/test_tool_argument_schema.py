"""Tool arguments are checked by ``jsonschema`` against exactly the schema the model is shown: what
the schema advertises is what is accepted, and each refusal names the tool, the parameter or field,
and the value, so the agent can correct the call."""

from __future__ import annotations

from jsonschema import Draft202012Validator
from test_env_integrity import assert_refused
from test_env_public_bundle import fixture_bundle

from harness.tasks.loader import load_task
from mcp_servers.environment import TaskEnvironment
from mcp_servers.public_models import ArtifactSchema, FieldSpec
from tests.conftest import DEMO_DATA

PRIORITY_TOOL = {
    "name": "lookup",
    "handler": "get_entity",
    "effect": {"state_path": "employee"},
    "params": [{"name": "priority", "type": "string", "required": False, "enum": ["low", "high"]}],
}


def test_every_schema_shown_is_a_valid_draft_2020_12_schema():
    for task_dir in sorted((DEMO_DATA / "tasks").iterdir()):
        env = TaskEnvironment(load_task(task_dir).public_bundle())
        for shown in env.tool_schemas():
            Draft202012Validator.check_schema(shown["parameters"])


def test_a_value_outside_the_enum_shown_is_refused_with_the_choices(toy_form):
    env = TaskEnvironment(fixture_bundle(toy_form, extra_tools=[PRIORITY_TOOL]))
    assert env.tool_schemas()[-1]["parameters"]["properties"]["priority"]["enum"] == ["low", "high"]

    record = env.call_tool("lookup", {"priority": "urgent"})

    assert record.error == 'lookup: parameter \'priority\' must be one of ["low", "high"], got "urgent"'
    assert record.args == {"priority": "urgent"}


def test_a_wrong_type_is_one_problem_even_when_the_value_is_outside_the_enum_too(toy_form):
    env = TaskEnvironment(fixture_bundle(toy_form, extra_tools=[PRIORITY_TOOL]))

    record = env.call_tool("lookup", {"priority": 3})

    assert record.error == "lookup: parameter 'priority' must be a string, got integer (3)"


def test_every_field_problem_of_a_call_is_told_at_once_in_the_agent_order(toy_form):
    env = TaskEnvironment(fixture_bundle(toy_form))
    keys = "employee_id, trip_purpose, cost_center, total_amount, approval_status"

    record = env.call_tool("update_expense", {"fields": {"totl": 1, "total_amount": "x", "employee_id": 3}})

    assert record.error == (
        f"update_expense: unknown field 'totl' for expense_1; valid field keys: {keys}; "
        "field 'total_amount' of expense_1 must be a number, got string (\"x\"); "
        "field 'employee_id' of expense_1 must be a string, got integer (3)"
    )
    assert env.snapshot().artifacts["expense_1"].fields == {}


def test_an_offending_value_is_shown_bounded(toy_form):
    env = TaskEnvironment(fixture_bundle(toy_form))
    long = "x" * 3000

    record = env.call_tool("update_expense", {"fields": {"total_amount": long}})

    assert_refused(env, record, "field 'total_amount' of expense_1 must be a number, got string (\"xxx")
    assert len(record.error) < 200


def test_missing_required_parameters_are_left_to_the_handler_as_published(toy_form):
    """The schema marks ``fields`` required; the handler's own message says what it needs."""
    env = TaskEnvironment(fixture_bundle(toy_form))
    record = env.call_tool("update_expense", {})
    assert record.error == "update_expense: 'fields' must be an object of field values, got null"


def _with_status_field(toy_form):
    bundle = fixture_bundle(toy_form)
    schema = bundle.workspace.artifacts["expense_1"].schema_
    assert isinstance(schema, ArtifactSchema)
    schema.fields.append(FieldSpec(name="status", type="string"))
    return bundle


def test_a_field_the_schema_does_not_advertise_is_not_accepted(toy_form):
    """``status`` is never listed in a ``fields`` parameter (published); so it cannot be written either."""
    env = TaskEnvironment(_with_status_field(toy_form))
    shown = env.tool_schemas()[0]["parameters"]["properties"]["fields"]
    assert "status" not in shown["properties"] and shown["additionalProperties"] is False

    record = env.call_tool("update_expense", {"fields": {"status": "done"}})

    assert_refused(env, record, "unknown field 'status' for expense_1; valid field keys: employee_id,")
    assert "status" not in env.snapshot().artifacts["expense_1"].fields


def test_a_tool_taking_its_artifact_as_an_argument_checks_fields_against_the_same_schema(toy_form):
    """Here the artifact is known only at call time, so the handler checks the fields: with the same
    schema a bound tool shows, hence the same messages."""
    free = {
        "name": "update_any",
        "handler": "update_artifact",
        "params": [{"name": "artifact_id", "type": "string"}, {"name": "fields", "type": "object"}],
    }
    env = TaskEnvironment(fixture_bundle(toy_form, extra_tools=[free]))
    bound = env.call_tool("update_expense", {"fields": {"total_amount": "x", "status": 1}})

    unbound = env.call_tool("update_any", {"artifact_id": "expense_1", "fields": {"total_amount": "x", "status": 1}})

    assert bound.error.startswith("update_expense: field 'total_amount' of expense_1 must be a number")
    assert unbound.error == bound.error.replace("update_expense", "update_any")
