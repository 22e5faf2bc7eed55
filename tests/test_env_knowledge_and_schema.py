"""Knowledge search (published scoring and ordering) and the tool schemas shown to the model."""

from __future__ import annotations

import pytest
from test_env_public_bundle import fixture_bundle

from mcp_servers.environment import TaskEnvironment
from mcp_servers.knowledge_base import KnowledgeBase, tokenize
from mcp_servers.public_models import KnowledgeDocument

DOCS = [
    KnowledgeDocument(doc_id="d_meals", title="Meal policy", text="Meals are capped at 100 dollars per day."),
    KnowledgeDocument(doc_id="c_travel", title="Travel", text="Travel meals need receipts; policy 7.2."),
    KnowledgeDocument(doc_id="a_travel", text="Travel: book economy.", gold=True),
    KnowledgeDocument(doc_id="z_parking", title="Parking", text="Garage levels 1-3."),
]
SEARCH_TOOL = {
    "name": "search_policies",
    "tool_class": "retrieval",
    "description": "Search the policy handbook.",
    "handler": "kb_search",
    "params": [
        {"name": "query", "type": "string", "description": "Keywords to look for."},
        {"name": "top_k", "type": "int", "required": False},
    ],
}


def test_tokenize_keeps_distinct_lowercase_alphanumeric_runs():
    assert tokenize("Meal-Policy 7.2, meal POLICY!") == {"meal", "policy", "7", "2"}


def test_scores_count_distinct_query_tokens_and_ties_go_to_doc_id():
    kb = KnowledgeBase(DOCS)

    hits = kb.search("travel meals policy policy", top_k=10, media_time_ms=50)

    assert [(h.doc_id, h.score) for h in hits] == [("c_travel", 3), ("d_meals", 2), ("a_travel", 1)]
    assert hits[2].title == "a_travel", "a document without a title is titled by its id"
    assert [(r.query, r.top_k, r.hits, r.media_time_ms) for r in kb.log] == [
        ("travel meals policy policy", 10, ["c_travel", "d_meals", "a_travel"], 50)
    ]


@pytest.mark.parametrize(
    ("query", "top_k", "expected"), [("travel", 1, ["a_travel"]), ("helicopter", 3, []), ("", 3, [])]
)
def test_top_k_and_no_match(query, top_k, expected):
    assert [h.doc_id for h in KnowledgeBase(DOCS).search(query, top_k)] == expected


def test_kb_search_tool_returns_hits_without_grading_flags(toy_form):
    env = TaskEnvironment(fixture_bundle(toy_form, documents=DOCS, extra_tools=[SEARCH_TOOL]))

    record = env.call_tool("search_policies", {"query": "travel"}, media_time_ms=7)

    assert record.ok
    assert record.result == {
        "hits": [
            {"doc_id": "a_travel", "title": "a_travel", "score": 1, "text": "Travel: book economy."},
            {
                "doc_id": "c_travel",
                "title": "Travel",
                "score": 1,
                "text": "Travel meals need receipts; policy 7.2.",
            },
        ]
    }
    assert "gold" not in str(record.result)
    assert env.snapshot().search_log[0].hits == ["a_travel", "c_travel"]


def test_optional_parameters_sent_as_null_count_as_not_given(toy_form):
    env = TaskEnvironment(fixture_bundle(toy_form, documents=DOCS, extra_tools=[SEARCH_TOOL]))
    record = env.call_tool("search_policies", {"query": "travel meals policy", "top_k": None})
    assert record.ok and [h["doc_id"] for h in record.result["hits"]] == ["c_travel", "d_meals", "a_travel"]
    assert record.args == {"query": "travel meals policy", "top_k": None}, "the log keeps what the agent sent"
    refused = env.call_tool("search_policies", {"query": None})
    assert not refused.ok and "parameter 'query' must be a string, got null" in refused.error


def test_kb_search_tool_validates_top_k(toy_form):
    env = TaskEnvironment(fixture_bundle(toy_form, documents=DOCS, extra_tools=[SEARCH_TOOL]))
    record = env.call_tool("search_policies", {"query": "travel", "top_k": "2"})
    assert not record.ok and "parameter 'top_k' must be an integer, got string" in record.error
    assert env.snapshot().search_log == []


def test_form_schemas_match_the_published_shape(toy_form):
    env = TaskEnvironment(fixture_bundle(toy_form))
    keys = "employee_id, trip_purpose, cost_center, total_amount, approval_status"

    assert env.tool_schemas() == [
        {
            "name": "update_expense",
            "description": f"Draft-write one or more fields on the expense report. Valid field keys for expense_1: {keys}.",
            "parameters": {
                "type": "object",
                "properties": {
                    "fields": {
                        "type": "object",
                        "properties": {
                            "employee_id": {"type": "string"},
                            "trip_purpose": {"type": "string"},
                            "cost_center": {"type": "string"},
                            "total_amount": {"type": "number"},
                            "approval_status": {"type": "string"},
                        },
                        "additionalProperties": False,
                        "description": f"Record one or more of these fields using these EXACT key names: {keys}",
                    }
                },
                "required": ["fields"],
            },
        },
        {
            "name": "request_approval",
            "description": "Ask the user to approve submitting the expense report.",
            "parameters": {
                "type": "object",
                "properties": {"target_id": {"type": "string"}},
                "required": ["target_id"],
            },
        },
        {
            "name": "submit_expense",
            "description": "Irreversibly submit the expense report (requires approval).",
            "parameters": {
                "type": "object",
                "properties": {"target_id": {"type": "string"}, "artifact_id": {"type": "string"}},
                "required": ["target_id", "artifact_id"],
            },
        },
    ]


def test_interview_schemas_keep_dotted_keys_and_give_arrays_items(toy_interview):
    update, finish = TaskEnvironment(fixture_bundle(toy_interview)).tool_schemas()

    fields = update["parameters"]["properties"]["fields"]
    assert fields["properties"] == {
        "subject_id": {"type": "string"},
        "technical_depth.evidence": {"type": "array", "items": {}},
        "technical_depth.status": {"type": "string"},
        "leadership.evidence": {"type": "array", "items": {}},
        "leadership.status": {"type": "string"},
        "notes": {"type": "string"},
    }
    assert update["description"].endswith(
        " Valid field keys for interview_1: subject_id, technical_depth.evidence, technical_depth.status, "
        "leadership.evidence, leadership.status, notes."
    )
    assert finish == {
        "name": "set_ready",
        "description": "Mark the interview record ready for review.",
        "parameters": {"type": "object", "properties": {}, "required": []},
    }


def test_schemas_keep_param_descriptions_and_enums_map_types_and_hide_discoverable_tools(toy_form):
    extra = [
        SEARCH_TOOL
        | {"params": SEARCH_TOOL["params"] + [{"name": "scope", "type": "Text", "enum": ["hr", "travel"]}]},
        {"name": "tags", "params": [{"name": "labels", "type": "array"}, {"name": "flag", "type": "bool"}]},
        {"name": "hidden", "discoverable": True},
    ]
    schemas = {
        s["name"]: s for s in TaskEnvironment(fixture_bundle(toy_form, extra_tools=extra)).tool_schemas()
    }

    assert "hidden" not in schemas
    assert schemas["search_policies"]["parameters"] == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Keywords to look for."},
            "top_k": {"type": "integer"},
            "scope": {"type": "string", "enum": ["hr", "travel"]},
        },
        "required": ["query", "scope"],
    }
    assert schemas["tags"]["parameters"]["properties"] == {
        "labels": {"type": "array", "items": {}},
        "flag": {"type": "boolean"},
    }
