"""``campaign.json``: what a campaign directory measures, rewritten at every start.

``created_at`` survives rewrites, so a resumed campaign keeps the date it was first started, and
the task ids and repeats are the union of every start: a second run with ``--only X --repeats 2``
does not make the directory claim it holds one task.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness import __version__
from harness.atomic_write import atomic_write_json
from harness.grading.judge_prompt import JUDGE_VERSION

__all__ = ["BENCHMARK_VERSION", "MANIFEST_FILE", "CampaignManifest", "write_manifest"]

MANIFEST_FILE = "campaign.json"
BENCHMARK_VERSION = "1.0"


def _utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class CampaignManifest(BaseModel):
    """Published keys, then ours (sandbox backend, parallelism, the task ids)."""

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


def _previous(path: Path) -> CampaignManifest | None:
    try:
        return CampaignManifest.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return None


def write_manifest(out_dir: Path, manifest: CampaignManifest) -> CampaignManifest:
    """Write ``<out_dir>/campaign.json``, keeping the ``created_at`` of an earlier start."""
    path = Path(out_dir) / MANIFEST_FILE
    previous = _previous(path)
    if previous is not None:
        task_ids = sorted(set(previous.task_ids) | set(manifest.task_ids))
        manifest = manifest.model_copy(update={
            "created_at": previous.created_at,
            "task_ids": task_ids,
            "n_tasks": max(len(task_ids), previous.n_tasks, manifest.n_tasks),
            "repeats": max(previous.repeats, manifest.repeats),
        })
    atomic_write_json(path, manifest.model_dump(mode="json"), indent=2)
    return manifest
