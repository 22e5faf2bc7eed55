"""A scrolling pane that draws one part of the session view with a pure render function.

The view is immutable, so a pane redraws only when one of the parts of the view it draws is a
different object. It is a ``RichLog`` rewritten whole on each change: its lines (and so where its
end is) are known as soon as they are written, so following the end never waits on a layout. It
follows the end until the reader scrolls up, and again once they are back at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import RenderableType
from textual import events
from textual.widgets import RichLog

from ..state.session_view import SessionView

__all__ = ["TextPane"]


def _same(parts: tuple[Any, ...], shown: tuple[Any, ...]) -> bool:
    return len(parts) == len(shown) and all(a is b for a, b in zip(parts, shown, strict=True))


class TextPane(RichLog, can_focus=True):
    def __init__(
        self,
        title: str,
        parts: Callable[[SessionView], tuple[Any, ...]],
        render: Callable[[SessionView], RenderableType],
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id, wrap=True, markup=False, highlight=False, auto_scroll=False, min_width=20)
        self.border_title = title
        self._select = parts
        self._format = render
        self._shown: tuple[Any, ...] = ()
        self._view: SessionView | None = None
        #: Whether new lines scroll the pane to its end (off once the reader scrolls up).
        self.following = True

    def show(self, view: SessionView) -> None:
        parts = self._select(view)
        if _same(parts, self._shown):
            return
        self._shown, self._view = parts, view
        self._rewrite()

    def _rewrite(self) -> None:
        if self._view is None:
            return
        y = self.scroll_y
        self.clear()
        self.write(self._format(self._view), expand=True, scroll_end=False)
        if self.following:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        else:
            self.scroll_to(y=y, animate=False, immediate=True)

    def on_resize(self, event: events.Resize) -> None:
        width_known = self._size_known
        super().on_resize(event)
        if width_known and event.size.width:
            self._rewrite()  # wrapped at the old width

    # The reader scrolling up stops following; back at the end (or End) it follows again.

    def _follow_if_at_end(self) -> None:
        self.following = self.scroll_y >= self.max_scroll_y

    def action_scroll_up(self) -> None:
        self.following = False
        super().action_scroll_up()

    def action_page_up(self) -> None:
        self.following = False
        super().action_page_up()

    def action_scroll_home(self) -> None:
        self.following = False
        super().action_scroll_home()

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.following = False
        super()._on_mouse_scroll_up(event)

    def action_scroll_down(self) -> None:
        super().action_scroll_down()
        self.call_after_refresh(self._follow_if_at_end)

    def action_page_down(self) -> None:
        super().action_page_down()
        self.call_after_refresh(self._follow_if_at_end)

    def _on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        super()._on_mouse_scroll_down(event)
        self.call_after_refresh(self._follow_if_at_end)

    def action_scroll_end(self) -> None:
        self.following = True
        super().action_scroll_end()
