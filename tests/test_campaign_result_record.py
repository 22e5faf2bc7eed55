"""``result.json`` records: built from a finished session, written, read back; error rows."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from harness.campaign.session_record import record_from_session
from harness.events import EventBus, EventType
from harness.grading.report import FailedPredicate, FieldRow, GradeReport
from harness.results.result_record import ResultRecord

PUBLISHED_KEYS = ["task_id", "rep", "model", "run_id", "condition", "pts", "components", "turns", "outcome",
                  "duplex", "latency", "wall_s", "error"]


@dataclass
class FinishedSession:
    run_id: str
    task_id: str
    grade: GradeReport
    events: EventBus
    condition: str = "C2"
    pts: int = 0
    outcome: str = "FAILURE"
    reason: str = "flow_done"
    turns: int = 4
    adapter_meta: dict[str, Any] = field(default_factory=dict)
    agent_errors: list[str] = field(default_factory=list)
    usage: list[dict[str, Any]] = field(default_factory=list)
    agent_failure: dict[str, Any] | None = None


def _failed_grade() -> GradeReport:
    return GradeReport(
        pts=0,
        components={"GS": True, "PC": True, "RA": True, "WA": False},
        afa=0.5,
        progress_score=0.75,
        artifact_failures=["claim_form"],
        fields=[
            FieldRow(artifact="claim_form", field="amount", expected=120, got=210, grader="exact",
                     tier="deterministic", score=0.0, required=True, present=True),
            FieldRow(artifact="claim_form", field="name", expected="Ada", got="Ada", grader="exact",
                     tier="deterministic", score=1.0, required=True, present=True),
        ],
        failed_predicates=[FailedPredicate(id="p1", kind="tool_called", gate="GS", reason="never called", role="terminal")],
    )


def _events() -> EventBus:
    log = EventBus(run_id="abc123", task_version="1", condition="C2")
    log.emit(EventType.USER_AUDIO_START, "user", 0, {"text": "hello", "duration_ms": 1000})
    log.emit(EventType.USER_AUDIO_END, "user", 1000, {"text": "hello"})
    log.emit(EventType.AGENT_AUDIO_START, "agent", 1400, {"response_id": 0})
    log.emit(EventType.TOOL_CALL, "agent", 1500, {"tool": "kb_search", "args": {}})
    log.emit(EventType.AGENT_AUDIO_END, "agent", 2400, {"response_id": 0, "duration_ms": 1000})
    log.emit(EventType.RUN_END, "harness", 3000, {"outcome": "FAILURE", "pts": 0})
    return log


def test_record_from_session_has_published_keys_first_and_explains_the_failure(tmp_path):
    session = FinishedSession(run_id="abc123", task_id="toy", grade=_failed_grade(), events=_events(),
                              adapter_meta={"model_id": "oracle", "model": "oracle-1"}, agent_errors=["x"])
    record = record_from_session(session, rep=1, model="oracle", wall_s=2.345, sandbox={"backend": "local"})
    assert record.latency["response_start_latency_ms"]["samples"] == [400]
    assert record.latency["tool_calls"] == 1 and record.latency["retrieval_calls"] == 1
    assert record.duplex["n_events"] == 0 and record.duplex["overlap_ms"] == 0
    assert record.wall_s == 2.3 and record.provider_model == "oracle-1"
    assert record.explain == [
        "GS: terminal predicate p1 failed: never called",
        "WA: claim_form.amount wrong: got 210, expected 120 (grader exact, deterministic score 0)",
    ]
    assert not record.passed

    path = record.write(tmp_path)
    stored = json.loads(path.read_text())
    assert list(stored)[: len(PUBLISHED_KEYS)] == PUBLISHED_KEYS
    assert stored["afa"] == 0.5 and stored["reason"] == "flow_done" and stored["sandbox"] == {"backend": "local"}
    assert stored["fields"][0]["got"] == 210 and stored["failed_predicates"][0]["id"] == "p1"
    assert stored["agent_errors"] == ["x"] and stored["infra_errors"] == []
    assert ResultRecord.read(tmp_path) == record


def test_a_published_result_json_loads(tmp_path):
    published = {
        "task_id": "t", "rep": 0, "model": "gpt-realtime", "run_id": "0123456789ab", "condition": "C2", "pts": 1,
        "components": {"GS": True, "PC": True, "RA": True, "WA": True}, "turns": 9, "outcome": "SUCCESS",
        "duplex": {"n_events": 0}, "latency": {}, "wall_s": 312.4, "error": None, "provider_model": "gpt-realtime-2.1",
    }
    (tmp_path / "result.json").write_text(json.dumps(published))
    record = ResultRecord.read(tmp_path)
    assert record.passed and record.provider_model == "gpt-realtime-2.1" and record.fields == []
    assert ResultRecord.read(tmp_path / "missing") is None
