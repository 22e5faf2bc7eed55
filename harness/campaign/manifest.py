"""``campaign.json``: what a campaign directory measures, rewritten at every start.

Its ``identity`` is the campaign's :class:`~harness.results.measurement_identity.MeasurementIdentity`,
stored whole: what a resume must match (:mod:`.resume`) and what ``results`` keeps campaigns apart
by. The published keys (model, condition, repeats, turn bound, user audio, task count, versions)
are written from it for the published tooling, and never read back where the identity is present.

``created_at`` survives rewrites, so a resumed campaign keeps the date it was first started, and
the planned cells are the union of every start: a second run with ``--only X`` does not make the
directory claim it holds one task.

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
from harness.results.campaign_files import MANIFEST_FILE, CampaignConfigUsed, UnscoredCell
from harness.results.measurement_identity import MeasurementIdentity

__all__ = ["BENCHMARK_VERSION", "CampaignManifest", "read_manifest", "write_manifest"]

BENCHMARK_VERSION = "1.0"


def _utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class CampaignManifest(BaseModel):
    """Published keys (from the identity), then ours (the identity, sandbox, parallelism, the plan and its gaps).

    ``identity`` is ``None`` only in manifests written before it was recorded whole.
    """

    #: Keys of older manifests (their ``acoustics``, ``seed``, ``task_versions``...) are kept for
    #: :func:`~harness.results.measurement_identity.recorded_fields`.
    model_config = ConfigDict(extra="allow")

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
    identity: MeasurementIdentity | None = None
    #: Harness versions that wrote earlier sessions of this campaign (``run --allow-version-change``).
    earlier_versions: list[str] = Field(default_factory=list)
    #: Every planned (task, repetition): task id -> its repetitions, sorted.
    planned_cells: dict[str, list[int]] = Field(default_factory=dict)
    unscored_cells: list[UnscoredCell] = Field(default_factory=list)
    #: The campaign file the latest start read (``run --config``), ``None`` when it read none.
    config: CampaignConfigUsed | None = None

    @classmethod
    def of(cls, identity: MeasurementIdentity, *, display_name: str, **ours: object) -> CampaignManifest:
        """The manifest of ``identity``: its published keys derived from it, ``ours`` as given."""
        return cls.model_validate({
            "model": identity.model, "display_name": display_name, "condition": identity.condition,
            "repeats": identity.repeats, "max_turns": identity.max_turns, "user_audio": identity.user_audio,
            "n_tasks": len(identity.tasks), "apex_voice_version": identity.harness_version,
            "judge_version": identity.judge_version, "task_ids": sorted(identity.tasks), "identity": identity, **ours,
        })


def read_manifest(out_dir: Path) -> CampaignManifest | None:
    """``<out_dir>/campaign.json``, or ``None`` when there is none or it is not a manifest."""
    try:
        return CampaignManifest.model_validate(json.loads((Path(out_dir) / MANIFEST_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return None


def _union(a: dict[str, list[int]], b: dict[str, list[int]]) -> dict[str, list[int]]:
    return {task: sorted(set(a.get(task, [])) | set(b.get(task, []))) for task in sorted(set(a) | set(b))}


def write_manifest(out_dir: Path, manifest: CampaignManifest) -> CampaignManifest:
    """Write ``<out_dir>/campaign.json``, keeping the ``created_at`` of an earlier start.

    ``manifest`` describes this start, with the campaign's identity (the resume check grew it
    when this start extended the plan): its planned cells join the earlier ones, and its
    ``unscored_cells`` replace the earlier reasons of the cells it plans (those it does not plan
    keep theirs until a start that plans them settles them).
    """
    previous = read_manifest(out_dir)
    if previous is not None:
        planned_now = {(task, rep) for task, reps in manifest.planned_cells.items() for rep in reps}
        kept = [cell for cell in previous.unscored_cells if (cell.task_id, cell.rep) not in planned_now]
        earlier = [*previous.earlier_versions, previous.apex_voice_version]
        manifest = manifest.model_copy(update={
            "created_at": previous.created_at,
            "earlier_versions": sorted(set(earlier) - {manifest.apex_voice_version}),
            "planned_cells": _union(previous.planned_cells, manifest.planned_cells),
            "unscored_cells": sorted([*kept, *manifest.unscored_cells], key=lambda c: (c.task_id, c.rep)),
        })
    atomic_write_json(Path(out_dir) / MANIFEST_FILE, manifest.model_dump(mode="json"), indent=2)
    return manifest
