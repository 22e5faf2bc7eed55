"""Run one model over every (task, repetition) cell, resumably, in parallel, without leaks.

Layout: ``<out>/campaign.json``, ``<out>/.campaign.lock``, ``<out>/<task>/rep<k>/result.json`` and
the session directories beside it. Cells are visited coverage-first (every task once before any
task twice), so a campaign stopped early still covers the suite. A cell whose ``result.json``
parses is loaded instead of re-run. A session that fails for infrastructure reasons is retried
with backoff and, if it keeps failing, left empty for the next invocation: never scored against
the model. Any other error is persisted as an error row (PTS 0), as published.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from harness.agents.registry import ModelSpec
from harness.results.result_record import ResultRecord, error_text

from .lock import CampaignLock
from .manifest import CampaignManifest, write_manifest
from .transient import is_infrastructure_error, is_transient

__all__ = [
    "CampaignCell",
    "CampaignResult",
    "CampaignSettings",
    "CellOutcome",
    "CellRunner",
    "campaign_cells",
    "run_campaign",
]

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3


@dataclass(frozen=True, order=True)
class CampaignCell:
    rep: int
    task_id: str

    def rep_dir(self, out_dir: Path) -> Path:
        return Path(out_dir) / self.task_id / f"rep{self.rep}"

    def __str__(self) -> str:
        return f"{self.task_id} rep{self.rep}"


class CellRunner(Protocol):
    """Runs one session for ``cell`` in ``rep_dir`` and returns its record (not yet written).

    Raises whatever the session raised; the campaign classifies it.
    """

    async def __call__(self, cell: CampaignCell, rep_dir: Path) -> ResultRecord: ...


@dataclass(frozen=True)
class CampaignSettings:
    model: ModelSpec
    out_dir: Path
    repeats: int
    max_turns: int = 44
    user_audio: str = "auto"
    sandbox: str = "auto"
    parallel: int = 1
    max_attempts: int = MAX_ATTEMPTS
    #: Sleep ``retry_backoff_s × attempt`` before retrying a transient failure.
    retry_backoff_s: float = 5.0

    def __post_init__(self) -> None:
        for name in ("repeats", "parallel", "max_attempts", "max_turns"):
            if getattr(self, name) < 1:
                raise ValueError(f"campaign setting {name} must be at least 1, got {getattr(self, name)}")


CellStatus = Literal["loaded", "ran", "errored", "infra_failed"]


@dataclass
class CellOutcome:
    """What became of a cell: its record (``None`` when left empty) and the attempts it took."""

    cell: CampaignCell
    status: CellStatus
    record: ResultRecord | None = None
    attempts: int = 0
    infra_errors: list[str] = field(default_factory=list)


@dataclass
class CampaignResult:
    settings: CampaignSettings
    outcomes: list[CellOutcome]

    @property
    def rows(self) -> list[ResultRecord]:
        return [o.record for o in self.outcomes if o.record is not None]

    @property
    def passed(self) -> int:
        return sum(row.passed for row in self.rows)

    @property
    def errored(self) -> int:
        return sum(row.error is not None for row in self.rows)

    @property
    def empty_cells(self) -> list[CellOutcome]:
        return [o for o in self.outcomes if o.record is None]

    @property
    def complete(self) -> bool:
        return not self.empty_cells

    def summary(self) -> str:
        return (
            f"{self.settings.model.key}: {len(self.rows)}/{len(self.outcomes)} runs complete, "
            f"{self.passed} passed, {len(self.empty_cells)} infra errors -> {self.settings.out_dir}"
        )


def campaign_cells(task_ids: list[str], repeats: int) -> list[CampaignCell]:
    """Coverage-first order: repetition 0 of every task (sorted), then repetition 1, ..."""
    return [CampaignCell(rep, task_id) for rep in range(repeats) for task_id in sorted(set(task_ids))]


async def run_campaign(
    settings: CampaignSettings,
    task_ids: list[str],
    run_cell: CellRunner,
    *,
    on_cell: Callable[[CellOutcome], None] | None = None,
) -> CampaignResult:
    """Run (or resume) the campaign; ``on_cell`` hears about every cell as it is settled."""
    cells = campaign_cells(task_ids, settings.repeats)
    with CampaignLock(settings.out_dir):
        write_manifest(
            settings.out_dir,
            CampaignManifest(
                model=settings.model.key,
                display_name=settings.model.display_name,
                repeats=settings.repeats,
                max_turns=settings.max_turns,
                user_audio=settings.user_audio,
                n_tasks=len({c.task_id for c in cells}),
                sandbox=settings.sandbox,
                parallel=settings.parallel,
                task_ids=sorted({c.task_id for c in cells}),
            ),
        )
        limit = asyncio.Semaphore(settings.parallel)

        async def settle(cell: CampaignCell) -> CellOutcome:
            loaded = ResultRecord.read(cell.rep_dir(settings.out_dir))
            if loaded is not None:
                outcome = CellOutcome(cell, "loaded", loaded)
            else:
                async with limit:
                    outcome = await _run_cell(settings, cell, run_cell)
            if on_cell is not None:
                on_cell(outcome)
            return outcome

        outcomes = await asyncio.gather(*(settle(cell) for cell in cells))
    return CampaignResult(settings, list(outcomes))


async def _run_cell(settings: CampaignSettings, cell: CampaignCell, run_cell: CellRunner) -> CellOutcome:
    """Up to ``max_attempts`` sessions; persist a record or an error row, or leave the cell empty."""
    rep_dir = cell.rep_dir(settings.out_dir)
    infra_errors: list[str] = []
    attempt = 0
    while True:
        attempt += 1
        started = time.monotonic()
        try:
            record = await run_cell(cell, rep_dir)
        except Exception as exc:
            if not is_infrastructure_error(exc):
                log.warning("%s: session error (persisted as an error row)", cell, exc_info=exc)
                row = ResultRecord.for_error(
                    cell.task_id, cell.rep, settings.model.key, exc, attempt=attempt,
                    wall_s=time.monotonic() - started,
                )
                row.infra_errors = infra_errors
                row.write(rep_dir)
                return CellOutcome(cell, "errored", row, attempt, infra_errors)
            infra_errors.append(f"attempt {attempt}: {error_text(exc)}")
            log.info("%s: infrastructure failure on attempt %d: %s", cell, attempt, error_text(exc))
            if not is_transient(exc) or attempt >= settings.max_attempts:
                return CellOutcome(cell, "infra_failed", None, attempt, infra_errors)
            await asyncio.sleep(settings.retry_backoff_s * attempt)
            continue
        if infra_errors:
            record = record.model_copy(update={"infra_errors": [*infra_errors, *record.infra_errors]})
        record.write(rep_dir)
        return CellOutcome(cell, "ran", record, attempt, infra_errors)
