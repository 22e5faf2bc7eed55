"""May a campaign directory be resumed, and which of its cells can be reused as they are?

A start resumes a directory only when it measures the same thing: its
:class:`~harness.results.measurement_identity.MeasurementIdentity` equals the one ``campaign.json``
stored, field for field, each task pinned by the same version and checksums. A directory written
with another identity is refused as a whole, every difference named (mixing them would publish a
table nobody measured). A start may plan fewer cells than its campaign (``--only`` one task of ten,
``--retry-failed``); planning more — new tasks, more repetitions — grows the campaign, which is
refused unless asked for (``run --extend``): a rerun that forgot its ``--only`` must not turn a
1-task campaign into a 10-task one.

Each reused ``result.json`` stores the identity it was measured under, checked again (a directory
whose ``campaign.json`` was lost or edited). A ``result.json`` that is unusable (a directory,
unreadable, not a record, another cell's) is moved aside with its reason in the name's suffix and
the cell is run again — reported, never silently reused, never a crash.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from harness.results.campaign_files import MANIFEST_FILE
from harness.results.measurement_identity import Difference, MeasurementIdentity, TaskPin, recorded_fields
from harness.results.result_record import RESULT_FILE, ResultFileError, ResultRecord

from .manifest import CampaignManifest, read_manifest

__all__ = ["ALLOW_VERSION_FLAG", "EXTEND_FLAG", "CampaignMismatchError", "CellReuse", "check_identity", "reuse_cell"]

log = logging.getLogger(__name__)

#: The ``run`` option that resumes a campaign another harness version started.
ALLOW_VERSION_FLAG = "--allow-version-change"
#: The ``run`` option that grows a campaign by new tasks or more repetitions.
EXTEND_FLAG = "--extend"


class CampaignMismatchError(Exception):
    """The directory holds results of another measurement; resuming would mix them."""


def _named(differences: list[Difference]) -> str:
    return "; ".join(map(str, differences))


def check_identity(
    out_dir: Path, requested: MeasurementIdentity, *, extend: bool = False, allow_version_change: bool = False
) -> MeasurementIdentity:
    """The campaign's identity after this start: ``requested`` over the plan of the directory's
    campaign (the union, when ``extend`` grows it). Raises :class:`CampaignMismatchError`, naming
    every differing field, when ``requested`` measures something else.

    A missing or unreadable manifest is no evidence either way: the records are checked one by one.
    Another harness version alone is accepted with ``allow_version_change`` (``write_manifest`` then
    keeps the earlier one in ``earlier_versions``); so is a manifest an older harness wrote without
    the whole identity, once the fields it did record match.
    """
    previous = read_manifest(out_dir)
    if previous is None:
        return requested
    path = Path(out_dir) / MANIFEST_FILE
    recorded = previous.identity or _completed(previous, requested)
    differences = [d for d in recorded.differences(requested)
                   if not (allow_version_change and d.field == "harness_version")]
    if differences:
        raise CampaignMismatchError(f"{out_dir} holds another campaign ({_named(differences)}; see {path}): "
                                    f"{_how(differences)}")
    if previous.identity is None and not allow_version_change:
        unrecorded = [name for name in type(requested).model_fields if name not in recorded_fields(previous.model_dump())]
        raise CampaignMismatchError(
            f"{out_dir} was started by an older harness that did not record {', '.join(unrecorded)} (see {path}): "
            f"use a new --out, or {ALLOW_VERSION_FLAG} to resume it with this start's values")
    growth = recorded.grows(requested)
    if growth and not extend:
        raise CampaignMismatchError(
            f"{out_dir} holds a smaller campaign than this start plans ({_named(growth)}; see {path}): rerun with "
            f"its own task selection (--only, --limit, --repeats) to resume it, or {EXTEND_FLAG} to grow it")
    return recorded.extended_by(requested)


def _completed(previous: CampaignManifest, requested: MeasurementIdentity) -> MeasurementIdentity:
    """What an older manifest recorded, each field it did not record taken from ``requested``
    (its tasks' pins too, where it recorded no version)."""
    known = recorded_fields(previous.model_dump())
    old_pins = known.pop("tasks", None)
    if isinstance(old_pins, dict):
        known["tasks"] = {task: _pin(pin, requested.tasks.get(task)) for task, pin in old_pins.items()}
    return requested.model_copy(update=known)


def _pin(old: TaskPin, new: TaskPin | None) -> TaskPin:
    if new is None:
        return old
    return new if old.version is None else new.model_copy(update={"version": old.version})


def _how(differences: list[Difference]) -> str:
    if [d.field for d in differences] == ["harness_version"]:
        return f"use a new --out for this campaign, or {ALLOW_VERSION_FLAG} to resume it with this version"
    return "use a new --out for this campaign, or rerun with the recorded settings to resume it"


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


def _record_differences(record: ResultRecord, task_id: str, identity: MeasurementIdentity) -> list[Difference]:
    """How the measurement that wrote ``record`` differs from ``identity`` for its own cell.

    The harness version is the campaign's to check (``earlier_versions``). A record written before
    the identity was stored names only its model, condition and task version.
    """
    if record.identity is not None:
        own = {task: pin for task, pin in record.identity.tasks.items() if task == task_id}
        mine = record.identity.model_copy(update={"tasks": own, "harness_version": identity.harness_version})
        return mine.differences(identity)
    pin = identity.tasks.get(task_id)
    return [Difference(name, stored, expected) for name, stored, expected in (
        ("model", record.model, identity.model),
        ("condition", record.condition, identity.condition),
        (f"tasks[{task_id}].version", record.task_version, pin.version if pin else None),
    ) if stored is not None and expected is not None and stored != expected]


def reuse_cell(
    rep_dir: Path, *, task_id: str, rep: int, identity: MeasurementIdentity, set_aside: bool = True
) -> CellReuse:
    """Load the cell's record if it may be reused; raise :class:`CampaignMismatchError` if it is foreign.
    An unusable ``result.json`` is moved aside (``set_aside=False``, a dry run: only named)."""
    path = Path(rep_dir) / RESULT_FILE

    def unusable(problem: str) -> CellReuse:
        return CellReuse(problem=_set_aside(path, problem) if set_aside else f"{path}: {problem}")

    try:
        record = ResultRecord.load(rep_dir)
    except ResultFileError as exc:
        return unusable(exc.problem)
    if record is None:
        return CellReuse()
    if (record.task_id, record.rep) != (task_id, rep):
        return unusable(f"names {record.task_id} rep{record.rep}, not {task_id} rep{rep}")
    differences = _record_differences(record, task_id, identity)
    if differences:
        raise CampaignMismatchError(f"{path} was measured with another identity ({_named(differences)}); "
                                    "use another --out directory")
    return CellReuse(record=record)
