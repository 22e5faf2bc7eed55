"""The environment's copies of its records: equal to a deep copy, sharing nothing mutable."""

from __future__ import annotations

import copy
import decimal

from mcp_servers.record_copy import copy_json, copy_record, copy_records
from mcp_servers.records import ToolCallRecord
from mcp_servers.state_store import StateStore


def _record() -> ToolCallRecord:
    return ToolCallRecord(
        index=3,
        name="update_artifact",
        args={"fields": {"a": [1, {"b": None}]}, "n": 2.5},
        ok=True,
        result={"ok": True, "items": [["x"], ("t", [1])]},
        mutations=["claim.a"],
        approval_request={"action_type": "submit", "target_id": "claim"},
    )


def test_a_copied_record_equals_the_deep_copy_and_shares_no_container() -> None:
    record = _record()
    copied = copy_record(record)
    assert copied == record.model_copy(deep=True)
    assert copied.model_dump_json() == record.model_dump_json()
    assert copied.model_fields_set == record.model_fields_set
    copied.args["fields"]["a"][1]["b"] = "changed"
    copied.result["items"][1][1].append(2)  # a list inside a tuple: copied by the fallback
    copied.mutations.append("claim.b")
    copied.approval_request["target_id"] = "other"
    assert record == _record()


def test_values_that_are_not_json_fall_back_to_deepcopy() -> None:
    value = {"d": decimal.Decimal("1.5"), "s": {1, 2}, "nested": [_record()]}
    copied = copy_json(value)
    assert copied == copy.deepcopy(value)
    copied["s"].add(3)
    copied["nested"][0].args["n"] = 0
    assert value["s"] == {1, 2} and value["nested"][0].args["n"] == 2.5


def test_the_store_hands_out_copies_its_log_never_sees_changed() -> None:
    store = StateStore({"claim": {"status": "open", "parts": [{"id": 1}]}})
    store.set("claim.parts", [{"id": 2}], media_time_ms=10, cause="tool")
    history = store.history
    history[0].old.append({"id": 99})
    history[0].new[0]["id"] = 99
    state = store.as_dict()
    state["claim"]["parts"][0]["id"] = 99
    fresh = store.history[0]
    assert fresh.old == [{"id": 1}] and fresh.new == [{"id": 2}]
    assert store.as_dict() == {"claim": {"status": "open", "parts": [{"id": 2}]}}
    assert copy_records(store.records_since(0)) == store.history
