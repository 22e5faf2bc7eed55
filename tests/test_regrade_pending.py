"""A judge that is down leaves field verdicts pending: never a FAIL, never a pass."""

from __future__ import annotations

import json
import socket
from typing import Any

from harness.blame.errors import JudgeUnavailable
from harness.grading.context import GradingContext
from harness.grading.gates import grade
from harness.grading.judge import SemanticJudge
from harness.results.result_record import ResultRecord
from harness.tasks.models import GoldSpec
from mcp_servers.records import ArtifactSnapshot, EnvironmentSnapshot

GOLD = GoldSpec.model_validate({
    "artifact_expectations": [{
        "artifact_id": "claim",
        "fields": [
            {"field": "summary", "expected": "Burst pipe in the kitchen", "grader": "semantic", "required": True},
            {"field": "loss_date", "expected": "2026-03-02", "grader": "normalized_date", "required": True},
        ],
    }],
})


class DownJudge:
    async def __call__(self, field: str, pred: Any, gold: Any, context: str) -> bool:
        raise JudgeUnavailable("judge endpoint answered 503")


def _ctx(judge: Any, loss_date: str = "March 2, 2026") -> GradingContext:
    snapshot = EnvironmentSnapshot(artifacts={"claim": ArtifactSnapshot(
        artifact_id="claim", artifact_type="FORM", lifecycle="DRAFT",
        fields={"summary": "kitchen pipe burst", "loss_date": loss_date})})
    return GradingContext(snapshot=snapshot, judge=judge)


async def test_a_judge_outage_leaves_the_verdict_pending_and_pts_undetermined():
    report = await grade(GOLD, _ctx(DownJudge()))
    assert report.pending and report.pts is None and report.afa is None
    assert report.pending_fields == ["claim.summary"]
    assert "WA" not in report.components and report.components == {"GS": True, "PC": True, "RA": True}
    (summary_row,) = [row for row in report.fields if row.field == "summary"]
    assert summary_row.tier == "pending" and not summary_row.failed
    assert report.artifact_failures == []
    assert report.explain() == ["WA: claim.summary pending: the judge did not answer (run `apex-voice regrade`)"]


async def test_a_decided_failure_beside_a_pending_verdict_is_a_fail():
    report = await grade(GOLD, _ctx(DownJudge(), loss_date="2026-04-01"))
    assert report.pts == 0 and report.components["WA"] is False
    assert report.pending_fields == ["claim.summary"]


async def test_the_real_judge_against_a_closed_port_is_pending(tmp_path):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    judge = SemanticJudge(base_url=f"http://127.0.0.1:{port}/v1", api_key="k", cache=None, retry_wait_s=0)
    report = await grade(GOLD, _ctx(judge))
    assert report.pts is None and report.pending_fields == ["claim.summary"] and judge.errors == 1


async def test_result_record_carries_pending_verdicts(tmp_path):
    report = await grade(GOLD, _ctx(DownJudge()))
    record = ResultRecord(task_id="t", rep=0, model="m", pts=report.pts, components=report.components,
                          afa=report.afa, fields=report.fields)
    record.write(tmp_path)
    stored = ResultRecord.read(tmp_path)
    assert stored.pending and stored.pts is None and stored.pending_verdicts == ["claim.summary"]
    assert not stored.passed
    raw = json.loads((tmp_path / "result.json").read_text())
    assert raw["pending"] is True and raw["pts"] is None and raw["pending_verdicts"] == ["claim.summary"]
