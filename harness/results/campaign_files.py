"""What a campaign writes beside its result records, named where ``results`` reads it.

The campaign writes ``campaign.json`` (with the cells it left unscored) and, for a cell its own code
failed, ``harness_error.txt``; ``apex-voice results`` and the TUI read them. The names and the
unscored-cell record live here, below the campaign, so the reader never imports the writer.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["HARNESS_ERROR_FILE", "MANIFEST_FILE", "SUPERSEDED_DIR", "CampaignConfigUsed", "UnscoredCell", "UnscoredReason"]

#: The campaign directory's manifest (``harness.campaign.manifest``).
MANIFEST_FILE = "campaign.json"
#: A repetition directory's traceback when the harness's own code failed the cell.
HARNESS_ERROR_FILE = "harness_error.txt"
#: Where a repetition keeps the sessions of its earlier attempts (interrupted, or retried for the
#: infrastructure) once one is scored: beside the scored session they looked like its rivals.
SUPERSEDED_DIR = "superseded"

#: Why a planned cell has no scored record (``results`` lists the cell with it).
UnscoredReason = Literal["not run", "infrastructure", "harness error", "provider refused", "stopped"]


class UnscoredCell(BaseModel):
    """A planned cell the last start of the campaign left without a record, and why."""

    model_config = ConfigDict(extra="ignore")

    task_id: str
    rep: int
    reason: UnscoredReason
    detail: str = ""


class CampaignConfigUsed(BaseModel):
    """The campaign file a start read (``run --config``): where it was, what it set, and which of
    its keys the command line overrode. A record of how the run was asked for, not of what it
    measures (that is the identity)."""

    model_config = ConfigDict(extra="ignore")

    path: str
    values: dict[str, Any]
    overridden: list[str] = []
