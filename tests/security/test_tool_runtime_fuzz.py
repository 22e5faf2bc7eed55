"""Property-based fuzzing of the tool runtime, in process: whatever name and arguments an agent
sends (lone surrogates, non-JSON values, huge and deeply nested payloads, real tool names with
wrong or half-right arguments), every call ends as a logged ``ToolCallRecord`` and never raises.

Sequences of calls run on one runtime, so approval requests, writes and commits meet each other in
every order. The CI budget is small and fixed; ``benchmarks/bench_fuzz.py`` runs it longer and
reports calls per second.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.tasks.bundle import TaskBundle
from harness.tasks.loader import load_task
from mcp_servers.argument_validation import MAX_ARGS_BYTES
from mcp_servers.commit_guard import CommitGuard
from mcp_servers.knowledge_base import KnowledgeBase
from mcp_servers.records import ToolCallRecord
from mcp_servers.state_store import StateStore
from mcp_servers.tool_handlers import EnvironmentParts
from mcp_servers.tool_runtime import ToolRuntime
from mcp_servers.workspace import Workspace
from tests.conftest import DEMO_DATA
from tests.security.test_loader_fuzz import no_hang

CI_SEQUENCES = 100
SURROGATES = ["\ud800", "\udfff", "a\udc80b", "\ud83d"]


@cache
def demo_bundles() -> tuple[TaskBundle, ...]:
    return tuple(load_task(path) for path in sorted((DEMO_DATA / "tasks").iterdir()))


def runtime_for(bundle: TaskBundle) -> ToolRuntime:
    public = bundle.public_bundle()
    parts = EnvironmentParts(
        state=StateStore(public.initial_state),
        workspace=Workspace(public.workspace),
        guard=CommitGuard(public.approval_required_for),
        knowledge=KnowledgeBase(public.documents),
    )
    return ToolRuntime(public.tools, parts, wall_clock_ns=lambda: 0)


def _deep(depth: int) -> Any:
    value: Any = "bottom"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


any_text = st.text(alphabet=st.characters(exclude_categories=()), max_size=30) | st.sampled_from(SURROGATES)
hostile_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=10**4300 // 10**4200),
    st.floats(), any_text, st.binary(max_size=8),
    st.sampled_from([float("nan"), float("inf"), "x" * (MAX_ARGS_BYTES + 1), {1, 2}, ("t",), object()]),
    st.sampled_from([8, 40, 500, 3000]).map(_deep),
)  # fmt: skip


def _calls(bundle: TaskBundle) -> st.SearchStrategy[tuple[TaskBundle, list[tuple[Any, Any]]]]:
    """Calls named after the task's tools, with arguments built from the tools' own parameter names
    and the task's own ids, mixed with garbage of every kind."""
    names = [tool.name for tool in bundle.tools.tools]
    keys = sorted({param.name for tool in bundle.tools.tools for param in tool.params} | {"fields", "artifact_id"})
    known = sorted(
        {*bundle.workspace.artifacts, *names, *bundle.task.autonomy.approval_required_for, "COMMITTED", "DRAFT"}
    )
    key = st.sampled_from(keys) | any_text
    value = st.recursive(
        hostile_scalars | st.sampled_from(known),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(key, inner, max_size=4),
        max_leaves=10,
    )
    arguments = st.dictionaries(key | st.integers(), value, max_size=5) | value
    name = st.sampled_from(names) | any_text | st.sampled_from([None, 7, ["x"], b"\xff", "x" * 5000])
    return st.tuples(st.just(bundle), st.lists(st.tuples(name, arguments), min_size=1, max_size=8))


def call_sequences(bundles: tuple[TaskBundle, ...]) -> st.SearchStrategy[tuple[TaskBundle, list[tuple[Any, Any]]]]:
    """One task's runtime and up to eight calls on it."""
    return st.one_of([_calls(bundle) for bundle in bundles])


def check_calls(bundle: TaskBundle, calls: list[tuple[Any, Any]]) -> list[ToolCallRecord]:
    """Run the calls on a fresh runtime; each must give the next logged record, nothing else."""
    runtime = runtime_for(bundle)
    records = []
    with no_hang():
        for index, (name, args) in enumerate(calls):
            record = runtime.call(name, args, media_time_ms=index * 1000)
            assert isinstance(record, ToolCallRecord) and record.index == index
            assert record.ok or record.error, record
            records.append(record)
    assert [r.index for r in runtime.call_log] == list(range(len(calls)))
    return records


@settings(max_examples=CI_SEQUENCES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sequence=call_sequences(demo_bundles()))
def test_any_call_sequence_gives_records_never_exceptions(sequence):
    check_calls(*sequence)


def test_surrogates_huge_and_deep_payloads_are_error_records():
    bundle = demo_bundles()[0]
    name = bundle.tools.tools[0].name
    hostile = [
        ("\ud800", {}),
        (name, {"\ud800": "\udfff"}),
        (name, {"fields": "x" * (MAX_ARGS_BYTES + 1)}),
        (name, _deep(100_000)),
        (name, {"fields": {"a": float("nan")}}),
    ]
    records = check_calls(bundle, hostile)
    assert not any(record.ok for record in records)
    assert "unknown tool" in (records[0].error or "")
    assert "limit is" in (records[2].error or "")
