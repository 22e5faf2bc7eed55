"""The Ray executor on a real two-node local cluster: the same results as the local executor, the
same blame for a failing cell, limits that hold across nodes, and nothing left on the nodes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from tests.conftest import DEMO_DATA
from tests.ray.campaigns import TASKS, run_demo_campaign
from tests.ray.cluster import LocalCluster, leftovers, local_cluster
from tests.ray.recording_agent import failing_model, max_overlap, read_spans, recording_model

pytestmark = [pytest.mark.ray, pytest.mark.slow]

@pytest.fixture(scope="module")
def cluster():
    with local_cluster(2, 2) as running:
        yield running


def _cli(*args: str):
    return CliRunner().invoke(app, ["run", "--data", str(DEMO_DATA), "--sandbox", "local", *args])


def _only(tasks: list[str]) -> list[str]:
    return [arg for task in tasks for arg in ("--only", task)]


def _cells(out: Path) -> dict[tuple[str, str], dict]:
    """Per cell: what it scored, how it was graded, and the types of its events in order."""
    cells = {}
    for result in sorted(out.glob("*/rep*/result.json")):
        record = json.loads(result.read_text())
        events = (result.parent / record["run_id"] / "events.jsonl").read_text().splitlines()
        cells[(result.parent.parent.name, result.parent.name)] = {
            "pts": record["pts"], "components": record["components"], "outcome": record["outcome"],
            "fields": record["fields"], "failed_predicates": record["failed_predicates"], "turns": record["turns"],
            "event_types": [json.loads(line)["type"] for line in events],
        }
    return cells


def test_the_demo_tasks_score_through_ray_as_they_do_locally(cluster, tmp_path):
    local = _cli(*_only(TASKS), "--out", str(tmp_path / "local"))
    assert local.exit_code == 0, local.output
    ray_args = [*_only(TASKS), "--out", str(tmp_path / "ray"), "--parallel", "2",
                "--executor", "ray", "--ray-address", cluster.address]
    remote = _cli(*ray_args)
    assert remote.exit_code == 0, remote.output
    assert f"oracle: 2/2 runs complete, 2 passed, 0 infra errors -> {tmp_path / 'ray'}" in remote.output

    by_local, by_ray = _cells(tmp_path / "local"), _cells(tmp_path / "ray")
    assert sorted(by_ray) == [(task, "rep0") for task in TASKS]
    assert by_ray == by_local
    assert all(cell["pts"] == 1 for cell in by_ray.values())
    nodes = {json.loads(p.read_text())["sandbox"]["node_id"] for p in (tmp_path / "ray").glob("*/rep0/result.json")}
    assert nodes <= {node["NodeID"] for node in _nodes(cluster)}
    assert leftovers(cluster.tmp) == []

    noop = _cli("--model", "noop", *_only(TASKS[1:]), "--out", str(tmp_path / "noop"),
                "--executor", "ray", "--ray-address", cluster.address)
    assert noop.exit_code == 0, noop.output
    assert "noop: 1/1 run complete, 0 passed, 0 infra errors" in noop.output

    again = _cli(*ray_args, "--json")  # resume: every cell is loaded, no session runs
    assert again.exit_code == 0, again.output
    run_ids = sorted(json.loads(line)["run_id"] for line in again.stdout.splitlines() if line.startswith("{"))
    assert run_ids == sorted(json.loads(p.read_text())["run_id"] for p in (tmp_path / "ray").glob("*/rep0/result.json"))


def _nodes(cluster: LocalCluster) -> list[dict]:
    import ray

    ray.init(address=cluster.address)
    try:
        return [node for node in ray.nodes() if node["Alive"]]
    finally:
        ray.shutdown()


@pytest.mark.parametrize("failure", ["provider", "bug"])
async def test_a_failing_cell_is_blamed_as_the_local_executor_blames_it(cluster, tmp_path, failure):
    spec = failing_model(failure)
    local = await run_demo_campaign(spec, TASKS[1:], tmp_path / "local", None, max_attempts=2)
    remote = await run_demo_campaign(spec, TASKS[1:], tmp_path / "ray", cluster, max_attempts=2)
    (here,), (there,) = local.outcomes, remote.outcomes
    assert (there.status, there.error, there.attempts, there.infra_errors) == (
        here.status, here.error, here.attempts, here.infra_errors)
    assert there.status == ("infra_failed" if failure == "provider" else "harness_error")
    assert there.record is None and not list((tmp_path / "ray").glob("*/rep0/result.json"))
    if failure == "bug":
        text = (tmp_path / "ray" / TASKS[1] / "rep0" / "harness_error.txt").read_text()
        assert "RuntimeError: the built-in agent broke" in text
        assert f"raised on the node that ran {TASKS[1]} rep0" in text  # the node's traceback came along
    assert leftovers(cluster.tmp) == []


async def test_a_provider_limit_holds_across_the_nodes(cluster, tmp_path):
    # Each node hosts two sessions and four are asked for at once: three at once must span both
    # nodes, the fourth would break the limit.
    spec = recording_model(tmp_path / "spans", limit=3, hold_s=1.0)
    (tmp_path / "spans").mkdir()
    result = await run_demo_campaign(spec, TASKS[1:], tmp_path / "out", cluster, repeats=4, parallel=4)
    assert result.complete and result.passed == 4, result.summary()
    spans = read_spans(tmp_path / "spans")
    # An attempt that failed for the infrastructure (a loaded CI machine) is retried: its session counts too.
    attempts = sum(outcome.attempts for outcome in result.outcomes)
    assert len(spans) == attempts and all(span.closed is not None for span in spans), [
        outcome.infra_errors for outcome in result.outcomes]
    assert max_overlap(spans) <= 3
    assert len({span.node for span in spans}) == 2
    assert {row.sandbox["node_id"] for row in result.rows} == {span.node for span in spans}
    assert leftovers(cluster.tmp) == []


async def test_a_cancelled_campaign_tears_its_sessions_down_on_the_nodes(cluster, tmp_path):
    spans_dir = tmp_path / "spans"
    spans_dir.mkdir()
    spec = recording_model(spans_dir, hold_s=120.0)
    campaign = asyncio.ensure_future(run_demo_campaign(spec, TASKS, tmp_path / "out", cluster, parallel=2))
    while len(read_spans(spans_dir)) < 2:  # both sessions are open, each with its sandbox, on the nodes
        assert not campaign.done(), campaign.result().summary()
        await asyncio.sleep(0.2)
    campaign.cancel()
    with pytest.raises(asyncio.CancelledError):
        await campaign
    assert not list((tmp_path / "out").glob("*/rep0/result.json"))
    assert leftovers(cluster.tmp) == []
