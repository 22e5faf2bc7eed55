"""``apex-voice run --tui``: the campaign runs as the app's worker and the UI reads its buses.

The campaign gets an event loop of its own in a worker thread, so a session on the virtual clock
(as fast as the CPU allows) never starves the UI, and the UI never slows the session: each bus
subscriber only appends to the app's inbox. Quitting cancels the campaign the way Ctrl-C does on
the plain command line (sandboxes torn down, finished results kept) and exits once it unwound.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from textual.worker import Worker, WorkerState

from harness.campaign.campaign import (
    CampaignCell,
    CampaignResult,
    CampaignSettings,
    CellOutcome,
    CellRunner,
    run_campaign,
)
from harness.campaign.unscored import unscored_cells
from harness.events import EventBus
from sandbox.backend import SandboxBackend

from .monitor_app import MonitorApp
from .state.campaign_view import CellKey, CellResult
from .state.updates import CampaignFinished, CampaignSeen, EventsRead, ResultRead, SessionRestarted

__all__ = ["LiveApp", "run_campaign_in_tui"]


def _key(cell: CampaignCell) -> CellKey:
    return (cell.task_id, cell.rep)


class LiveApp(MonitorApp):
    def __init__(
        self,
        settings: CampaignSettings,
        task_ids: list[str],
        runner: CellRunner,
        backend: SandboxBackend,
        **campaign_options: Any,
    ) -> None:
        super().__init__()
        self.settings = settings
        self.campaign_options = campaign_options
        self.task_ids = task_ids
        self.runner = runner
        self.backend = backend
        self.sub_title = f"{settings.model.key} → {settings.out_dir}"
        self.result: CampaignResult | None = None
        self.error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._main: asyncio.Task | None = None
        #: Cells settled so far (touched on the campaign's thread only).
        self._outcomes: list[CellOutcome] = []

    def start_source(self) -> None:
        cells = tuple(sorted({(t, r) for r in range(self.settings.repeats) for t in self.task_ids}, key=lambda k: (k[1], k[0])))
        self.inbox.append(CampaignSeen(self.settings.model.key, cells))
        if hasattr(self.runner, "on_session"):  # a runner without the hook still shows settled cells
            earlier = self.runner.on_session
            self.runner.on_session = self._chained(earlier) if earlier else self._on_session
        self.run_worker(self._run_in_thread, thread=True, exit_on_error=False, name="campaign", group="source")

    # --- the campaign thread ---------------------------------------------------------------

    def _run_in_thread(self) -> None:
        asyncio.run(self._campaign())

    async def _campaign(self) -> None:
        self._loop, self._main = asyncio.get_running_loop(), asyncio.current_task()
        try:
            self.result = await run_campaign(
                self.settings, self.task_ids, self.runner, on_cell=self._on_cell, **self.campaign_options
            )
            self.inbox.append(CampaignFinished(self.result.summary()))
        except asyncio.CancelledError:
            pass
        except Exception as exc:  # shown after the app exits, as the plain command would
            self.error = exc
        finally:
            await self.backend.aclose()

    def _on_session(self, cell: CampaignCell, bus: EventBus) -> None:
        key = _key(cell)
        self.inbox.append(SessionRestarted(key, bus.run_id))
        bus.subscribe(lambda event: self.inbox.append(EventsRead(key, (event,))))

    def _chained(self, earlier: Callable[[CampaignCell, EventBus], None]) -> Callable[[CampaignCell, EventBus], None]:
        def both(cell: CampaignCell, bus: EventBus) -> None:
            earlier(cell, bus)
            self._on_session(cell, bus)

        return both

    def _on_cell(self, outcome: CellOutcome) -> None:
        """A settled cell: its record, or why it has none in the words ``campaign.json`` will use."""
        self._outcomes.append(outcome)
        key = _key(outcome.cell)
        if outcome.record is not None:
            result = CellResult.from_record(outcome.record.model_dump(mode="json"))
        else:  # the stop reason of a stopped cell is the one the cell that stopped the campaign gave
            empty = next(c for c in unscored_cells(self._outcomes) if (c.task_id, c.rep) == key)
            result = CellResult.unscored_cell(empty.reason, empty.detail)
        self.inbox.append(ResultRead(key, result))

    # --- the UI thread -------------------------------------------------------------------

    async def action_quit(self) -> None:
        """Stop the campaign first (its sandboxes come down), then exit when its worker ends."""
        if self._loop is not None and self._main is not None and not self._main.done():
            self.notify("stopping the campaign: sandboxes are torn down, finished results kept")
            self._loop.call_soon_threadsafe(self._main.cancel)
            return
        self.exit()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name != "campaign":
            return
        if event.state == WorkerState.ERROR:
            self.error = event.worker.error
            self.exit()
        elif event.state == WorkerState.SUCCESS:
            if self.result is None:  # cancelled or failed
                self.exit()
            else:
                self.notify(self.result.summary() + " · q to quit", timeout=8)  # the title keeps "finished"


def run_campaign_in_tui(
    settings: CampaignSettings, task_ids: list[str], runner: CellRunner, backend: SandboxBackend, **campaign_options: Any
) -> CampaignResult | None:
    """Run the campaign under the TUI; returns its result once the user quits, ``None`` when the
    user stopped it before it finished (the command then exits as on Ctrl-C).

    ``campaign_options`` go to :func:`~harness.campaign.campaign.run_campaign` as they are.
    Re-raises what the campaign raised (e.g. its directory is locked by another run).
    """
    app = LiveApp(settings, task_ids, runner, backend, **campaign_options)
    app.run()
    if app.error is not None:
        raise app.error
    return app.result
