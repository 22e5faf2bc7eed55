"""A scrolling pane that draws one part of the session view with a pure render function.

The view is immutable, so a pane redraws only when one of the parts of the view it draws is a
different object;
it keeps following the end while the reader is at the end (as inspect's transcript does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import RenderableType
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..state.session_view import SessionView

__all__ = ["TextPane"]

#: Rows from the bottom within which the pane still follows new lines.
FOLLOW_ROWS = 2


def _same(parts: tuple[Any, ...], shown: tuple[Any, ...]) -> bool:
    return len(parts) == len(shown) and all(a is b for a, b in zip(parts, shown, strict=True))


class TextPane(VerticalScroll, can_focus=True):
    def __init__(
        self,
        title: str,
        parts: Callable[[SessionView], tuple[Any, ...]],
        render: Callable[[SessionView], RenderableType],
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.border_title = title
        self._select = parts
        self._format = render
        self._shown: tuple[Any, ...] = ()
        self._body = Static("", classes="pane-body")

    def compose(self):
        yield self._body

    def show(self, view: SessionView) -> None:
        parts = self._select(view)
        if _same(parts, self._shown):
            return
        self._shown = parts
        following = self.scroll_y >= self.max_scroll_y - FOLLOW_ROWS
        self._body.update(self._format(view))
        if following:
            self.call_after_refresh(self.scroll_end, animate=False)
