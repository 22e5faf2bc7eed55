"""Campaigns the Ray tests run: the demo tasks with the local sandbox, by the Python API."""

from __future__ import annotations

from pathlib import Path

from harness.agents.registry import ModelSpec
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.campaign.campaign import CampaignResult, CampaignSettings, run_campaign
from harness.campaign.ray_executor import RayExecutor
from harness.campaign.sandboxed_cell import SandboxedCellRunner
from harness.tasks.dataset import resolve_data
from sandbox.backend import get_backend
from tests.conftest import DEMO_DATA
from tests.ray.cluster import LocalCluster

__all__ = ["TASKS", "cell_runner", "run_demo_campaign"]

#: Two of the shortest demo tasks (a few seconds each on the virtual clock).
TASKS = ["demo_benefits_enrollment_001", "demo_warranty_advice_001"]


def cell_runner(spec: ModelSpec, tasks: list[str]) -> SandboxedCellRunner:
    """The cell runner ``apex-voice run`` builds for the demo tasks with the local sandbox."""
    source = resolve_data(DEMO_DATA)
    dirs = {d.name: d for d in source.task_dirs}
    return SandboxedCellRunner(
        model=spec, backend=get_backend("local"), task_dirs={task: dirs[task] for task in tasks},
        speech=lambda b: open_speech_source(b.task_dir, "auto", voice=user_voice(b.persona.get("voice_id")),
                                            task_id=b.task_id),
        checksums=source.checksums,
    )


async def run_demo_campaign(spec: ModelSpec, tasks: list[str], out: Path, cluster: LocalCluster | None, **settings) -> CampaignResult:
    executor = {"executor": RayExecutor(cluster.address)} if cluster else {}
    values = {"repeats": 1, "sandbox": "local", "retry_backoff_s": 0.0, **settings}
    runner = cell_runner(spec, tasks)
    try:
        return await run_campaign(CampaignSettings(model=spec, out_dir=out, **values), tasks, runner, **executor)
    finally:
        await runner.backend.aclose()  # the local executor's warm spare, as `apex-voice run` closes it
