"""The tool-call pane: one entry per call (and approval), a cursor over them, Enter opens a call.

An entry shows the call's arguments and result cut to a line each; Enter (or "maximize" on the
focused pane) posts :class:`ToolCallList.CallChosen` and the screen opens the call's full JSON.
Entries are updated in place as results arrive, so the cursor and the scroll stay where the reader
left them; with no cursor the pane follows the newest call.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ..state.session_view import SessionView
from .session_parts import tool_entries

__all__ = ["ToolCallList"]


class ToolCallList(OptionList):
    BINDINGS = [Binding("enter", "select", "Open call", show=True)]

    class CallChosen(Message):
        """The reader asked for one call's full arguments and result."""

        def __init__(self, index: int) -> None:
            super().__init__()
            #: Index into the view's ``tools``.
            self.index = index

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = "tool calls"
        self._shown: tuple[object, ...] = ()
        self._entries: list[tuple[str, object, RenderableType]] = []

    def show(self, view: SessionView) -> None:
        finished = view.verdict is not None
        parts = (view.tools, view.approvals, finished)
        if len(parts) == len(self._shown) and all(a is b or a == b for a, b in zip(parts, self._shown, strict=True)):
            return
        self._shown = parts
        entries = tool_entries(view)
        if not entries:
            empty = "(no tool calls in this session)" if finished else "(no tool calls yet)"
            entries = [("empty", empty, Text(empty, style="dim"))]
        self._update(entries)

    def _update(self, entries: list[tuple[str, object, RenderableType]]) -> None:
        """Entries are ``(id, what it draws, prompt)``; a prompt is replaced only when what it draws changed."""
        old_ids = [entry_id for entry_id, _, _ in self._entries]
        new_ids = [entry_id for entry_id, _, _ in entries]
        following = self.highlighted is None
        if new_ids[: len(old_ids)] == old_ids:  # the usual case: results filled in, calls appended
            for index, ((_, old, _), (_, new, prompt)) in enumerate(zip(self._entries, entries, strict=False)):
                if old != new:
                    self.replace_option_prompt_at_index(index, prompt)
            self.add_options(Option(prompt, id=entry_id, disabled=entry_id == "empty")
                             for entry_id, _, prompt in entries[len(old_ids):])
        else:
            chosen = self.highlighted_option.id if self.highlighted_option is not None else None
            self.set_options(Option(prompt, id=entry_id, disabled=entry_id == "empty") for entry_id, _, prompt in entries)
            if chosen in new_ids:
                self.highlighted = new_ids.index(chosen)
        self._entries = entries
        if following:
            self.call_after_refresh(self.scroll_end, animate=False, immediate=True)

    def chosen_call(self) -> int | None:
        """The index in the view's ``tools`` of the call under the cursor, if it is a call."""
        option = self.highlighted_option
        if option is None or option.id is None or not option.id.startswith("call-"):
            return None
        return int(option.id.removeprefix("call-"))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        index = self.chosen_call()
        if index is not None:
            self.post_message(self.CallChosen(index))
