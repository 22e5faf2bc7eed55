"""Seeded fuzzing through the wire: hostile names and arguments from a bridged agent, via the real
MCP client and server, never raise, never kill the client, and log exactly what the in-process
environment logs. Bounded (fixed seed and count) so it runs in every test session.
"""

from __future__ import annotations

import random
from typing import Any

from harness.session.mcp_environment import McpEnvironment
from harness.tasks.loader import load_task
from mcp_servers.environment import TaskEnvironment
from mcp_servers.server import TaskServer
from tests.served_server import served_sandbox

CALLS = 80
_TEXT_PIECES = ["\ud800", "\udfff", "\x00", "\u202e", "é", "𝕏", "\n", '"', "\\", "expense_1", "update_expense", "x" * 70_000]
_SCALARS: list[Any] = [None, True, 0, -1, 2**70, 3.5, float("nan"), float("inf"), -0.0, "", "E1042"]
_NAMES = ["update_expense", "submit_expense", "request_approval", "nope"]


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(_TEXT_PIECES) for _ in range(rng.randint(0, 3)))


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 40 or roll < 0.35:
        return rng.choice(_SCALARS)
    if roll < 0.6:
        return _text(rng)
    if roll < 0.8:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 2))]
    return {rng.choice(["fields", "employee_id", "target_id", "artifact_id", _text(rng)]): _value(rng, depth + 1)}


def _call(rng: random.Random) -> tuple[str, Any]:
    name = rng.choice(_NAMES) if rng.random() < 0.7 else rng.choice(_NAMES) + _text(rng)
    args: Any = {"fields": {"employee_id": _value(rng)}} if rng.random() < 0.4 else _value(rng)
    if rng.random() < 0.1:  # deeper than any limit
        for _ in range(60):
            args = [args]
    return name, args


async def test_hostile_calls_through_the_wire_match_the_in_process_log(toy_form):
    rng = random.Random(1414)
    calls = [_call(rng) for _ in range(CALLS)]
    bundle = load_task(toy_form).public_bundle()
    async with served_sandbox(TaskServer(bundle)) as sandbox, McpEnvironment(sandbox) as env:
        wire = [await env.call_tool(name, args, index) for index, (name, args) in enumerate(calls)]
        snapshot = await env.snapshot()
    in_process_env = TaskEnvironment(bundle)
    local = [in_process_env.call_tool(name, args, index) for index, (name, args) in enumerate(calls)]
    assert len(snapshot.call_log) == CALLS
    for got, expected in zip(wire, local, strict=True):
        assert got.model_dump(exclude={"wall_time_ns"}) == expected.model_dump(exclude={"wall_time_ns"})
    assert any(not record.ok for record in wire) and any(record.ok for record in wire)
