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

__all__ = ["LEGEND", "HelpScreen", "key_table", "legend"]


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


#: What the screens' abbreviations mean (docs/tui.md says the same at more length).
LEGEND: tuple[tuple[str, str], ...] = (
    ("GS", "gate: the state the task must end in (its terminal predicates)"),
    ("PC", "gate: policy compliance (no premature commit, no forbidden act); a failure is final"),
    ("RA", "gate: the required actions were taken"),
    ("WA", "gate: the work artifact's fields are right (field verdicts: w)"),
    ("pts", "Professional Task Success: 1 when all four gates hold"),
    ("AFA", "artifact field accuracy: the share of expected fields right"),
    ("✓ ✗ … ·", "gate met / failed / not met yet, still reachable / no grade yet"),
    ("end", "agent_ended, flow_done, closing, max_turns, nudges_exhausted, time_budget, agent_failure"),
    ("user tags", "barge: spoke over the agent · backchannel · recovered: a recovery move · closing: the goodbye · "
                  "nudge: prompting a silent agent"),
)


def legend() -> Table:
    table = Table(box=None, show_header=False, pad_edge=False, title="what the marks mean", title_style="bold")
    table.add_column(style="bold", no_wrap=True, justify="right")
    table.add_column()
    for mark, meaning in LEGEND:
        table.add_row(mark, meaning)
    return table


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
            yield Static(legend(), id="help-legend")
            yield Static(Text("Ctrl+P: the command palette (Save screenshot, Theme, Maximize …)", style="dim"))
