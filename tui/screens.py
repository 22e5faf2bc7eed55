"""The screens: the campaign table, one session, and the session's detail views (why it passed or
failed, one tool call whole). All are drawn from values the app hands down (:meth:`show`); what
the user does comes back up as messages and actions."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Input, Static

from harness.counted import counted

from .state.campaign_view import CampaignView, CellKey
from .state.session_view import SessionStatus, SessionView
from .widgets.campaign_table import CampaignTable
from .widgets.session_parts import (
    finished,
    render_artifacts,
    render_status,
    render_transcript,
    render_verdict,
)
from .widgets.text_pane import TextPane
from .widgets.timeline import ZOOM_LEVELS, Timeline
from .widgets.tool_list import ToolCallList
from .widgets.verdict_parts import render_call, render_why

__all__ = ["CampaignScreen", "SessionDetail", "SessionScreen"]

_ZOOM = Binding.Group("Zoom")


class CampaignScreen(Screen):
    BINDINGS = [Binding("q", "app.quit", "Quit")]

    def __init__(self, waiting: str = "") -> None:
        super().__init__()
        #: What the title says while the campaign has no cell yet (what is watched, and how it fills).
        self.waiting = waiting
        self._ready = False

    def compose(self) -> ComposeResult:
        yield Static("", id="campaign-title")
        yield CampaignTable(id="cells")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._ready = True

    def on_unmount(self) -> None:
        self._ready = False

    def show(self, campaign: CampaignView) -> bool:
        """Draw ``campaign``; ``False`` when the screen is not composed yet (or going away)."""
        if not self._ready:
            return False
        title = self.query_one("#campaign-title", Static)
        if not campaign.cells:
            title.update(self.waiting or "waiting for the campaign's first cell")
            return True
        counts: dict[SessionStatus, int] = {}
        for key in campaign.cells:
            status = campaign.session(key).status
            counts[status] = counts.get(status, 0) + 1
        summary = ", ".join(f"{n} {status}" for status, n in counts.items())
        done = " · finished" if campaign.finished else ""
        title.update(f"{campaign.model or 'campaign'} · {counted(len(campaign.cells), 'run')}: {summary}{done}")
        self.query_one(CampaignTable).show(campaign)
        return True


class SessionScreen(Screen):
    """One session: gates and clock, the duplex timeline, transcript, tool calls, artifact."""

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("w", "why", "Why"),
        Binding("plus,equals_sign", "zoom(-1)", "Zoom in", key_display="+", group=_ZOOM),
        Binding("minus", "zoom(1)", "Zoom out", key_display="-", group=_ZOOM),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, key: CellKey, *, replay: bool = False) -> None:
        super().__init__()
        self.key = key
        self.replay = replay
        self.view = SessionView()
        self._shown: tuple[Text, Text] | None = None
        self._ready = False

    def compose(self) -> ComposeResult:
        self._timeline = Timeline(id="timeline")
        self._panes = (
            TextPane("transcript", lambda v: (v.transcript, finished(v)), render_transcript, id="transcript"),
            TextPane("artifact", lambda v: (v.artifacts, finished(v)), render_artifacts, id="artifact"),
        )
        self._tools = ToolCallList(id="tools")
        with Vertical(id="gates"):
            yield Static("", id="status-line")
            yield Static("", id="verdict-line")
        yield self._timeline
        with Horizontal(id="body"):
            yield self._panes[0]
            with Vertical(id="side"):
                yield self._tools
                yield self._panes[1]
        if self.replay:
            yield Static("", id="replay-bar")
            yield Input(placeholder="seek to: 1:23.4, 83 (seconds) or #120 (event)", id="seek")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._ready = True

    def on_unmount(self) -> None:
        self._ready = False

    def show(self, view: SessionView) -> None:
        self.view = view
        if not self._ready:
            return  # pushed but not mounted yet (the next redraw shows it), or going away
        status, verdict = render_status(view), render_verdict(view)
        shown = self._shown or (None, None)
        if status != shown[0]:  # every event moves the clock: one line, redrawn without a layout
            self.query_one("#status-line", Static).update(status, layout=False)
        if verdict != shown[1]:  # rare, and it may wrap onto more lines: this one lays out
            self.query_one("#verdict-line", Static).update(verdict)
        self._shown = (status, verdict)
        self._timeline.show(view)
        self._tools.show(view)
        for pane in self._panes:
            pane.show(view)

    def show_replay(self, status: str) -> None:
        self.query_one("#replay-bar", Static).update(status)

    def open_seek(self) -> None:
        seek = self.query_one("#seek", Input)
        seek.display = True
        seek.value = ""
        seek.focus()
        self.refresh_bindings()

    def _seek_open(self) -> bool:
        seek = self.query("#seek")
        return bool(seek) and seek.first().display

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.input.display = False  # the message goes on up to the app, which seeks
        self.refresh_bindings()

    def _over_campaign(self) -> bool:
        stack = self.app.screen_stack
        return self in stack and stack.index(self) > 0 and isinstance(stack[stack.index(self) - 1], CampaignScreen)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Esc is offered only where it does something: close the seek prompt, or go back to the campaign."""
        if action == "back":
            return self._seek_open() or self._over_campaign()
        return True

    def action_back(self) -> None:
        if self._seek_open():
            self.query_one("#seek", Input).display = False
            self.refresh_bindings()
        elif self._over_campaign():
            self.app.pop_screen()

    def action_zoom(self, delta: int) -> None:
        timeline = self.query_one(Timeline)
        timeline.zoom = max(0, min(len(ZOOM_LEVELS) - 1, timeline.zoom + delta))

    def action_why(self) -> None:
        self.app.push_screen(SessionDetail(self.key, self.view, render_why, "why · the grade and its evidence"))

    def on_tool_call_list_call_chosen(self, message: ToolCallList.CallChosen) -> None:
        self._open_call(message.index)

    def action_maximize(self) -> None:
        """On the tool calls, the call under the cursor whole; on any other pane, the pane."""
        if self.focused is self._tools and (index := self._tools.chosen_call()) is not None:
            self._open_call(index)
        else:
            super().action_maximize()

    def _open_call(self, index: int) -> None:
        def render(view: SessionView) -> RenderableType:
            if index >= len(view.tools):
                return Text("(this call has not been made at this point of the session)", style="dim")
            return render_call(view.tools[index])

        title = f"tool call · {self.view.tools[index].tool}" if index < len(self.view.tools) else "tool call"
        self.app.push_screen(SessionDetail(self.key, self.view, render, title))


class SessionDetail(ModalScreen[None]):
    """A detail of one session over its screen, redrawn as the session goes on; Esc closes it."""

    BINDINGS = [Binding("escape,w", "app.pop_screen", "Close", key_display="esc"), Binding("q", "app.quit", "Quit")]

    def __init__(self, key: CellKey, view: SessionView, render: Callable[[SessionView], RenderableType], title: str) -> None:
        super().__init__()
        self.key = key
        self.view = view
        self._draw = render
        self._title = title

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail") as scroll:
            scroll.border_title = self._title
            yield Static(self._draw(self.view), id="detail-body")
        yield Footer(compact=True)

    def show(self, view: SessionView) -> None:
        if view is not self.view and self.is_mounted:
            self.view = view
            self.query_one("#detail-body", Static).update(self._draw(view))
