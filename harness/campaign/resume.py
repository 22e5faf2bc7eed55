"""May a campaign directory be resumed, and which of its cells can be reused as they are?

A resumed campaign reuses a cell's ``result.json`` only when the same measurement wrote it: the
same model, condition and measurement settings (``campaign.json``), and a record of the same task
version, task and repetition. A directory written by another model or with other settings is
refused as a whole (mixing them would publish a table nobody measured). A ``result.json`` that is
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

from .manifest import CampaignManifest

__all__ = ["MEASUREMENT_SETTINGS", "CampaignMismatchError", "CellReuse", "check_manifest", "reuse_cell"]

log = logging.getLogger(__name__)

#: ``campaign.json`` keys that change what a session measures (backend and parallelism do not).
MEASUREMENT_SETTINGS = ("model", "condition", "max_turns", "user_audio")


class CampaignMismatchError(Exception):
    """The directory holds results of another measurement; resuming would mix them."""


def check_manifest(out_dir: Path, current: CampaignManifest) -> CampaignManifest | None:
    """The previous ``campaign.json`` when it is compatible with ``current``; raises when not.

    A missing or unreadable manifest is no evidence either way: the records are checked one by one.
    """
    path = Path(out_dir) / MANIFEST_FILE
    try:
        previous = CampaignManifest.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return None
    for key in MEASUREMENT_SETTINGS:
        before, now = getattr(previous, key), getattr(current, key)
        if before != now:
            raise CampaignMismatchError(
                f"{out_dir} holds a campaign with {key} {before!r}, not {now!r} (see {path}); "
                "use another --out directory"
            )
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
