"""``run --fail-fast`` and ``--max-cost``: when a campaign starts no further cell.

Both are a rule :func:`~harness.campaign.campaign.run_campaign` asks after every settled cell
(``stop_when``); a reason stops the campaign the way a provider's refusal does, the cells not yet
started recorded as ``stopped`` with it (``--retry-failed`` or a plain rerun fills them later).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.campaign.campaign import CellOutcome

__all__ = ["CampaignStops"]

#: Statuses of a cell this start ran (a loaded or regraded record was measured by an earlier one).
_RAN_NOW = ("ran", "infra_failed", "harness_error", "provider_error")


@dataclass
class CampaignStops:
    """``fail_fast``: stop after the first cell this start ran that did not pass (a scored failure,
    or no score at all). ``max_cost``: stop once the cost of the campaign's records (earlier
    starts' included) passes this many USD."""

    fail_fast: bool = False
    max_cost: float | None = None
    spent: float = 0.0

    def __call__(self, outcome: CellOutcome) -> str | None:
        record = outcome.record
        if record is not None and record.cost_usd is not None:
            self.spent += record.cost_usd
        if self.max_cost is not None and self.spent > self.max_cost:
            return f"--max-cost {self.max_cost:g}: the campaign has spent {self.spent:.2f} USD"
        if self.fail_fast and outcome.status in _RAN_NOW and (record is None or not record.passed):
            what = ("is pending the judge" if record is not None and record.pending else "failed" if record is not None
                    else f"was left unscored ({outcome.status.replace('_', ' ')})")
            return f"--fail-fast: {outcome.cell} {what}"
        return None
