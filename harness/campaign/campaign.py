"""Run one model over every (task, repetition) cell, resumably, in parallel, without leaks.

Layout: ``<out>/campaign.json``, ``<out>/.campaign.lock``, ``<out>/<task>/rep<k>/result.json`` and
the session directories beside it. Cells are visited coverage-first (every task once before any
task twice), so a campaign stopped early still covers the suite. A cell whose ``result.json`` was
written by the same measurement is loaded instead of re-run (:mod:`.resume`); one whose grade
waits on pending judge verdicts is re-graded when a regrader is given.

The plan's types live in :mod:`.plan`; where the sessions run is the executor the caller injects
(:func:`~.plan.local_cells`, or :class:`~.ray_executor.RayExecutor`), so this module imports none.

Failures are handled by their blame (:mod:`harness.blame.origin_table`): infrastructure is retried with backoff and,
if it keeps failing, the cell is left empty for the next invocation; a provider that refuses us
stops the campaign; anything else is a harness bug — the cell fails as ``harness_error`` with its
traceback in ``<rep_dir>/harness_error.txt``. None of them is ever scored against the model.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path

from harness.atomic_write import atomic_write_text
from harness.blame.codes import FailureCode
from harness.blame.origin_table import classify
from harness.events.jsonl import EVENTS_FILE
from harness.results.campaign_files import HARNESS_ERROR_FILE, SUPERSEDED_DIR
from harness.results.measurement_identity import MeasurementIdentity, TaskPin
from harness.results.result_record import ResultRecord, error_text

from .lock import CampaignLock
from .manifest import CampaignManifest, write_manifest
from .plan import (
    MAX_ATTEMPTS,
    CampaignCell,
    CampaignResult,
    CampaignSettings,
    CellExecutor,
    CellOutcome,
    CellRunner,
    PendingRegrader,
    campaign_cells,
    local_cells,
)
from .resume import CampaignMismatchError, CellReuse, check_identity, reuse_cell
from .unscored import unscored_cells

__all__ = [
    "MAX_ATTEMPTS",
    "CampaignCell",
    "CampaignMismatchError",
    "CampaignResult",
    "CampaignSettings",
    "CellExecutor",
    "CellOutcome",
    "CellRunner",
    "PendingRegrader",
    "campaign_cells",
    "local_cells",
    "preview_campaign",
    "run_campaign",
]

log = logging.getLogger(__name__)

async def run_campaign(
    settings: CampaignSettings,
    task_ids: list[str],
    run_cell: CellRunner,
    *,
    executor: CellExecutor = local_cells,
    on_cell: Callable[[CellOutcome], None] | None = None,
    on_start: Callable[[CampaignCell, int], None] | None = None,
    task_pins: dict[str, TaskPin] | None = None,
    regrade: PendingRegrader | None = None,
    cells: list[CampaignCell] | None = None,
    stop_when: Callable[[CellOutcome], str | None] | None = None,
) -> CampaignResult:
    """Run (or resume) the campaign; ``on_cell`` hears about every cell as it is settled, and
    ``on_start`` about every attempt at a session as it begins (with the attempt's number).

    ``executor`` is where the sessions run (:func:`~.plan.local_cells`, this process, by default;
    the CLI injects :class:`~.ray_executor.RayExecutor` for ``--executor ray``). It is entered only
    when some cell is to run, so a campaign resumed whole never joins a cluster.

    ``cells`` plans exactly those cells (``run --retry-failed``: a campaign's recorded plan) instead
    of every task of ``task_ids`` times ``settings.repeats``.

    ``task_pins`` pins each task by version and dataset checksums in the campaign's identity.

    ``stop_when`` hears every settled cell and may name a reason to start no further cell
    (``run --fail-fast``, ``--max-cost``): the same stop as a provider's refusal, the cells not
    started recorded as ``stopped`` with that reason.

    Raises :class:`CampaignMismatchError` before running anything when the directory holds results
    of another measurement (any field of the identity differs), or a smaller campaign this start
    would grow without ``settings.extend``.
    """
    if settings.model.agent_kind == "external_code":
        log.warning("warning: %s runs in the harness's process (--trust-adapter): its code can read the loaded tasks' "
                    "gold and reference policy, patch the grader and read task files, so its scores prove nothing "
                    "(results record agent_isolation: in-process)", settings.model.key)
    cells = sorted(cells) if cells is not None else campaign_cells(task_ids, settings.repeats)
    planned = sorted({c.task_id for c in cells})
    requested = _requested(settings, cells, task_pins)
    with CampaignLock(settings.out_dir):
        identity = check_identity(settings.out_dir, requested, extend=settings.extend,
                                  allow_version_change=settings.allow_version_change)
        reuses = {
            cell: reuse_cell(cell.rep_dir(settings.out_dir), task_id=cell.task_id, rep=cell.rep, identity=identity)
            for cell in cells
        }
        manifest = CampaignManifest.of(
            identity, display_name=settings.model.display_name, sandbox=settings.sandbox, parallel=settings.parallel,
            planned_cells={task: sorted(c.rep for c in cells if c.task_id == task) for task in planned},
            config=settings.config,
        )
        write_manifest(settings.out_dir, manifest)
        # A provider's own limit on concurrent sessions (its rate limits) caps --parallel.
        limit = asyncio.Semaphore(min(settings.parallel, settings.model.max_concurrent_sessions or settings.parallel))
        stop = asyncio.Event()
        to_run = any(reuse.record is None for reuse in reuses.values())
        async with (executor if to_run else local_cells)(settings, run_cell) as runner:

            async def settle(cell: CampaignCell) -> CellOutcome:
                outcome = await _settle(settings, cell, reuses[cell], runner, regrade, limit, stop, identity, on_start)
                if stop_when is not None and not outcome.stop_reason and outcome.status != "stopped":
                    outcome.stop_reason = stop_when(outcome)
                if outcome.stop_reason:
                    stop.set()
                _notify(on_cell, outcome)
                return outcome

            outcomes = await _all_settled([settle(cell) for cell in cells])
        write_manifest(settings.out_dir, manifest.model_copy(update={"unscored_cells": unscored_cells(outcomes)}))
    return CampaignResult(settings, outcomes)


def _requested(
    settings: CampaignSettings, cells: list[CampaignCell], task_pins: dict[str, TaskPin] | None
) -> MeasurementIdentity:
    """What this start asks to measure: the settings' identity with the plan of ``cells``."""
    pins = task_pins or {}
    return settings.measured.model_copy(update={
        "tasks": {task: pins.get(task, TaskPin()) for task in sorted({c.task_id for c in cells})},
        "repeats": max((c.rep for c in cells), default=settings.repeats - 1) + 1,
    })


def preview_campaign(
    settings: CampaignSettings,
    task_ids: list[str],
    *,
    task_pins: dict[str, TaskPin] | None = None,
    cells: list[CampaignCell] | None = None,
) -> list[tuple[CampaignCell, CellReuse]]:
    """What :func:`run_campaign` would do with each cell (reuse its record, or run it), read-only:
    no lock, no manifest, no file set aside (``run --dry-run``). Raises
    :class:`CampaignMismatchError` as the run would."""
    cells = sorted(cells) if cells is not None else campaign_cells(task_ids, settings.repeats)
    identity = check_identity(settings.out_dir, _requested(settings, cells, task_pins), extend=settings.extend,
                              allow_version_change=settings.allow_version_change)
    return [(cell, reuse_cell(cell.rep_dir(settings.out_dir), task_id=cell.task_id, rep=cell.rep, identity=identity,
                              set_aside=False)) for cell in cells]


async def _all_settled(settling: list[Awaitable[CellOutcome]]) -> list[CellOutcome]:
    """Every cell's outcome; if one raises (or we are cancelled), the others are cancelled and
    awaited before this returns, so no session outlives the campaign lock."""
    tasks = [asyncio.ensure_future(one) for one in settling]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _settle(
    settings: CampaignSettings,
    cell: CampaignCell,
    reuse: CellReuse,
    run_cell: CellRunner,
    regrade: PendingRegrader | None,
    limit: asyncio.Semaphore,
    stop: asyncio.Event,
    identity: MeasurementIdentity,
    on_start: Callable[[CampaignCell, int], None] | None,
) -> CellOutcome:
    rep_dir = cell.rep_dir(settings.out_dir)
    if reuse.record is not None:
        if not (reuse.record.pending and regrade is not None):
            return CellOutcome(cell, "loaded", reuse.record)
        try:
            regraded = await regrade(cell, rep_dir, reuse.record)
            if regraded is not reuse.record:
                regraded.write(rep_dir)
        except Exception:  # noqa: BLE001 - the record stands as it was: pending, counted as a failure
            log.exception("%s: re-grading its pending verdicts failed; the record is kept as it was", cell)
            return CellOutcome(cell, "loaded", reuse.record)
        return CellOutcome(cell, "regraded", regraded)
    async with limit:
        if stop.is_set():
            return CellOutcome(cell, "stopped", set_aside=reuse.problem)
        outcome = await _run_cell(settings, cell, run_cell, identity, on_start)
    outcome.set_aside = reuse.problem
    return outcome


def _notify(callback: Callable[..., None] | None, *args: object) -> None:
    """Tell a watcher (progress bar, TUI) of a cell. A watcher that fails is logged and never
    cancels the cells still running, nor keeps the campaign from recording what it left unscored."""
    if callback is None:
        return
    try:
        callback(*args)
    except Exception:  # noqa: BLE001 - any watcher failure means the same: log it, go on
        log.exception("a campaign progress callback failed (%s); the campaign goes on", getattr(callback, "__name__", callback))


def _stamped(record: ResultRecord, infra_errors: list[str], identity: MeasurementIdentity) -> ResultRecord:
    """The record with the failed attempts before it, the identity it measured and its task's version."""
    update: dict[str, object] = {"identity": identity}
    if infra_errors:
        update["infra_errors"] = [*infra_errors, *record.infra_errors]
    pin = identity.tasks.get(record.task_id)
    if pin is not None and pin.version is not None and record.task_version is None:
        update["task_version"] = pin.version
    return record.model_copy(update=update)


def _ours_to_propagate(exc: BaseException) -> bool:
    """Only our own cancellation (the user's Ctrl-C or SIGTERM, or a sibling cell's failure) ends
    the campaign from inside a cell. A ``CancelledError`` nobody asked this task for, a
    ``SystemExit`` or a ``KeyboardInterrupt`` raised by session code (the signal handlers turn the
    real Ctrl-C into a cancellation) is a harness bug of that cell, recorded as ``harness_error``."""
    if not isinstance(exc, asyncio.CancelledError):
        return False
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _set_aside_earlier_sessions(rep_dir: Path, scored_run_id: str | None) -> None:
    """Move the repetition's other session folders (an attempt interrupted, or retried for the
    infrastructure) into ``superseded/``: kept as evidence, no longer beside the scored one."""
    if scored_run_id is None:
        return
    for entry in rep_dir.iterdir():
        if entry.name != scored_run_id and entry.is_dir() and (entry / EVENTS_FILE).is_file():
            target = rep_dir / SUPERSEDED_DIR / entry.name
            target.parent.mkdir(exist_ok=True)
            entry.replace(target)
            log.info("%s: an earlier attempt's session moved to %s", rep_dir, target)


def _write_harness_error(rep_dir: Path, cell: CampaignCell, exc: BaseException, attempt: int) -> Path:
    text = "".join(traceback.format_exception(exc))
    path = rep_dir / HARNESS_ERROR_FILE
    atomic_write_text(path, f"harness bug in {cell} (attempt {attempt}); never scored, runs again on resume\n\n{text}")
    return path


async def _run_cell(
    settings: CampaignSettings, cell: CampaignCell, run_cell: CellRunner, identity: MeasurementIdentity,
    on_start: Callable[[CampaignCell, int], None] | None = None,
) -> CellOutcome:
    """Up to ``max_attempts`` sessions: persist a record, or leave the cell empty with the reason."""
    rep_dir = cell.rep_dir(settings.out_dir)
    infra_errors: list[str] = []
    attempt = 0
    while True:
        attempt += 1
        _notify(on_start, cell, attempt)
        try:
            record = _stamped(await run_cell(cell, rep_dir), infra_errors, identity)
            record.write(rep_dir)  # a full disk here is blamed like one during the session
        except BaseException as exc:
            if _ours_to_propagate(exc):
                raise
            blame = classify(exc)
            if blame.kind == FailureCode.HARNESS_BUG:
                path = _write_harness_error(rep_dir, cell, exc, attempt)
                log.error("%s: harness bug, cell failed (traceback in %s)", cell, path, exc_info=exc)
                return CellOutcome(cell, "harness_error", None, attempt, infra_errors, error=error_text(exc))
            if blame.kind == FailureCode.PROVIDER_ERROR:
                reason = f"the provider refused the harness, nothing will succeed ({error_text(exc)})"
                log.error("%s: %s; stopping the campaign", cell, reason)
                return CellOutcome(cell, "provider_error", None, attempt, infra_errors, error=error_text(exc),
                                   stop_reason=reason)
            infra_errors.append(f"attempt {attempt}: {error_text(exc)}")
            log.info("%s: %s failure on attempt %d: %s", cell, blame.kind, attempt, error_text(exc))
            if blame.stops_campaign:
                reason = f"{blame.kind} failure no retry can fix ({error_text(exc)})"
                return CellOutcome(cell, "infra_failed", None, attempt, infra_errors, stop_reason=reason)
            if not blame.transient or attempt >= settings.max_attempts:
                return CellOutcome(cell, "infra_failed", None, attempt, infra_errors)
            await asyncio.sleep(max(settings.retry_backoff_s * attempt, blame.retry_after_s or 0.0))
            continue
        (rep_dir / HARNESS_ERROR_FILE).unlink(missing_ok=True)
        _set_aside_earlier_sessions(rep_dir, record.run_id)
        return CellOutcome(cell, "ran", record, attempt, infra_errors)
