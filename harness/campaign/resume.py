"""May a campaign directory be resumed, and which of its cells can be reused as they are?

A resumed campaign reuses a cell's ``result.json`` only when the same measurement wrote it: the
same identity (``campaign.json``: model, condition, acoustics and seed, user audio, tool mode, turn
bound, harness and task versions), and a record of the same task version, task and repetition. A
directory written with another identity is refused as a whole, every difference named (mixing them
would publish a table nobody measured). A ``result.json`` that is
unusable (a directory, unreadable, not a record, another cell's) is moved aside with its reason in
the name's suffix and the cell is run again — reported, never silently reused, never a crash.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from harness.results.campaign_files import MANIFEST_FILE
from harness.results.result_record import RESULT_FILE, ResultFileError, ResultRecord

from .manifest import IDENTITY_KEYS, CampaignManifest

__all__ = ["ALLOW_VERSION_FLAG", "CampaignMismatchError", "CellReuse", "check_manifest", "identity_differences",
           "reuse_cell"]

log = logging.getLogger(__name__)

#: The ``run`` option that resumes a campaign another harness version started.
ALLOW_VERSION_FLAG = "--allow-version-change"


class CampaignMismatchError(Exception):
    """The directory holds results of another measurement; resuming would mix them."""


def identity_differences(previous: CampaignManifest, current: CampaignManifest) -> list[tuple[str, object, object]]:
    """``(key, recorded, requested)`` for every identity key that differs.

    A key the previous manifest did not record (``None``: written before it was) is no evidence;
    ``task_versions`` differs only for a task both plan. Nor is the ``condition`` of a manifest
    written before acoustics and tool mode were recorded: those harnesses wrote ``C2`` whatever the
    condition (the records' own conditions are checked instead, by :func:`reuse_cell`).
    """
    trusted = [key for key in IDENTITY_KEYS
               if not (key == "condition" and previous.acoustics is None and previous.tool_mode is None)]
    differences = [
        (key, getattr(previous, key), getattr(current, key))
        for key in trusted
        if getattr(previous, key) is not None and getattr(previous, key) != getattr(current, key)
    ]
    for task, version in sorted(current.task_versions.items()):
        recorded = previous.task_versions.get(task)
        if recorded is not None and recorded != version:
            differences.append((f"task_versions[{task}]", recorded, version))
    return differences


def check_manifest(out_dir: Path, current: CampaignManifest, *, allow_version_change: bool = False) -> CampaignManifest | None:
    """The previous ``campaign.json`` when ``current`` may resume it; raises, naming every difference, when not.

    A missing or unreadable manifest is no evidence either way: the records are checked one by one.
    Another harness version alone is accepted with ``allow_version_change`` (``write_manifest`` then
    keeps the earlier one in ``earlier_versions``).
    """
    path = Path(out_dir) / MANIFEST_FILE
    try:
        previous = CampaignManifest.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return None
    differences = [d for d in identity_differences(previous, current)
                   if not (allow_version_change and d[0] == "apex_voice_version")]
    if differences:
        named = "; ".join(f"{key}: {recorded!r} → {requested!r}" for key, recorded, requested in differences)
        only_version = [key for key, _, _ in differences] == ["apex_voice_version"]
        how = (f"use a new --out for this campaign, or {ALLOW_VERSION_FLAG} to resume it with this version"
               if only_version else "use a new --out for this campaign, or rerun with the recorded settings to resume it")
        raise CampaignMismatchError(f"{out_dir} holds another campaign ({named}; see {path}): {how}")
    return previous


@dataclass(frozen=True)
class CellReuse:
    """What to do with a cell: reuse ``record``, or run it (``problem`` says why a file was set aside)."""

    record: ResultRecord | None = None
    problem: str | None = None


def _set_aside(path: Path, problem: str) -> str:
    aside = path.with_name(f"{path.name}.unusable-{time.time_ns()}")
    os.replace(path, aside)
    log.warning("%s: %s; moved it to %s and the cell runs again", path, problem, aside.name)
    return f"{path}: {problem} (moved to {aside.name})"


def reuse_cell(
    rep_dir: Path, *, task_id: str, rep: int, model: str, condition: str, task_version: str | None
) -> CellReuse:
    """Load the cell's record if it may be reused; raise :class:`CampaignMismatchError` if it is foreign."""
    path = Path(rep_dir) / RESULT_FILE
    try:
        record = ResultRecord.load(rep_dir)
    except ResultFileError as exc:
        return CellReuse(problem=_set_aside(path, exc.problem))
    if record is None:
        return CellReuse()
    if (record.task_id, record.rep) != (task_id, rep):
        return CellReuse(problem=_set_aside(path, f"names {record.task_id} rep{record.rep}, not {task_id} rep{rep}"))
    for what, stored, expected in (
        ("model", record.model, model),
        ("condition", record.condition, condition),
        ("task version", record.task_version, task_version),
    ):
        if stored is not None and expected is not None and stored != expected:
            raise CampaignMismatchError(
                f"{path} was written with {what} {stored!r}, not {expected!r}; use another --out directory"
            )
    return CellReuse(record=record)
