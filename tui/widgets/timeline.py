"""The duplex timeline: both channels side by side on the media clock, with what happened between them.

Rows: a time axis, the user's channel, the agent's, and marks — ``B`` a barge-in (green when the
agent yielded in time, red otherwise), ``b`` a back-channel (green when it kept talking), ``Y``
where the agent went silent (its stop latency after the onset), ``T`` a tool call, ``A``/``R`` an
approval granted/revoked. Columns where both channels speak are overlaps (red background).
Speech blocks are as tall as the loudest level window in their column where ``AUDIO_LEVEL`` was
logged (full blocks in a run that logged none), drawn the same way wherever the window lies.
"""

from __future__ import annotations

from itertools import groupby

from rich.console import Group
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ..state.session_view import ChannelView, LevelTrack, Segment, SessionView
from .formatting import media_time

__all__ = ["BARS", "ZOOM_LEVELS", "Timeline", "render_timeline"]

#: Milliseconds per column, from closest to widest.
ZOOM_LEVELS = (50, 100, 250, 500, 1000, 2000, 5000)
LABEL_WIDTH = 6
BARS = "▁▂▃▄▅▆▇█"
_FLOOR_DB = -60.0


def _columns(segments: tuple[Segment, ...], start: int, ms: int, width: int, now: int) -> list[bool]:
    on = [False] * width
    for segment in segments:
        end = now if segment.end_ms is None else segment.end_ms
        if end <= start or segment.start_ms >= start + ms * width:
            continue
        first = max(0, (segment.start_ms - start) // ms)
        last = min(width - 1, max(first, (end - 1 - start) // ms))
        for col in range(first, last + 1):
            on[col] = True
    return on


def _runs(text: Text, cells: list[tuple[str, str]]) -> Text:
    """Append ``(char, style)`` cells, one span per run of equal styles (per-cell appends are slow)."""
    for style, run in groupby(cells, key=lambda cell: cell[1]):
        text.append("".join(char for char, _ in run), style=style)
    return text


def _peaks(levels: LevelTrack, start: int, ms: int, width: int) -> list[float | None]:
    """Per column, the loudest level window starting in it, else the window still sounding from
    before (``None``: no level logged yet). The one way a channel's levels become columns."""
    samples = levels.since(start)
    index, last = 0, None
    while index < len(samples) and samples[index].t_ms < start:
        last = samples[index].dbfs
        index += 1
    peaks: list[float | None] = []
    for col in range(width):
        end, loudest = start + (col + 1) * ms, None
        while index < len(samples) and samples[index].t_ms < end:
            dbfs = samples[index].dbfs
            loudest = dbfs if loudest is None else max(loudest, dbfs)
            index += 1
        peaks.append(last if loudest is None else loudest)
        last = samples[index - 1].dbfs if loudest is not None else last
    return peaks


def _bar(dbfs: float | None) -> str:
    """A speech column as tall as its level; a full block where no level was logged."""
    if dbfs is None:
        return "█"
    share = (dbfs - _FLOOR_DB) / -_FLOOR_DB
    return BARS[max(0, min(len(BARS) - 1, round(share * (len(BARS) - 1))))]


def _lane(name: str, channel: ChannelView, start: int, ms: int, width: int, now: int, overlap: list[bool], style: str) -> Text:
    active = _columns(channel.activity, start, ms, width, now)
    peaks = _peaks(channel.levels, start, ms, width)
    overlap_style = style + " on dark_red"
    cells = []
    for col, on in enumerate(active):
        if not on:
            cells.append(("·" if start + col * ms <= now else " ", "dim"))
        else:
            cells.append((_bar(peaks[col]), overlap_style if overlap[col] else style))
    return _runs(Text(f"{name:<{LABEL_WIDTH}}", style="bold " + style), cells)


def _marks(view: SessionView, start: int, ms: int, width: int) -> Text:
    cells: list[tuple[str, str]] = [(" ", "")] * width

    def put(t: int, char: str, style: str) -> None:
        col = (t - start) // ms
        if 0 <= col < width:
            cells[col] = (char, style)

    for call in view.tools:
        put(call.called_ms, "T", "red" if call.is_error else "yellow")
    for approval in view.approvals:
        put(approval.t_ms, "A" if approval.granted else "R", "cyan" if approval.granted else "magenta")
    for mark in view.duplex:
        if mark.stop_latency_ms is not None:
            put(mark.onset_ms + mark.stop_latency_ms, "Y", "bold")
        good = {True: "bold green", False: "bold red", None: "bold"}[mark.correct]
        put(mark.onset_ms, "B" if mark.expected == "YIELD" else "b", good)
    return _runs(Text(" " * LABEL_WIDTH), cells)


def _axis(start: int, ms: int, width: int) -> Text:
    line = [" "] * width
    step = 10 if width >= 40 else 5
    for col in range(0, width, step):
        t = start + col * ms
        if t >= 0:
            label = "|" + media_time(t)
            for i, ch in enumerate(label[: max(0, width - col)]):
                line[col + i] = ch
    return Text(" " * LABEL_WIDTH + "".join(line), style="dim")


def render_timeline(view: SessionView, width: int, ms_per_col: int, end_ms: int | None = None) -> Group:
    """Four rows ending at ``end_ms`` (the view's clock by default)."""
    columns = max(1, width - LABEL_WIDTH)
    now = view.clock_ms
    end = now if end_ms is None else end_ms
    start = max(0, end - columns * ms_per_col + ms_per_col)
    overlap = _columns(view.overlaps, start, ms_per_col, columns, now)
    return Group(
        _axis(start, ms_per_col, columns),
        _lane("user", view.user, start, ms_per_col, columns, now, overlap, "cyan"),
        _lane("agent", view.agent, start, ms_per_col, columns, now, overlap, "magenta"),
        _marks(view, start, ms_per_col, columns),
    )


class Timeline(Widget):
    """Shows the session given to :meth:`show`; ``+``/``-`` on the screen change :attr:`zoom`."""

    DEFAULT_CSS = """
    Timeline { height: 6; border: round $primary-darken-2; padding: 0 0; }
    """

    zoom: reactive[int] = reactive(ZOOM_LEVELS.index(250))
    """Index into :data:`ZOOM_LEVELS`."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.view = SessionView()

    def show(self, view: SessionView) -> None:
        if view is not self.view:
            self.view = view
            self.refresh()

    def watch_zoom(self) -> None:
        self.border_title = f"timeline · {ZOOM_LEVELS[self.zoom]} ms/col"
        self.refresh()

    def on_mount(self) -> None:
        self.watch_zoom()

    def render(self) -> Group:
        return render_timeline(self.view, self.content_size.width, ZOOM_LEVELS[self.zoom])
