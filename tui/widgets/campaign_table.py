"""The campaign table: one row per (task, repetition); Enter posts :class:`CampaignTable.CellChosen`."""

from __future__ import annotations

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from ..state.campaign_view import CampaignRow, CampaignView, CellKey, rows
from ..state.session_view import GATES
from .formatting import STATUS_STYLE, gate_mark, media_clock

__all__ = ["CampaignTable", "row_cells"]

#: Column names and widths (``None``: as wide as the widest value, see :meth:`CampaignTable.show`).
COLUMNS: dict[str, int | None] = {"task": None, "rep": 3, "state": 11, "model": None, "media": 7, "gates": 15, "AFA": 4}


def _key(key: CellKey) -> str:
    return f"{key[0]}#{key[1]}"


def row_cells(row: CampaignRow) -> tuple[Text | str, ...]:
    gates = Text(" ").join(gate_mark(gate, row.gates.of(gate)) for gate in GATES)
    return (
        row.key[0],
        str(row.key[1]),
        Text(row.status, style=STATUS_STYLE.get(row.status, "")),
        row.model,
        media_clock(row.clock_ms) if row.status != "queued" else "",
        gates,
        "" if row.afa is None else f"{row.afa:.2f}",
    )


class CampaignTable(DataTable):
    class CellChosen(Message):
        """The user chose a cell to open."""

        def __init__(self, key: CellKey) -> None:
            super().__init__()
            self.key = key

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self._keys: dict[str, CellKey] = {}
        self._shown: dict[str, tuple] = {}
        self._campaign: CampaignView | None = None
        self._widths: dict[str, int] = {}

    def _set_columns(self, table: list[tuple[Text | str, ...]]) -> None:
        """(Re)build the columns when a value outgrows them (DataTable's own auto width can lag)."""
        widths = {
            name: width or max([len(name), *(len(str(cells[index])) for cells in table)])
            for index, (name, width) in enumerate(COLUMNS.items())
        }
        if all(widths[name] <= self._widths.get(name, 0) for name in widths):
            return
        self._widths = widths
        self.clear(columns=True)
        self._shown.clear()
        for name, width in widths.items():
            self.add_column(name, key=name, width=width)

    def show(self, campaign: CampaignView) -> None:
        if campaign is self._campaign:
            return
        self._campaign = campaign
        table = [(row.key, row_cells(row)) for row in rows(campaign)]
        self._set_columns([cells for _, cells in table])
        for cell_key, cells in table:
            key = _key(cell_key)
            if key not in self._shown:
                self._keys[key] = cell_key
                self.add_row(*cells, key=key)
            elif self._shown[key] != cells:
                for name, old, new in zip(COLUMNS, self._shown[key], cells, strict=True):
                    if old != new:
                        self.update_cell(key, name, new)
            self._shown[key] = cells

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.post_message(self.CellChosen(self._keys[event.row_key.value]))
