"""View state: immutable values built from events by one pure reducer."""

from .campaign_view import (
    CampaignRow,
    CampaignView,
    CellKey,
    CellResult,
    rows,
    with_cells,
    with_event,
    with_result,
)
from .reducer import event_type, reduce, reduce_all
from .session_view import GATES, SessionView

__all__ = [
    "GATES",
    "CampaignRow",
    "CampaignView",
    "CellKey",
    "CellResult",
    "SessionView",
    "event_type",
    "reduce",
    "reduce_all",
    "rows",
    "with_cells",
    "with_event",
    "with_result",
]
