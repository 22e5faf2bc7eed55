"""Native sessions with an agent image through the real path, and what they leave on the engine.

A cell runs as ``apex-voice run --model container:IMAGE --sandbox docker --tool-mode native``
runs it: :class:`~harness.campaign.sandboxed_cell.SandboxedCellRunner` over a
:class:`~sandbox.docker_backend.DockerBackend` (the task's MCP server container and the session
network), the agent container beside it (:mod:`sandbox.agent_container`), and
:func:`~harness.campaign.campaign.run_campaign` for retries and blame. The task is the bundled
benefits enrollment with a short time budget (a container agent runs on the wall clock).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.agents.registry import get_model
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.campaign.campaign import (
    CampaignCell,
    CampaignResult,
    CampaignSettings,
    CellOutcome,
    run_campaign,
)
from harness.campaign.sandboxed_cell import SandboxedCellRunner
from harness.events import EVENTS_FILE, EventBus
from harness.results.result_record import ResultRecord
from harness.tasks.loader import load_task
from sandbox.docker_backend import DockerBackend
from sandbox.labels import LABEL_OWNER_PID
from sandbox.session_files import PRIVATE_DIR_PREFIX
from tests.conftest import DEMO_DATA

__all__ = ["TASK_ID", "Leftovers", "gold_needles", "leftovers", "native_campaign", "report_of", "short_task"]

TASK_ID = "demo_benefits_enrollment_001"
BENEFITS = DEMO_DATA / "tasks" / TASK_ID
REPORT_PREFIX = "ATTACK-REPORT "


def short_task(root: Path, budget_s: int) -> Path:
    """A copy of the benefits task whose session lasts ``budget_s`` seconds (``root/<task id>``)."""
    target = root / TASK_ID
    shutil.copytree(BENEFITS, target)
    task_yaml = target / "task.yaml"
    task = yaml.safe_load(task_yaml.read_text(encoding="utf-8"))
    task["time_budget_s"] = budget_s
    task_yaml.write_text(yaml.safe_dump(task, sort_keys=False), encoding="utf-8")
    return target


def gold_needles() -> list[str]:
    """The task's expected field values that its public bundle does not hold (what only gold knows)."""
    bundle = load_task(BENEFITS)
    with tempfile.TemporaryDirectory() as scratch:
        bundle.public_bundle().write(Path(scratch))
        public = "\n".join(p.read_text(errors="replace") for p in Path(scratch).rglob("*") if p.is_file())
    gold = yaml.safe_load((BENEFITS / "grading" / "gold.yaml").read_text(encoding="utf-8"))
    values: list[str] = []
    for expectation in gold["artifact_expectations"]:
        for row in expectation["fields"]:
            expected = row["expected"]
            values += [str(v) for v in (expected if isinstance(expected, list) else [expected])]
    return sorted({v for v in values if len(v) >= 6 and v not in public})


async def native_campaign(
    image: str,
    task_dir: Path,
    out_dir: Path,
    *,
    repeats: int = 1,
    parallel: int = 1,
    max_attempts: int = 1,
    backend: DockerBackend | None = None,
    on_session: Callable[[CampaignCell, EventBus], None] | None = None,
    on_cell: Callable[[CellOutcome], None] | None = None,
) -> CampaignResult:
    """``repeats`` native sessions of ``container:<image>`` on ``task_dir``; the backend is closed after."""
    model = get_model(f"container:{image}")
    bundle = load_task(task_dir)
    voice = user_voice(bundle.persona.get("voice_id"))
    backend = backend or DockerBackend()
    runner = SandboxedCellRunner(
        model=model,
        backend=backend,
        task_dirs={bundle.task_id: task_dir},
        speech=lambda b: open_speech_source(task_dir, "auto", voice=voice, task_id=b.task_id),
        tool_mode="native",
        on_session=on_session,
    )
    settings = CampaignSettings(
        model=model, out_dir=out_dir, repeats=repeats, sandbox="docker", parallel=parallel,
        max_attempts=max_attempts, retry_backoff_s=0.0,
    )  # fmt: skip
    try:
        return await run_campaign(settings, [bundle.task_id], runner, on_cell=on_cell)
    finally:
        await backend.aclose()


def report_of(record: ResultRecord, out_dir: Path) -> dict[str, Any]:
    """The probe report the attacker sent as its transcript (``AGENT_TRANSCRIPT_PARTIAL``)."""
    events = out_dir / record.task_id / f"rep{record.rep}" / str(record.run_id) / EVENTS_FILE
    for line in events.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        text = (event.get("payload") or {}).get("text") or ""
        if event.get("type") == "AGENT_TRANSCRIPT_PARTIAL" and text.startswith(REPORT_PREFIX):
            return json.loads(text[len(REPORT_PREFIX) :])
    raise AssertionError(f"no attack report among the agent's transcripts in {events}")


@dataclass(frozen=True)
class Leftovers:
    containers: list[str]
    networks: list[str]
    folders: list[str]

    @property
    def none(self) -> bool:
        return not (self.containers or self.networks or self.folders)


def leftovers(client: Any, owner_pid: int, tmp_dir: Path) -> Leftovers:
    """What a harness process left: labelled containers and networks, private folders in its TMPDIR."""
    selector = {"label": f"{LABEL_OWNER_PID}={owner_pid}"}
    return Leftovers(
        containers=[c.name for c in client.containers.list(all=True, filters=selector, ignore_removed=True)],
        networks=[n.name for n in client.networks.list(filters=selector)],
        folders=[p.name for p in tmp_dir.glob(f"{PRIVATE_DIR_PREFIX}*")],
    )
