"""Cross-file checks that make a package unloadable (published loader checks + flow + observer).

These are the inconsistencies that would crash or silently break a session, so they stop loading;
authoring mistakes that still leave a runnable package are reported by :mod:`.lint` instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from harness.field_graders import field_graders
from mcp_servers.public_models import BUILTIN_HANDLERS

from .bundle import TaskBundle
from .errors import TaskLoadError
from .package_paths import OBSERVER_FILE, gold_file

__all__ = ["check_consistency"]

def check_consistency(bundle: TaskBundle) -> None:
    """Raise :class:`TaskLoadError` for the first failed check, in the order of ``_CHECKS``."""
    for check in _CHECKS:
        for error in check(bundle):
            raise error


def _task_id_matches(bundle: TaskBundle) -> Iterator[TaskLoadError]:
    if bundle.taxonomy.task_id != bundle.task.id:
        yield TaskLoadError(
            bundle.task_id, bundle.task.taxonomy, f"does not match task.yaml id '{bundle.task.id}'",
            field="task_id", value=bundle.taxonomy.task_id,
        )


def _handlers_known(bundle: TaskBundle) -> Iterator[TaskLoadError]:
    for index, tool in enumerate(bundle.tools.tools):
        if tool.handler is not None and tool.handler not in BUILTIN_HANDLERS:
            yield TaskLoadError(
                bundle.task_id, bundle.task.tools, "not one of " + ", ".join(BUILTIN_HANDLERS),
                field=f"tools[{index}].handler", value=tool.handler,
            )


def _commits_name_their_action(bundle: TaskBundle) -> Iterator[TaskLoadError]:
    """A ``handler: commit`` tool says which approval it needs (``commit_action_type``).

    Without it the published handler took the action from the agent's own ``action_type`` argument,
    so the agent named the rule the commit guard applied (issue 33, break 7): the task decides.
    """
    for index, tool in enumerate(bundle.tools.tools):
        if tool.handler == "commit" and not tool.commit_action_type:
            yield TaskLoadError(
                bundle.task_id, bundle.task.tools,
                f"tool {tool.name!r} has handler 'commit' but no commit_action_type: name the action its "
                "approval covers (e.g. the tool's own name), or the agent would name it",
                field=f"tools[{index}].commit_action_type",
            )


def _graders_known(bundle: TaskBundle) -> Iterator[TaskLoadError]:
    """Every grader a package names (gold expectations, workspace schemas) is registered."""
    known = field_graders()
    choices = "not one of " + ", ".join(known)
    for index, expectation in enumerate(bundle.gold.artifact_expectations):
        for number, spec in enumerate(expectation.fields):
            if spec.grader not in known:
                yield TaskLoadError(bundle.task_id, gold_file(bundle.task), choices,
                                    field=f"artifact_expectations[{index}].fields[{number}].grader", value=spec.grader)
    for artifact_id, artifact in bundle.workspace.artifacts.items():
        for number, field_spec in enumerate(artifact.schema_.fields if artifact.schema_ else []):
            if field_spec.grader not in known:
                yield TaskLoadError(bundle.task_id, bundle.task.initial_workspace, choices,
                                    field=f"artifacts.{artifact_id}.schema.fields[{number}].grader",
                                    value=field_spec.grader)


def _tool_load_allows_tools(bundle: TaskBundle) -> Iterator[TaskLoadError]:
    if bundle.task.tool_load == "none" and bundle.tools.tools:
        yield TaskLoadError(
            bundle.task_id, "task.yaml", f"but {bundle.task.tools} defines {len(bundle.tools.tools)} tool(s)",
            field="tool_load", value="none",
        )


def _gold_artifacts_exist(bundle: TaskBundle) -> Iterator[TaskLoadError]:
    known = bundle.workspace.artifacts
    for index, expectation in enumerate(bundle.gold.artifact_expectations):
        if expectation.artifact_id not in known:
            yield TaskLoadError(
                bundle.task_id, gold_file(bundle.task),
                f"not an artifact of {bundle.task.initial_workspace} (known: {', '.join(known) or 'none'})",
                field=f"artifact_expectations[{index}].artifact_id", value=expectation.artifact_id,
            )


def _flow_states_exist(bundle: TaskBundle) -> Iterator[TaskLoadError]:
    flow, rel = bundle.flow, bundle.task.user_program
    states = ", ".join(flow.states) or "none"
    if flow.start not in flow.states:
        yield TaskLoadError(
            bundle.task_id, rel, f"start state is not defined (states: {states})", field="start", value=flow.start
        )
    for name, state in flow.states.items():
        for index, transition in enumerate(state.transitions):
            if transition.next not in flow.states:
                yield TaskLoadError(
                    bundle.task_id, rel, f"no such state (states: {states})",
                    field=f"states.{name}.transitions[{index}].next", value=transition.next,
                )


def _observer_patterns_compile(bundle: TaskBundle) -> Iterator[TaskLoadError]:
    for index, pattern in enumerate(bundle.observer.patterns):
        try:
            re.compile(pattern.pattern, re.IGNORECASE)
        except re.error as exc:
            yield TaskLoadError(
                bundle.task_id, OBSERVER_FILE, f"invalid regular expression: {exc}",
                field=f"patterns[{index}].pattern", value=pattern.pattern,
            )


_CHECKS: tuple[Callable[[TaskBundle], Iterator[TaskLoadError]], ...] = (
    _task_id_matches,
    _handlers_known,
    _commits_name_their_action,
    _graders_known,
    _tool_load_allows_tools,
    _gold_artifacts_exist,
    _flow_states_exist,
    _observer_patterns_compile,
)
