"""The campaign table: one row per (task, repetition); Enter posts :class:`CampaignTable.CellChosen`."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from ..state.campaign_view import CampaignRow, CampaignView, CellKey, rows
from ..state.session_view import GATES, SETTLED_WITHOUT_SESSION
from .formatting import STATUS_STYLE, gate_mark, media_clock

__all__ = ["CampaignTable", "fit_columns", "row_cells"]

#: Column names and widths (``None``: as wide as the widest value, see :func:`fit_columns`).
COLUMNS: dict[str, int | None] = {"task": None, "rep": 3, "state": None, "model": None, "media": 5, "gates": 15, "AFA": 4}
#: Cells of padding DataTable puts around each column's values.
PADDING = 2
#: Narrowest the task column gets before columns are cut at the right instead.
MIN_TASK = 12


def fit_columns(available: int, natural: dict[str, int]) -> dict[str, int]:
    """The columns shown in ``available`` cells, and their widths: the model column goes first (the
    title names the campaign's model), then the task column narrows (its values cut in the middle)."""
    widths = dict(natural)

    def over() -> int:
        return sum(width + PADDING for width in widths.values()) - available

    if over() > 0:
        widths.pop("model", None)
    if over() > 0:
        widths["task"] = max(MIN_TASK, widths["task"] - over())
    return widths


def _cut_middle(text: str, width: int) -> str:
    """``demo_benefits…ment_001``: both ends of a task id say which it is."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def _key(key: CellKey) -> str:
    return f"{key[0]}#{key[1]}"


def row_cells(row: CampaignRow) -> dict[str, Text | str]:
    settled = row.status not in ("queued", "running")
    gates = Text(" ").join(gate_mark(gate, row.gates.of(gate), settled=settled) for gate in GATES)
    return {
        "task": row.key[0],
        "rep": str(row.key[1]),
        "state": Text(row.status, style=STATUS_STYLE.get(row.status, "")),
        "model": row.model,
        "media": media_clock(row.clock_ms) if row.status not in ("queued", *SETTLED_WITHOUT_SESSION) else "",
        "gates": gates,
        "AFA": "" if row.afa is None else f"{row.afa:.2f}",
    }


class CampaignTable(DataTable):
    BINDINGS = [
        Binding("enter", "select_cursor", "Open"),
        Binding("home", "first_row", "First row", show=False),
        Binding("end", "last_row", "Last row", show=False),
    ]

    class CellChosen(Message):
        """The user chose a cell to open."""

        def __init__(self, key: CellKey) -> None:
            super().__init__()
            self.key = key

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self._keys: dict[str, CellKey] = {}
        self._shown: dict[str, tuple[Text | str, ...]] = {}
        self._campaign: CampaignView | None = None
        self._widths: dict[str, int] = {}

    def _set_columns(self, table: list[dict[str, Text | str]]) -> None:
        """(Re)build the columns when the values or the room for them change."""
        natural = {
            name: width or max([len(name), *(len(str(cells[name])) for cells in table)])
            for name, width in COLUMNS.items()
        }
        widths = fit_columns(self.scrollable_content_region.width - 1, natural)  # room for a scrollbar
        if widths == self._widths:
            return
        row = self.cursor_row
        self._widths = widths
        self.clear(columns=True)
        self._shown.clear()
        for name, width in widths.items():
            self.add_column(name, key=name, width=width)
        self.call_after_refresh(self.move_cursor, row=row)

    def _fitted(self, cells: dict[str, Text | str]) -> tuple[Text | str, ...]:
        task = _cut_middle(str(cells["task"]), self._widths["task"])
        return tuple(task if name == "task" else cells[name] for name in self._widths)

    def show(self, campaign: CampaignView) -> None:
        if campaign is self._campaign:
            return
        self._campaign = campaign
        table = [(row.key, row_cells(row)) for row in rows(campaign)]
        self._set_columns([cells for _, cells in table])
        for cell_key, named in table:
            key = _key(cell_key)
            cells = self._fitted(named)
            if key not in self._shown:
                self._keys[key] = cell_key
                self.add_row(*cells, key=key)
            elif self._shown[key] != cells:
                for name, old, new in zip(self._widths, self._shown[key], cells, strict=True):
                    if old != new:
                        self.update_cell(key, name, new)
            self._shown[key] = cells

    def on_resize(self) -> None:
        if self._campaign is not None:
            campaign, self._campaign = self._campaign, None
            self.show(campaign)

    def action_first_row(self) -> None:
        self.move_cursor(row=0)

    def action_last_row(self) -> None:
        self.move_cursor(row=self.row_count - 1)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.CellChosen(self._keys[event.row_key.value]))
