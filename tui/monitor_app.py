"""The app that follows a campaign: the table of cells, and any one session opened from it.

Sources (a tailing thread, a campaign's bus) only append :mod:`~tui.state.updates` to the inbox,
from any thread; the UI thread folds them into the campaign view :data:`REFRESH_S` times a second
and hands the result to the visible screen, so a burst of events costs one redraw.
"""

from __future__ import annotations

import time
from pathlib import Path

from textual.worker import get_current_worker

from .app_base import TuiApp
from .inbox import Inbox
from .screens import CampaignScreen, SessionDetail, SessionScreen
from .sources.runs_dir import RunsDirWatcher, WatchTarget, watch_target
from .state.campaign_view import CampaignView, CellKey
from .state.updates import apply_update
from .widgets.campaign_table import CampaignTable

__all__ = ["REFRESH_S", "MonitorApp", "WatchApp"]

#: Seconds between redraws of a session (updates arriving in between are folded into one).
REFRESH_S = 0.1
#: Seconds between redraws of the campaign table: its finest column is whole seconds, and a
#: DataTable redraw costs far more than a session's.
TABLE_REFRESH_S = 1.0
#: Seconds of UI-thread time one redraw may spend folding updates in; the rest wait for the next
#: (attaching to a large finished campaign must not freeze the keys).
FOLD_BUDGET_S = 0.05
#: Seconds the tailing thread sleeps when a poll found nothing new.
IDLE_POLL_S = 0.05


class MonitorApp(TuiApp):
    TITLE = "apex-voice"

    def __init__(self) -> None:
        super().__init__()
        self.campaign = CampaignView()
        #: Updates from the sources (any thread), bounded by the events it holds.
        self.inbox = Inbox()
        #: The screen drawn last, when, and the campaign view it was handed.
        self._drawn: tuple[object, float, CampaignView | None] = (None, 0.0, None)
        #: The cell opened at start (``watch`` of a rep or session directory), over the table.
        self.open_cell: CellKey | None = None

    def on_mount(self) -> None:
        self.push_screen(CampaignScreen(self.waiting_message()))
        if self.open_cell is not None:
            self.push_screen(SessionScreen(self.open_cell))
            self.call_after_refresh(self.draw)
        self.set_interval(REFRESH_S, self.flush)
        self.start_source()

    def waiting_message(self) -> str:
        """What the campaign screen says before the first cell is known (subclasses)."""
        return "waiting for the campaign to start"

    def start_source(self) -> None:
        """Start the worker that feeds :attr:`inbox` (subclasses)."""

    def flush(self) -> None:
        deadline = time.monotonic() + FOLD_BUDGET_S
        while self.inbox and time.monotonic() < deadline:
            self.campaign = apply_update(self.campaign, self.inbox.popleft())
        self.draw()

    @property
    def drawn_up_to_date(self) -> bool:
        """True once the visible screen shows every update received so far (the table redraws at
        most once a second, so the state can be ahead of what is on screen)."""
        screen, _, campaign = self._drawn
        return not self.inbox and screen is self.screen and campaign is self.campaign

    def draw(self) -> None:
        screen, now = self.screen, time.monotonic()
        if not screen.is_attached:
            # The app is closing: Textual removes a screen's widgets before the screen itself, and
            # this timer can fire in between, when a screen mounted a moment ago has no widgets.
            return
        last_screen, last_time, _ = self._drawn
        if isinstance(screen, CampaignScreen):
            if screen is last_screen and now - last_time < TABLE_REFRESH_S:
                return
            if not screen.show(self.campaign):
                return  # not composed yet: the next draw shows it (nothing is recorded as drawn)
        elif isinstance(screen, SessionScreen | SessionDetail):
            screen.show(self.campaign.session(screen.key))
        self._drawn = (screen, now, self.campaign)

    def on_campaign_table_cell_chosen(self, message: CampaignTable.CellChosen) -> None:
        self.push_screen(SessionScreen(message.key), callback=None)
        self.call_after_refresh(self.draw)


class WatchApp(MonitorApp):
    """``apex-voice watch DIR``: a campaign another process is running (or ran), or one of its
    cells (a rep or session directory), which opens at once."""

    def __init__(self, runs_dir: Path) -> None:
        super().__init__()
        self.target: WatchTarget = watch_target(Path(runs_dir))
        self.runs_dir = self.target.runs_dir
        self.open_cell = self.target.cell
        self.sub_title = self.target.describe()

    def waiting_message(self) -> str:
        return f"waiting: no campaign in {self.runs_dir} yet (apex-voice run --out {self.runs_dir} writes one)"

    def start_source(self) -> None:
        self.run_worker(self._tail, thread=True, exit_on_error=False, name="tail", group="source")

    def _tail(self) -> None:
        worker = get_current_worker()
        # A file can wait: the tail reads on once the UI has caught up, so `watch` skips no event.
        watcher = RunsDirWatcher(self.target, lambda update: self.inbox.put_when_room(
            update, lambda: worker.is_cancelled))
        while not worker.is_cancelled:
            if not watcher.poll():
                time.sleep(IDLE_POLL_S)
