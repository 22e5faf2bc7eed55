"""Progress for logs and pipes: a line when a cell's session starts, and one when the cell settles.

A live progress bar draws on a terminal; written to a CI log or through ``| cat`` it shows nothing
until the campaign ends (minutes of silence). When stdout or stderr is not a terminal, ``run``
prints this instead, on stderr: each session as it starts (a session on the realtime clock lasts
minutes), then the cell, what became of it, its PTS and its wall time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from harness.campaign.campaign import CampaignCell, CellOutcome

__all__ = ["PlainProgress", "wants_plain_progress"]

#: How a cell without a record reads (its record's outcome speaks otherwise).
_EMPTY = {"infra_failed": "INFRA ERROR", "harness_error": "HARNESS ERROR", "provider_error": "PROVIDER REFUSED",
          "stopped": "NOT RUN"}
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

    def __call__(self, outcome: CellOutcome) -> None:
        self.done += 1
        self._line(f"[{self.done}/{self.total}] {outcome.cell}: {self.describe(outcome)}")

    def started(self, cell: CampaignCell, attempt: int) -> None:
        """``on_start``: a session begins (its cell is not counted until it settles)."""
        self._line(f"[ … ] {cell}: started" + (f" (attempt {attempt})" if attempt > 1 else ""))

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
