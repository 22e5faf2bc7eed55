"""Whose fault it is when a container dies mid-session under a container agent, through the campaign.

The agent is the silent attacker image (``benign`` plan: connected, says nothing); the test kills
a container with ``docker kill`` a few seconds into the conversation. The agent container *is* the
model: killing it ends the session, which is scored as the agent's failure and never retried, even
with retries left. The task server is infrastructure: killing it fails the attempt as the sandbox's
fault, the cell is retried, and only the retry's session is scored (the failed attempt is listed in
``infra_errors``). tests/test_agent_container.py kills at the native oracle's first tool call
with no retry allowed; these kill an agent that never calls, and let the campaign retry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from harness.events import EventType
from tests.security.attacker.image import build_attacker, build_plan_image, remove_plan_images
from tests.security.attacker.sessions import native_campaign, short_task

# Faults and attacks land at wall-clock moments inside a session: pace it at 1x.
pytestmark = [pytest.mark.docker, pytest.mark.wall_clock]

BUDGET_S = 8
KILL_AFTER_S = 2.0  # into the session: the user is talking, the agent is connected


@pytest.fixture(scope="module")
def silent_agent(docker_engine):
    image = build_plan_image(docker_engine, build_attacker(docker_engine), {"mode": "benign"})
    yield image
    remove_plan_images(docker_engine)


def _kill_in_first_session(engine, pick: Callable[[dict[str, Any]], str]):
    """An ``on_session`` hook: in the first session only, ``docker kill`` the container ``pick`` names."""
    killed: list[str] = []
    pending: list[asyncio.Task] = []

    async def kill(container_id: str) -> None:
        await asyncio.sleep(KILL_AFTER_S)
        await asyncio.to_thread(lambda: engine.containers.get(container_id).kill())
        killed.append(container_id)

    def hook(cell, bus) -> None:
        def watch(event) -> None:
            if event.type == EventType.SANDBOX_STARTED and not pending:
                pending.append(asyncio.get_running_loop().create_task(kill(pick(event.payload["metadata"]))))

        bus.subscribe(watch)

    return hook, killed


async def test_a_killed_agent_container_is_scored_as_the_agents_failure_and_not_retried(
    docker_engine, silent_agent, tmp_path
):
    hook, killed = _kill_in_first_session(docker_engine, lambda meta: meta["agent_container"]["container_id"])
    result = await native_campaign(
        silent_agent, short_task(tmp_path, BUDGET_S), tmp_path / "runs", max_attempts=3, on_session=hook
    )
    (outcome,) = result.outcomes
    assert len(killed) == 1
    assert outcome.status == "ran" and outcome.attempts == 1  # retries were left; none was taken
    record = outcome.record
    assert record is not None and record.error is None
    assert record.pts == 0 and record.outcome == "FAILURE"
    assert record.sandbox["agent_container"]["container_id"] == killed[0]
    assert any("the agent container failed" in e for e in record.agent_errors), record.agent_errors
    assert record.infra_errors == []  # the agent's failure is not infrastructure
    assert (
        tmp_path / "runs" / record.task_id / f"rep{record.rep}" / "result.json"
    ).is_file()  # a scored cell


async def test_a_killed_task_server_is_infrastructure_retried_and_never_scored(
    docker_engine, silent_agent, tmp_path
):
    hook, killed = _kill_in_first_session(docker_engine, lambda meta: meta["container_id"])
    result = await native_campaign(
        silent_agent, short_task(tmp_path, BUDGET_S), tmp_path / "runs", max_attempts=2, on_session=hook
    )
    (outcome,) = result.outcomes
    assert len(killed) == 1
    assert outcome.status == "ran" and outcome.attempts == 2  # the killed attempt was retried
    assert len(outcome.infra_errors) == 1 and outcome.infra_errors[0].startswith("attempt 1:")
    record = outcome.record
    assert record is not None and record.sandbox["container_id"] != killed[0]  # the retry's own server
    assert record.infra_errors[0] == outcome.infra_errors[0]  # the lost attempt is on record, not scored
