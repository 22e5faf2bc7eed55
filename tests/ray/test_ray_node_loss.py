"""A node of the cluster dies mid-campaign: its cells are infrastructure, retried on the other node,
and no cell is lost or counted twice."""

from __future__ import annotations

import asyncio
import json

import pytest

from sandbox.session_files import sweep_orphaned_files
from tests.ray.campaigns import TASKS, run_demo_campaign
from tests.ray.cluster import leftovers, local_cluster
from tests.ray.recording_agent import read_spans, recording_model

pytestmark = [pytest.mark.ray, pytest.mark.slow]

#: Notice a dead node in seconds rather than Ray's default half minute.
FAST_HEALTH_CHECKS = {"health_check_initial_delay_ms": 0, "health_check_period_ms": 500,
                      "health_check_timeout_ms": 500, "health_check_failure_threshold": 3}


@pytest.fixture(scope="module")
def cluster():
    with local_cluster(2, 2, system_config=FAST_HEALTH_CHECKS) as running:
        yield running


async def test_a_node_removed_mid_campaign_loses_no_cell_and_counts_none_twice(cluster, tmp_path):
    spans_dir = tmp_path / "spans"
    spans_dir.mkdir()
    (doomed,) = cluster.cluster.worker_nodes
    spec = recording_model(spans_dir, hold_s=4.0)
    out = tmp_path / "out"
    campaign = asyncio.ensure_future(run_demo_campaign(spec, TASKS, out, cluster, repeats=2, parallel=4, max_attempts=3))
    while not any(span.node == doomed.node_id for span in read_spans(spans_dir)):
        assert not campaign.done(), campaign.result().summary()
        await asyncio.sleep(0.1)
    await asyncio.to_thread(cluster.cluster.remove_node, doomed, False)  # killed, not shut down
    result = await campaign

    assert result.complete and result.passed == 4, result.summary()
    lost = [o for o in result.outcomes if o.infra_errors]
    assert lost, "a cell was running on the removed node"
    for outcome in lost:
        assert outcome.status == "ran" and outcome.attempts >= 2
        assert all("NodeLostError: the cluster lost the cell" in error for error in outcome.infra_errors)
        assert outcome.record.infra_errors == outcome.infra_errors  # noted in result.json, never scored
    assert {row.sandbox["node_id"] for row in result.rows if row.infra_errors} == {cluster.cluster.head_node.node_id}
    for task in TASKS:
        for rep in (0, 1):
            rep_dir = out / task / f"rep{rep}"
            record = json.loads((rep_dir / "result.json").read_text())
            sessions = [p.name for p in rep_dir.iterdir() if p.is_dir()]
            assert sessions == [record["run_id"]], f"{rep_dir}: one session directory, the scored one"
    manifest = json.loads((out / "campaign.json").read_text())
    assert manifest["unscored_cells"] == []

    # The killed worker's folders carry it as their owner: the next harness on the node sweeps them.
    sweep_orphaned_files(cluster.tmp)
    assert leftovers(cluster.tmp) == []
