"""Seeded fuzzing: no argument the agent can send makes the environment raise.

Bounded and deterministic (fixed seed, fixed number of calls), so it runs in every test session.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from test_env_public_bundle import fixture_bundle

from mcp_servers.environment import TaskEnvironment
from mcp_servers.public_models import ToolSpec

CALLS_PER_TOOL = 250
_SCALARS: list[Any] = [
    None, True, False, 0, -1, 2**70, 3.5, -0.0, float("inf"), float("nan"), "", "expense_1", "interview_1",
    "COMMITTED", "READY_FOR_REVIEW", "submit_expense", "ünïcødé ✓", "a.b.c", "x" * 300,
    b"bytes", {1, 2}, ("tuple",), object(),
]  # fmt: skip
_JSON_SCALARS: list[Any] = [
    None, True, 0, 240.0, "", "expense_1", "interview_1", "E1042", "covered", "COMMITTED", "DRAFT",
]  # fmt: skip


def _random_value(rng: random.Random, keys: list[str], depth: int = 0) -> Any:
    roll = rng.random()
    if depth >= 3 or roll < 0.55:
        return rng.choice(_SCALARS)
    if roll < 0.75:
        return [_random_value(rng, keys, depth + 1) for _ in range(rng.randint(0, 4))]
    return {_random_key(rng, keys): _random_value(rng, keys, depth + 1) for _ in range(rng.randint(0, 4))}


def _random_key(rng: random.Random, keys: list[str]) -> Any:
    return rng.choice(keys) if rng.random() < 0.8 else rng.choice(["", "?", 7, None, "fields.fields"])


def _well_shaped_args(rng: random.Random, spec: ToolSpec, field_keys: list[str]) -> dict[str, Any]:
    """Declared parameters only, with JSON values, so calls get past shape checks into the handlers."""
    args: dict[str, Any] = {}
    for param in spec.params:
        if rng.random() < 0.9:
            args[param.name] = _json_value(rng, field_keys, param.name == "fields")
    return args


def _json_value(rng: random.Random, field_keys: list[str], as_fields: bool) -> Any:
    if as_fields and rng.random() < 0.8:
        return {
            rng.choice(field_keys): rng.choice(_JSON_SCALARS + [["a", 1], []])
            for _ in range(rng.randint(0, 3))
        }
    return rng.choice(_JSON_SCALARS)


def _random_args(rng: random.Random, spec: ToolSpec, keys: list[str], field_keys: list[str]) -> Any:
    """Half well shaped, half anything at all (non-JSON values, wrong shapes, unknown keys)."""
    if rng.random() < 0.5:
        return _well_shaped_args(rng, spec, field_keys)
    if rng.random() < 0.2:
        return _random_value(rng, keys)
    return {_random_key(rng, keys): _random_value(rng, keys, 1) for _ in range(rng.randint(0, 4))}


@pytest.mark.parametrize("fixture_name", ["toy_form", "toy_interview"])
def test_call_tool_never_raises_on_random_arguments(fixture_name, request):
    bundle = fixture_bundle(request.getfixturevalue(fixture_name))
    env = TaskEnvironment(bundle)
    rng = random.Random(20260101)
    field_keys = [f.name for a in bundle.workspace.artifacts.values() for f in a.schema_.fields] + ["bogus"]
    keys = [p.name for t in bundle.tools.tools for p in t.params] + field_keys + ["state", "artifact_id"]

    count = 0
    for spec in bundle.tools.tools:
        for _ in range(CALLS_PER_TOOL):
            if rng.random() < 0.1:
                env.grant_approval("submit_expense", rng.choice(["expense_1", ""]), rng.randint(0, 10_000))
            args = _random_args(rng, spec, keys, field_keys)
            record = env.call_tool(spec.name, args, media_time_ms=rng.randint(0, 10_000))
            assert record.index == count and record.name == spec.name
            assert record.ok or record.error
            assert "internal error" not in (record.error or ""), record.error
            count += 1

    snapshot = env.snapshot()
    assert len(snapshot.call_log) == count
    assert sum(r.ok for r in snapshot.call_log) > count // 20, "the fuzzer also reaches the handlers"
    json.loads(snapshot.model_dump_json())  # the whole log still serializes for the wire
