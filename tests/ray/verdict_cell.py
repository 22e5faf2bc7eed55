"""A cell runner double whose grading stands on one judge verdict, for the verdict round trip.

``VerdictCell`` runs no session: it stores one judge verdict through its judge's cache (as the
two-tier grader does when the judge decides a field) and returns a passing record with a session
folder. Run on a Ray node, its judge is the node's (built from the node's environment), so the
verdict lands in the node's cache; the campaign must bring it back to the driver's store.
Imported on the nodes by name (the repository is on their ``PYTHONPATH``).
"""

from __future__ import annotations

from pathlib import Path

from harness.campaign.plan import CampaignCell
from harness.campaign.sandboxed_cell import SandboxedCellRunner
from harness.events.jsonl import EVENTS_FILE
from harness.grading.judge_cache import judge_cache_key
from harness.results.result_record import ResultRecord

__all__ = ["VerdictCell", "verdict_key"]


def verdict_key(cell: CampaignCell) -> str:
    return judge_cache_key("policyholder_name", f"the name said in {cell}", "Gold Name")


class VerdictCell(SandboxedCellRunner):
    async def __call__(self, cell: CampaignCell, rep_dir: Path) -> ResultRecord:
        assert self.judge is not None and self.judge.cache is not None, "the cell's judge has no verdict store"
        await self.judge.cache.aput(verdict_key(cell), True)
        session = rep_dir / "verdict-run"
        session.mkdir(parents=True, exist_ok=True)
        (session / EVENTS_FILE).write_text("{}\n", encoding="utf-8")
        return ResultRecord(task_id=cell.task_id, rep=cell.rep, model=self.model.key, run_id="verdict-run", pts=1,
                            sandbox={"backend": self.backend.name})
