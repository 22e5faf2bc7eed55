"""A C0 session through the sandboxed server grades exactly like one run in process.

Same agent, same task: the PTS and the environment snapshot (minus wall-clock stamps) must match,
so where the tools ran can never change a result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.agents.text_agents import NoOpAgent, ScriptedAgent
from harness.session.environment_port import InProcessEnvironment
from harness.session.mcp_environment import SandboxedEnvironments
from harness.session.text_runner import run_text_session
from harness.tasks.loader import load_task
from harness.validate import validate_task
from sandbox.backend import get_backend


def _without_wall_time(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_wall_time(v) for k, v in value.items() if k != "wall_time_ns"}
    if isinstance(value, list):
        return [_without_wall_time(v) for v in value]
    return value


@pytest.fixture(params=["toy_form", "toy_interview"])
def task_dir(request) -> Path:
    return request.getfixturevalue(request.param)


@pytest.mark.parametrize("agent_kind", ["oracle", "noop"])
async def test_c0_through_the_local_sandbox_matches_in_process(task_dir: Path, agent_kind: str):
    def agent():
        bundle = load_task(task_dir)
        return ScriptedAgent.oracle(bundle.policy) if agent_kind == "oracle" else NoOpAgent()

    bundle = load_task(task_dir)
    in_process = await run_text_session(bundle, agent(), InProcessEnvironment(bundle.public_bundle()), run_id="p")
    async with SandboxedEnvironments(get_backend("local")) as make_env:
        sandboxed_bundle = load_task(task_dir)
        env = make_env(sandboxed_bundle.public_bundle())
        sandboxed = await run_text_session(sandboxed_bundle, agent(), env, run_id="s")
        assert not env.snapshot_recovered
    assert sandboxed.pts == in_process.pts == (1 if agent_kind == "oracle" else 0)
    assert sandboxed.outcome == in_process.outcome
    assert _without_wall_time(sandboxed.snapshot.model_dump(mode="json")) == _without_wall_time(
        in_process.snapshot.model_dump(mode="json")
    )


async def test_validate_through_the_local_sandbox(task_dir: Path):
    async with SandboxedEnvironments(get_backend("local")) as make_env:
        report = await validate_task(task_dir, make_env=make_env)
    assert report.ok, report.problems
    assert report.oracle_pass and report.noop_fail
