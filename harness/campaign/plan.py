"""The campaign as a plan: its cells, its settings, what became of each cell, and the two
protocols the plan is carried out through — a :class:`CellRunner` (one session for one cell) and a
:class:`CellExecutor` (where those sessions run).

This module imports no executor and no runner. :func:`~.campaign.run_campaign` walks the plan with
the executor it is given; the CLI injects :func:`local_cells` (this process) or
:class:`~.ray_executor.RayExecutor` (a Ray cluster's nodes). An executor turns the campaign's cell
runner into the runner the plan calls, for the campaign's duration (a context manager, so it can
join a cluster and leave it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from harness.agents.registry import ModelSpec
from harness.counted import counted
from harness.results.campaign_files import CampaignConfigUsed
from harness.results.measurement_identity import MeasurementIdentity
from harness.results.result_record import ResultRecord

__all__ = [
    "MAX_ATTEMPTS",
    "CampaignCell",
    "CampaignResult",
    "CampaignSettings",
    "CellExecutor",
    "CellOutcome",
    "CellRunner",
    "CellStatus",
    "PendingRegrader",
    "campaign_cells",
    "local_cells",
]

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


#: Grades a loaded record's pending judge verdicts again; returns it unchanged if the judge is still out.
PendingRegrader = Callable[[CampaignCell, Path, ResultRecord], Awaitable[ResultRecord]]


@dataclass(frozen=True)
class CampaignSettings:
    model: ModelSpec
    out_dir: Path
    #: Repetitions this start plans per task.
    repeats: int
    #: What every cell measures, built by the cell runner (``SandboxedCellRunner.identity``); the
    #: campaign sets its plan (tasks, repetitions). ``None``: the model's defaults.
    identity: MeasurementIdentity | None = None
    #: Grow the campaign by new tasks or more repetitions (``run --extend``); refused otherwise.
    extend: bool = False
    #: Resume a campaign another harness version started (``run --allow-version-change``).
    allow_version_change: bool = False
    sandbox: str = "auto"
    parallel: int = 1
    max_attempts: int = MAX_ATTEMPTS
    #: Sleep ``retry_backoff_s × attempt`` before retrying a transient failure.
    retry_backoff_s: float = 5.0
    #: The campaign file this start read (``run --config``): recorded in ``campaign.json``, never
    #: part of the identity (where a value came from does not change what is measured).
    config: CampaignConfigUsed | None = None

    @property
    def measured(self) -> MeasurementIdentity:
        """What the cells measure (without the plan)."""
        return self.identity or MeasurementIdentity(model=self.model.key, provider_model=self.model.provider_model or None)

    def __post_init__(self) -> None:
        if self.identity is not None and self.identity.model != self.model.key:
            raise ValueError(f"campaign setting identity measures {self.identity.model!r}, not the model {self.model.key!r}")
        for name in ("repeats", "parallel", "max_attempts"):
            if getattr(self, name) < 1:
                raise ValueError(f"campaign setting {name} must be at least 1, got {getattr(self, name)}")


CellStatus = Literal["loaded", "regraded", "ran", "infra_failed", "harness_error", "provider_error", "stopped"]


@dataclass
class CellOutcome:
    """What became of a cell: its record (``None`` when left empty) and the attempts it took."""

    cell: CampaignCell
    status: CellStatus
    record: ResultRecord | None = None
    attempts: int = 0
    infra_errors: list[str] = field(default_factory=list)
    #: ``"<Type>: <message>"`` of a harness bug or a provider refusal that ended the cell.
    error: str | None = None
    #: A ``result.json`` found unusable and set aside before the cell ran again.
    set_aside: str | None = None
    #: Why no later cell should start (a provider refusal, a full harness disk).
    stop_reason: str | None = None


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
    def pending(self) -> list[ResultRecord]:
        """Runs whose grade waits on the judge: neither passes nor failures yet."""
        return [row for row in self.rows if row.pending]

    @property
    def empty_cells(self) -> list[CellOutcome]:
        return [o for o in self.outcomes if o.record is None]

    @property
    def harness_errors(self) -> list[CellOutcome]:
        return [o for o in self.outcomes if o.status == "harness_error"]

    @property
    def stopped_by(self) -> CellOutcome | None:
        """The failure that stopped the campaign, if one did."""
        return next((o for o in self.outcomes if o.stop_reason), None)

    @property
    def complete(self) -> bool:
        return not self.empty_cells

    def summary(self) -> str:
        infra = sum(o.status == "infra_failed" for o in self.outcomes)
        text = (
            f"{self.settings.model.key}: {len(self.rows)}/{counted(len(self.outcomes), 'run')} complete, "
            f"{self.passed} passed, {counted(infra, 'infra error')}"
        )
        if self.pending:
            text += f", {len(self.pending)} pending judge verdicts (run `apex-voice regrade`)"
        if self.harness_errors:
            named = "; ".join(f"{o.cell}: {o.error}" for o in self.harness_errors[:3])
            text += f", {len(self.harness_errors)} harness errors ({named})"
        stopped = self.stopped_by
        if stopped is not None:
            text += f"; stopped at {stopped.cell}: {stopped.stop_reason}"
        return f"{text} -> {self.settings.out_dir}"


def campaign_cells(task_ids: list[str], repeats: int) -> list[CampaignCell]:
    """Coverage-first order: repetition 0 of every task (sorted), then repetition 1, ..."""
    return [CampaignCell(rep, task_id) for rep in range(repeats) for task_id in sorted(set(task_ids))]


class CellExecutor(Protocol):
    """Where a campaign's sessions run: for the block's duration, the runner the plan calls for a
    cell, made from the campaign's own cell runner (the local executor returns it as it is)."""

    def __call__(self, settings: CampaignSettings, run_cell: CellRunner) -> AbstractAsyncContextManager[CellRunner]: ...


@asynccontextmanager
async def local_cells(settings: CampaignSettings, run_cell: CellRunner) -> AsyncIterator[CellRunner]:
    """The local executor: every cell runs in this process, through ``run_cell`` itself."""
    yield run_cell
