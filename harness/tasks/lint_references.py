"""Names that must resolve: tools used by the oracle policy and by gold predicates, predicate kinds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from .bundle import TaskBundle
from .gold_predicates import iter_predicates
from .lint_issue import LintIssue
from .package_paths import POLICY_FILE, gold_file

__all__ = ["PREDICATE_KINDS", "lint_references"]

#: The predicate kinds the grader evaluates (reference §3.2); anything else aborts grading there.
PREDICATE_KINDS = frozenset({
    "state_equals", "state_in", "artifact_field_equals", "artifact_field_present", "artifact_not_stale",
    "artifact_lifecycle_at_least", "tool_called", "tool_called_with", "kb_gold_retrieved",
    "commit_authorized", "no_unauthorized_commit", "no_commit_after_revocation", "agent_act_observed",
    "consistency",
})
_TOOL_PREDICATES = {"tool_called", "tool_called_with"}
_COMMIT_PREDICATES = {"commit_authorized", "no_unauthorized_commit", "no_commit_after_revocation"}


def lint_references(bundle: TaskBundle) -> Iterator[LintIssue]:
    yield from _duplicate_tools(bundle)
    yield from _policy_tools(bundle)
    yield from _predicates(bundle)


def _duplicate_tools(bundle: TaskBundle) -> Iterator[LintIssue]:
    counts = Counter(t.name for t in bundle.tools.tools)
    for index, tool in enumerate(bundle.tools.tools):
        if counts[tool.name] > 1:
            yield LintIssue("error", bundle.task.tools, f"tools[{index}].name", f"{tool.name!r} is defined more than once")


def _policy_tools(bundle: TaskBundle) -> Iterator[LintIssue]:
    if bundle.policy is None:
        return
    for turn_index, turn in enumerate(bundle.policy.turns):
        for call_index, call in enumerate(turn.tool_calls):
            if bundle.tools.get(call.name) is None:
                yield LintIssue(
                    "error", POLICY_FILE, f"turns[{turn_index}].tool_calls[{call_index}].name",
                    f"{call.name!r} is not a tool of {bundle.task.tools}",
                )


def _predicates(bundle: TaskBundle) -> Iterator[LintIssue]:
    rel = gold_file(bundle.task)
    commit_actions = {t.commit_action_type for t in bundle.tools.tools if t.commit_action_type}
    for path, predicate in iter_predicates(bundle.gold):
        if predicate.kind not in PREDICATE_KINDS:
            yield LintIssue(
                "error", rel, f"{path}.kind", f"{predicate.kind!r} is not one of {', '.join(sorted(PREDICATE_KINDS))}"
            )
        tool = predicate.args.get("tool")
        if predicate.kind in _TOOL_PREDICATES and bundle.tools.get(str(tool)) is None:
            yield LintIssue("error", rel, f"{path}.args.tool", f"{tool!r} is not a tool of {bundle.task.tools}")
        action = predicate.args.get("action_type")
        if predicate.kind in _COMMIT_PREDICATES and action is not None and action not in commit_actions:
            yield LintIssue(
                "warning", rel, f"{path}.args.action_type",
                f"{action!r} is no tool's commit_action_type (known: {', '.join(sorted(commit_actions)) or 'none'})",
            )
