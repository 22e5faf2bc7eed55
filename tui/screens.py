"""The two screens: the campaign table and one session. Both are drawn from values the app hands
down (:meth:`show`); what the user does comes back up as messages and actions."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from .state.campaign_view import CampaignView, CellKey
from .state.session_view import SessionView
from .widgets.campaign_table import CampaignTable
from .widgets.session_parts import render_artifacts, render_gates, render_tools, render_transcript
from .widgets.text_pane import TextPane
from .widgets.timeline import ZOOM_LEVELS, Timeline

__all__ = ["CampaignScreen", "SessionScreen"]


class CampaignScreen(Screen):
    BINDINGS = [Binding("q", "app.quit", "Quit"), Binding("enter", "open", "Open", show=True)]

    def compose(self) -> ComposeResult:
        yield Static("", id="campaign-title")
        yield CampaignTable(id="cells")
        yield Footer()

    def show(self, campaign: CampaignView) -> None:
        counts = {}
        for key in campaign.cells:
            status = campaign.session(key).status
            counts[status] = counts.get(status, 0) + 1
        summary = ", ".join(f"{n} {status}" for status, n in counts.items())
        done = " · finished" if campaign.finished else ""
        self.query_one("#campaign-title", Static).update(f"{campaign.model or 'campaign'} · {len(campaign.cells)} runs: {summary}{done}")
        self.query_one(CampaignTable).show(campaign)

    def action_open(self) -> None:
        self.query_one(CampaignTable).action_select_cursor()


class SessionScreen(Screen):
    """One session: gates and clock, the duplex timeline, transcript, tool calls, artifact."""

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("plus,equals_sign", "zoom(-1)", "Zoom in", key_display="+"),
        Binding("minus", "zoom(1)", "Zoom out", key_display="-"),
        Binding("tab", "focus_next", "Pane", show=False),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, key: CellKey, *, replay: bool = False) -> None:
        super().__init__()
        self.key = key
        self.replay = replay
        self._gates_shown: Text | None = None
        self._ready = False

    def compose(self) -> ComposeResult:
        self._gates = Static("", id="gates")
        self._timeline = Timeline(id="timeline")
        self._panes = (
            TextPane("transcript", lambda v: (v.transcript,), render_transcript, id="transcript"),
            TextPane("tool calls", lambda v: (v.tools, v.approvals), render_tools, id="tools"),
            TextPane("artifact", lambda v: (v.artifacts,), render_artifacts, id="artifact"),
        )
        yield self._gates
        yield self._timeline
        with Horizontal(id="body"):
            yield self._panes[0]
            with Vertical(id="side"):
                yield from self._panes[1:]
        if self.replay:
            yield Static("", id="replay-bar")
            yield Input(placeholder="seek to: 1:23.4, 83 (seconds) or #120 (event)", id="seek")
        yield Footer()

    def on_mount(self) -> None:
        self._ready = True

    def on_unmount(self) -> None:
        self._ready = False

    def show(self, view: SessionView) -> None:
        if not self._ready:
            return  # pushed but not mounted yet (the next redraw shows it), or going away
        gates = render_gates(view)
        if gates != self._gates_shown:
            self._gates_shown = gates
            self._gates.update(gates, layout=False)  # fixed height: no reflow
        self._timeline.show(view)
        for pane in self._panes:
            pane.show(view)

    def show_replay(self, status: str) -> None:
        self.query_one("#replay-bar", Static).update(status)

    def open_seek(self) -> None:
        seek = self.query_one("#seek", Input)
        seek.display = True
        seek.value = ""
        seek.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.input.display = False  # the message goes on up to the app, which seeks

    def action_back(self) -> None:
        seek = self.query("#seek")
        if seek and seek.first().display:
            seek.first().display = False
            return
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()

    def action_zoom(self, delta: int) -> None:
        timeline = self.query_one(Timeline)
        timeline.zoom = max(0, min(len(ZOOM_LEVELS) - 1, timeline.zoom + delta))
