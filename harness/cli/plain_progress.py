"""Progress for logs and pipes: a line when a cell's session starts, and one when the cell settles.

A live progress bar draws on a terminal; written to a CI log or through ``| cat`` it shows nothing
until the campaign ends (minutes of silence). When stdout or stderr is not a terminal, ``run``
prints this instead, on stderr: each session as it starts (a session on the realtime clock lasts
minutes), a line a minute for each session still running (a real-time run is otherwise silent for
minutes), then the cell, what became of it, its PTS and its wall time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from harness.campaign.campaign import CampaignCell, CellOutcome

__all__ = ["PlainProgress", "wants_plain_progress"]

#: How a cell without a record reads (its record's outcome speaks otherwise).
_EMPTY = {"infra_failed": "INFRA ERROR", "harness_error": "HARNESS ERROR", "provider_error": "PROVIDER REFUSED",
          "stopped": "NOT RUN"}
#: Seconds between the lines that say a session is still running.
HEARTBEAT_S = 60.0
#: What this start did with a cell that has a record.
_DONE = {"loaded": "resumed", "regraded": "resumed and regraded", "ran": "ran"}


def wants_plain_progress(*streams: TextIO) -> bool:
    """Plain lines when any of ``streams`` is not a terminal (a pipe, a file, a CI log): a live bar
    on the terminal beside a piped stdout would be lost to whoever reads the pipe's log."""
    return not all(callable(getattr(stream, "isatty", None)) and stream.isatty() for stream in streams)


class PlainProgress:
    """``on_cell`` for :func:`~harness.campaign.campaign.run_campaign`: a line per settled cell."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.stream = stream
        self.done = 0
        #: Sessions under way: the cell's name and when it started (``time.monotonic``).
        self.running: dict[str, float] = {}

    def __call__(self, outcome: CellOutcome) -> None:
        self.done += 1
        self.running.pop(str(outcome.cell), None)
        self._line(f"[{self.done}/{self.total}] {outcome.cell}: {self.describe(outcome)}")

    def started(self, cell: CampaignCell, attempt: int) -> None:
        """``on_start``: a session begins (its cell is not counted until it settles)."""
        self.running[str(cell)] = time.monotonic()
        self._line(f"[ … ] {cell}: started" + (f" (attempt {attempt})" if attempt > 1 else ""))

    def beat(self) -> None:
        """A line for each session still running, with how long it has run."""
        now = time.monotonic()
        for cell, since in self.running.items():
            minutes, seconds = divmod(int(now - since), 60)
            self._line(f"[ … ] {cell}: still running, {minutes}:{seconds:02d} so far")

    @asynccontextmanager
    async def beating(self, every_s: float = HEARTBEAT_S) -> AsyncIterator[None]:
        """:meth:`beat` every ``every_s`` seconds while the block runs."""

        async def beat_forever() -> None:
            while True:
                await asyncio.sleep(every_s)
                self.beat()

        beater = asyncio.create_task(beat_forever())
        try:
            yield
        finally:
            beater.cancel()

    def _line(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    @staticmethod
    def describe(outcome: CellOutcome) -> str:
        record = outcome.record
        if record is None:
            what = _EMPTY.get(outcome.status, outcome.status)
            if outcome.status != "stopped":
                what += f" after {outcome.attempts} attempt(s)"
            return f"{what}, unscored: counts as PTS 0"  # as the run table and `results` count it
        verdict = "PENDING JUDGE" if record.pending else ("ERROR" if record.error else (record.outcome or "?"))
        pts = "–" if record.pts is None else str(record.pts)
        return f"{_DONE.get(outcome.status, outcome.status)}, {verdict}, PTS {pts}, {record.wall_s:.1f} s"
