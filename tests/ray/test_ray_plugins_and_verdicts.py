"""On a real local Ray cluster: a condition installed from another distribution runs on the nodes
as it runs locally, and the judge verdicts a node's cell stood on reach the campaign's own store on
the driver (each node kept its own, and ``regrade`` on the driver without a key found none)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.agents.registry import get_model
from harness.campaign.campaign import CampaignSettings, run_campaign
from harness.campaign.ray_executor import RayExecutor
from harness.cli.main import app
from harness.conditions import ENTRY_POINT_GROUP, conditions
from harness.grading.judge import SemanticJudge
from harness.grading.judge_cache import JudgeCache
from harness.results.campaign_files import MANIFEST_FILE
from tests.conftest import DEMO_DATA
from tests.entry_point_dist import install_entry_points
from tests.ray.campaigns import TASKS, cell_runner
from tests.ray.cluster import leftovers, local_cluster
from tests.ray.verdict_cell import VerdictCell, verdict_key

pytestmark = [pytest.mark.ray, pytest.mark.slow]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A distribution that registers the voice condition ``C3-noisy`` (tests.plugin_examples)."""
    root = tmp_path_factory.mktemp("site")
    with pytest.MonkeyPatch.context() as patch:  # written only; each test puts it on its own sys.path
        install_entry_points(root, patch, ENTRY_POINT_GROUP, {"C3-noisy": "tests.plugin_examples:NOISY_DUPLEX"})
    return root


@pytest.fixture(scope="module")
def cluster(site):
    with local_cluster(1, site=site) as running:
        yield running


def _record(out: Path) -> dict:
    (result,) = out.glob("*/rep0/result.json")
    return json.loads(result.read_text())


def test_an_installed_voice_condition_runs_on_the_nodes_as_it_runs_locally(cluster, site, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(site))
    conditions.cache_clear()
    try:
        base = ["run", "--data", str(DEMO_DATA), "--sandbox", "local", "--only", TASKS[1], "--condition", "C3-noisy"]
        local = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "local")])
        assert local.exit_code == 0, local.output
        remote = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "ray"), "--executor", "ray",
                                          "--ray-address", cluster.address])
        assert remote.exit_code == 0, remote.output
    finally:
        conditions.cache_clear()
    here, there = _record(tmp_path / "local"), _record(tmp_path / "ray")
    assert (there["condition"], there["identity"]["condition"], there["pts"]) == ("C3-noisy", "C3-noisy", 1)
    assert {k: there[k] for k in ("pts", "components", "fields", "turns")} == \
        {k: here[k] for k in ("pts", "components", "fields", "turns")}
    assert "node_id" in there["sandbox"]
    assert json.loads((tmp_path / "ray" / MANIFEST_FILE).read_text())["identity"]["condition"] == "C3-noisy"
    assert leftovers(cluster.tmp) == []


async def test_the_verdicts_a_node_graded_with_land_in_the_campaigns_store(cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("APEX_VOICE_LLM_API_KEY", "sk-judge")  # forwarded to the nodes with the campaign
    monkeypatch.setenv("APEX_VOICE_JUDGE_CACHE", str(tmp_path / "node-cache.json"))  # where a node's judge keeps them
    driver_store = JudgeCache(tmp_path / "driver-cache.json")
    judge = SemanticJudge.from_env()
    assert judge is not None
    judge.cache = driver_store
    spec = get_model("oracle")
    plain = cell_runner(spec, TASKS)
    runner = VerdictCell(model=spec, backend=plain.backend, task_dirs=plain.task_dirs, speech=plain.speech,
                         checksums=plain.checksums, judge=judge)
    settings = CampaignSettings(model=spec, out_dir=tmp_path / "out", repeats=1, sandbox="local", retry_backoff_s=0.0,
                                identity=runner.identity(user_audio="auto"))
    try:
        result = await run_campaign(settings, TASKS, runner, executor=RayExecutor(cluster.address))
    finally:
        await plain.backend.aclose()
    assert result.complete and result.passed == len(TASKS), result.summary()
    assert {row.sandbox.get("node_id") is not None for row in result.rows} == {True}  # they ran on the node
    for outcome in result.outcomes:
        assert driver_store.get(verdict_key(outcome.cell)) is True
    assert len(driver_store) == len(TASKS)
