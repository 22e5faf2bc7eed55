"""``campaign.json``: what a campaign directory measures, rewritten at every start.

``created_at`` survives rewrites, so a resumed campaign keeps the date it was first started, and
the task ids, task versions, repeats and planned cells are the union of every start: a second run
with ``--only X --repeats 2`` does not make the directory claim it holds one task.

The identity (:data:`IDENTITY_KEYS`: model, condition, acoustics and seed, user audio, tool mode,
turn bound, harness version, and each task's version) is what a resume must match
(:mod:`.resume`): the same command run again continues the campaign, a different one is refused.

The planned cells are the campaign's denominator: ``apex-voice results`` counts every one of them,
and a cell left without a scored record is a failure there, never silently absent. Why a cell was
left empty (infrastructure, a harness bug, a provider refusal, a stop) is known only to the run
that left it, so each start ends by recording it in ``unscored_cells``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness import __version__
from harness.atomic_write import atomic_write_json
from harness.grading.judge_prompt import JUDGE_VERSION
from harness.results.campaign_files import MANIFEST_FILE, UnscoredCell

__all__ = ["BENCHMARK_VERSION", "IDENTITY_KEYS", "CampaignManifest", "write_manifest"]

BENCHMARK_VERSION = "1.0"

#: ``campaign.json`` keys that change what a session measures (backend and parallelism do not);
#: ``task_versions`` is compared task by task, for the tasks both starts plan.
IDENTITY_KEYS = ("model", "condition", "acoustics", "seed", "user_audio", "tool_mode", "max_turns",
                 "apex_voice_version")


def _utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class CampaignManifest(BaseModel):
    """Published keys, then ours (identity, sandbox backend, parallelism, the plan and its gaps).

    ``acoustics``, ``tool_mode`` and ``seed`` are ``None`` only in manifests written before they
    were recorded: unknown, which ``results`` never takes to equal a known value (a resume takes
    the value it is given).
    """

    model_config = ConfigDict(extra="ignore")

    model: str
    display_name: str
    condition: str = "C2"
    repeats: int
    max_turns: int
    user_audio: str
    n_tasks: int
    apex_voice_version: str = __version__
    benchmark_version: str = BENCHMARK_VERSION
    judge_version: str = JUDGE_VERSION
    created_at: str = Field(default_factory=_utc_now)
    sandbox: str = "auto"
    parallel: int = 1
    task_ids: list[str] = Field(default_factory=list)
    acoustics: str | None = None
    tool_mode: str | None = None
    #: Seeds the simulated user and the C3 acoustics of every session.
    seed: int | None = None
    #: Each planned task's ``task.yaml`` version.
    task_versions: dict[str, str] = Field(default_factory=dict)
    #: Harness versions that wrote earlier sessions of this campaign (``run --allow-version-change``).
    earlier_versions: list[str] = Field(default_factory=list)
    #: Every planned (task, repetition): task id -> its repetitions, sorted.
    planned_cells: dict[str, list[int]] = Field(default_factory=dict)
    unscored_cells: list[UnscoredCell] = Field(default_factory=list)


def _previous(path: Path) -> CampaignManifest | None:
    try:
        return CampaignManifest.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return None


def _union(a: dict[str, list[int]], b: dict[str, list[int]]) -> dict[str, list[int]]:
    return {task: sorted(set(a.get(task, [])) | set(b.get(task, []))) for task in sorted(set(a) | set(b))}


def write_manifest(out_dir: Path, manifest: CampaignManifest) -> CampaignManifest:
    """Write ``<out_dir>/campaign.json``, keeping the ``created_at`` of an earlier start.

    ``manifest`` describes this start: its planned cells join the earlier ones, and its
    ``unscored_cells`` replace the earlier reasons of the cells it plans (those it does not plan
    keep theirs until a start that plans them settles them).
    """
    path = Path(out_dir) / MANIFEST_FILE
    previous = _previous(path)
    if previous is not None:
        task_ids = sorted(set(previous.task_ids) | set(manifest.task_ids))
        planned_now = {(task, rep) for task, reps in manifest.planned_cells.items() for rep in reps}
        kept = [cell for cell in previous.unscored_cells if (cell.task_id, cell.rep) not in planned_now]
        earlier = [*previous.earlier_versions, previous.apex_voice_version]
        manifest = manifest.model_copy(update={
            "created_at": previous.created_at,
            "task_ids": task_ids,
            "task_versions": dict(sorted({**previous.task_versions, **manifest.task_versions}.items())),
            "earlier_versions": sorted(set(earlier) - {manifest.apex_voice_version}),
            "n_tasks": max(len(task_ids), previous.n_tasks, manifest.n_tasks),
            "repeats": max(previous.repeats, manifest.repeats),
            "planned_cells": _union(previous.planned_cells, manifest.planned_cells),
            "unscored_cells": sorted([*kept, *manifest.unscored_cells], key=lambda c: (c.task_id, c.rep)),
        })
    atomic_write_json(path, manifest.model_dump(mode="json"), indent=2)
    return manifest
