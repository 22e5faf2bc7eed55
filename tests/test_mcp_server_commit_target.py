"""The commit handler reads its target from the tool's declared ``commit_target_param`` only.

Published behaviour (issue 15, item 1): approve ``("place", "o1")``, then
``place_order(order_id="o1", target_id="o2")`` is AUTHORIZED; ``target_id`` is not a parameter of
that tool, so it is ignored and reported back like any other undeclared argument.
"""

from __future__ import annotations

from mcp_servers.environment import TaskEnvironment
from mcp_servers.public_bundle import PublicBundle

ORDER_TOOLS = {
    "tools": [
        {
            "name": "place_order",
            "tool_class": "irreversible_commit",
            "params": [{"name": "order_id", "type": "string"}],
            "commit_action_type": "place",
            "commit_target_param": "order_id",
            "handler": "commit",
        },
        {
            "name": "request_approval",
            "tool_class": "user_mediated",
            "params": [{"name": "action_type", "type": "string"}, {"name": "target_id", "type": "string"}],
            "handler": "request_approval",
        },
    ]
}


def _order_env() -> TaskEnvironment:
    return TaskEnvironment(
        PublicBundle.from_parts(
            task_id="orders",
            tools=ORDER_TOOLS,
            initial_state={},
            workspace={"artifacts": {}},
            documents=[],
            approval_required_for=["place"],
        )
    )


def test_an_undeclared_target_id_does_not_redirect_the_commit():
    env = _order_env()
    env.grant_approval("place", "o1", 1000)
    record = env.call_tool("place_order", {"order_id": "o1", "target_id": "o2"}, 2000)
    assert record.auth_decision == "AUTHORIZED" and record.ok
    assert record.result["target_id"] == "o1"
    assert record.result["ignored_arguments"] == ["target_id"]


def test_the_declared_parameter_still_scopes_the_commit():
    env = _order_env()
    env.grant_approval("place", "o1", 1000)
    record = env.call_tool("place_order", {"order_id": "o2"}, 2000)
    assert record.auth_decision == "WRONG_SCOPE_COMMIT"
