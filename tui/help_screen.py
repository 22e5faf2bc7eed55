"""``?`` or F1: every key of the screen it was opened on, shown or not in the footer.

The keys are the screen's active bindings when it opened: the focused pane's, the screen's and
the app's, as Textual resolves them (so what is listed is what a key does there).
"""

from __future__ import annotations

from dataclasses import replace

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

__all__ = ["HelpScreen", "key_table"]


def key_table(screen: Screen) -> list[tuple[str, str]]:
    """``(keys, what they do)`` for every active binding of ``screen``, one row per action."""
    app = screen.app
    rows: dict[tuple[int, str], tuple[list[str], str]] = {}
    for _, (node, binding, enabled, _tooltip) in screen.active_bindings.items():
        if not enabled:
            continue
        keys, _ = rows.setdefault((id(node), binding.action), ([], binding.description or binding.action))
        shown = app.get_key_display(replace(binding, key_display=None))
        if shown not in keys:
            keys.append(shown)
    return [(" ".join(keys), description) for keys, description in rows.values()]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "app.pop_screen", "Close", key_display="esc")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 72; max-width: 100%; height: auto; max-height: 100%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    """

    def __init__(self, screen: Screen) -> None:
        super().__init__()
        self.rows = key_table(screen)

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=False, pad_edge=False)
        table.add_column(style="bold cyan", no_wrap=True, justify="right")
        table.add_column()
        for keys, description in self.rows:
            table.add_row(keys, description)
        with VerticalScroll() as scroll:
            scroll.border_title = "keys on this screen · esc closes"
            yield Static(table, id="help-keys")
            yield Static(Text("Ctrl+P: the command palette (Save screenshot, Theme, Maximize …)", style="dim"))
