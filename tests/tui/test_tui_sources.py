"""Following files and campaign state: partial lines, rewritten files, settled cells."""

from __future__ import annotations

from harness.events import EventType as E
from tests.event_builders import events
from tui.sources.file_tail import FileTail
from tui.state import CampaignView, CellResult, rows, with_event, with_result
from tui.state.updates import CampaignSeen, SessionRestarted, apply_update


def test_a_tail_returns_each_complete_line_once(tmp_path):
    path = tmp_path / "events.jsonl"
    tail = FileTail(path)
    assert tail.read_lines() == []  # not there yet
    path.write_bytes(b'{"a": 1}\n{"b"')
    assert tail.read_lines() == [b'{"a": 1}']
    assert tail.read_lines() == []
    with path.open("ab") as f:
        f.write(b': 2}\n\n{"c": 3}\n')
    assert tail.read_lines() == [b'{"b": 2}', b'{"c": 3}']


def test_a_rewritten_file_is_read_again_from_the_start(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": 2}\n')
    tail = FileTail(path)
    tail.read_lines()
    path.write_bytes(b'{"z": 0}\n')
    assert tail.read_lines() == [b'{"z": 0}']


def test_cells_are_queued_then_running_then_settled_in_coverage_first_order():
    campaign = apply_update(CampaignView(), CampaignSeen("oracle", (("b", 0), ("a", 0), ("a", 1))))
    assert [r.key for r in rows(campaign)] == [("a", 0), ("b", 0), ("a", 1)]
    assert {r.status for r in rows(campaign)} == {"queued"}
    (start,) = events((E.RUN_START, 0, {"task_id": "a", "model_id": "oracle", "condition": "C2", "schema_version": "2"}))
    campaign = with_event(campaign, ("a", 0), start)
    assert rows(campaign)[0].status == "running"
    record = {"pts": 1, "afa": 1.0, "components": {"GS": True, "PC": True, "RA": True, "WA": True}, "outcome": "SUCCESS"}
    campaign = with_result(campaign, ("a", 0), CellResult.from_record(record))
    row = rows(campaign)[0]
    assert (row.status, row.afa, row.gates.WA) == ("passed", 1.0, True)
    campaign = with_result(campaign, ("b", 0), CellResult.unscored_cell("infrastructure", "1 attempt(s): docker gone"))
    assert rows(campaign)[1].status == "infra error"
    assert campaign.session(("b", 0)).verdict.detail == "1 attempt(s): docker gone"


def test_an_error_row_is_a_failed_cell_that_says_why():
    result = CellResult.from_record({"pts": 0, "error": "KeyError: 'x'", "explain": []})
    assert (result.status, result.outcome, result.explain) == ("failed", "ERROR", ("KeyError: 'x'",))


def test_a_restarted_session_drops_the_failed_attempts_view_and_result():
    (start,) = events((E.RUN_START, 0, {"task_id": "a", "model_id": "m", "condition": "C2", "schema_version": "2"}))
    campaign = with_result(with_event(CampaignView(model="m"), ("a", 0), start), ("a", 0), CellResult("failed"))
    campaign = apply_update(campaign, SessionRestarted(("a", 0), "r2"))
    assert campaign.session(("a", 0)).status == "queued" and campaign.session(("a", 0)).run_id == "r2"


def test_a_result_brings_the_graded_evidence_and_the_models_registry_name():
    record = {"model": "native-oracle", "pts": 0, "outcome": "FAILURE", "explain": ["GS: x"],
              "failed_predicates": [{"id": "p", "kind": "tool_called", "gate": "RA", "reason": "never", "role": "required"},
                                    {"id": "torn"}],  # an entry that does not parse is left out
              "fields": [{"artifact": "a", "field": "f", "expected": 1, "got": 2, "grader": "exact", "tier": "deterministic",
                          "score": 0.0, "present": True}],
              "agent_failure": {"kind": "exited", "detail": "code 137"}}
    result = CellResult.from_record(record)
    assert [p.id for p in result.predicates] == ["p"] and result.fields[0].failed and result.fields[0].key == "a.f"
    campaign = with_result(CampaignView(model="native-oracle"), ("t", 0), result)
    view = campaign.session(("t", 0))
    assert view.model_id == "native-oracle" and view.verdict.detail == "agent failure (exited): code 137"
    assert view.verdict.predicates == result.predicates and view.verdict.fields == result.fields
