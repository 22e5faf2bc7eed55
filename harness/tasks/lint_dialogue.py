"""Consistency of the simulated user: observer ↔ flow ↔ events ↔ user facts ↔ gold act keys.

The published loader checks none of this, so a typo in an act key silently makes a flow branch,
an event or a gold predicate unreachable; here each such reference is checked against what exists.
"""

from __future__ import annotations

from collections.abc import Iterator

from .bundle import TaskBundle
from .gold_predicates import iter_predicates
from .lint_issue import LintIssue
from .models import Action, Trigger
from .observable_acts import ObservableActs
from .package_paths import OBSERVER_FILE, gold_file

__all__ = ["lint_dialogue"]

_UNOBSERVABLE = "can never be observed (no observer pattern or tool act produces it)"


def lint_dialogue(bundle: TaskBundle) -> Iterator[LintIssue]:
    acts = ObservableActs.from_observer(bundle.observer, {t.name for t in bundle.tools.tools})
    yield from _tool_act_map(bundle)
    yield from _flow(bundle, acts)
    yield from _events(bundle, acts)
    yield from _user_facts(bundle, acts)
    yield from _gold_acts(bundle, acts)


def _tool_act_map(bundle: TaskBundle) -> Iterator[LintIssue]:
    tools = {t.name for t in bundle.tools.tools}
    for tool in bundle.observer.tool_act_map:
        if tool not in tools:
            yield LintIssue("error", OBSERVER_FILE, f"tool_act_map.{tool}", f"{tool!r} is not a tool of {bundle.task.tools}")


def _flow(bundle: TaskBundle, acts: ObservableActs) -> Iterator[LintIssue]:
    rel = bundle.task.user_program
    for name, state in bundle.flow.states.items():
        if state.on_enter is not None:
            yield from _action(bundle, rel, f"states.{name}.on_enter", state.on_enter)
        for index, transition in enumerate(state.transitions):
            path = f"states.{name}.transitions[{index}]"
            yield from _trigger(bundle, acts, rel, f"{path}.when", transition.when)
            if transition.do is not None:
                yield from _action(bundle, rel, f"{path}.do", transition.do)


def _events(bundle: TaskBundle, acts: ObservableActs) -> Iterator[LintIssue]:
    rel = bundle.task.event_program
    facts = {f.id for f in bundle.user_state.facts}
    for index, event in enumerate(bundle.events.events):
        yield from _trigger(bundle, acts, rel, f"events[{index}].trigger", event.trigger)
        for fact in event.fact_updates:
            if fact not in facts:
                yield _unknown_fact(bundle, rel, f"events[{index}].fact_updates", fact)


def _trigger(bundle: TaskBundle, acts: ObservableActs, rel: str, path: str, trigger: Trigger) -> Iterator[LintIssue]:
    if trigger.agent_act is not None and not acts.can_produce(trigger.agent_act):
        yield LintIssue("error", rel, f"{path}.agent_act", f"{trigger.agent_act!r} {_UNOBSERVABLE}")
    if trigger.external_event is not None and trigger.external_event not in _event_ids(bundle):
        yield _unknown_event(bundle, rel, f"{path}.external_event", trigger.external_event)
    if trigger.tool_call is not None and bundle.tools.get(trigger.tool_call) is None:
        yield LintIssue(
            "error", rel, f"{path}.tool_call", f"{trigger.tool_call!r} is not a tool of {bundle.task.tools}"
        )
    commit_actions = {t.commit_action_type for t in bundle.tools.tools if t.commit_action_type}
    for key in ("approval_request", "commit_attempt"):
        action = getattr(trigger, key)
        if action is not None and action not in commit_actions:
            yield LintIssue(
                "error", rel, f"{path}.{key}",
                f"{action!r} is no tool's commit_action_type (known: {', '.join(sorted(commit_actions)) or 'none'})",
            )
    if trigger.fact_unrevealed is not None and trigger.fact_unrevealed not in _fact_ids(bundle):
        yield _unknown_fact(bundle, rel, f"{path}.fact_unrevealed", trigger.fact_unrevealed)


def _action(bundle: TaskBundle, rel: str, path: str, action: Action) -> Iterator[LintIssue]:
    for index, fact in enumerate(action.facts):
        if fact not in _fact_ids(bundle):
            yield _unknown_fact(bundle, rel, f"{path}.facts[{index}]", fact)
    if action.event_id is not None and action.event_id not in _event_ids(bundle):
        yield _unknown_event(bundle, rel, f"{path}.event_id", action.event_id)


def _user_facts(bundle: TaskBundle, acts: ObservableActs) -> Iterator[LintIssue]:
    rel = bundle.task.user_state
    facts = _fact_ids(bundle)
    for index, fact in enumerate(bundle.user_state.facts):
        path = f"facts[{index}]"
        if fact.supersedes is not None and fact.supersedes not in facts:
            yield _unknown_fact(bundle, rel, f"{path}.supersedes", fact.supersedes)
        for number, act_key in enumerate(fact.reveal.agent_acts):
            if not acts.can_produce(act_key):
                yield LintIssue("warning", rel, f"{path}.reveal.agent_acts[{number}]", f"{act_key!r} {_UNOBSERVABLE}")
        for number, event in enumerate(fact.reveal.events):
            if event not in _event_ids(bundle):
                yield _unknown_event(bundle, rel, f"{path}.reveal.events[{number}]", event)
        for number, state in enumerate(fact.reveal.on_state):
            if state not in bundle.flow.states:
                yield LintIssue(
                    "error", rel, f"{path}.reveal.on_state[{number}]",
                    f"{state!r} is not a state of {bundle.task.user_program}",
                )


def _gold_acts(bundle: TaskBundle, acts: ObservableActs) -> Iterator[LintIssue]:
    for path, predicate in iter_predicates(bundle.gold):
        act_key = predicate.args.get("act_key")
        if predicate.kind == "agent_act_observed" and not acts.can_produce(str(act_key)):
            yield LintIssue("error", gold_file(bundle.task), f"{path}.args.act_key", f"{act_key!r} {_UNOBSERVABLE}")


def _fact_ids(bundle: TaskBundle) -> set[str]:
    return {f.id for f in bundle.user_state.facts}


def _event_ids(bundle: TaskBundle) -> set[str]:
    return {e.id for e in bundle.events.events}


def _unknown_fact(bundle: TaskBundle, rel: str, path: str, fact: str) -> LintIssue:
    return LintIssue("error", rel, path, f"{fact!r} is not a fact of {bundle.task.user_state}")


def _unknown_event(bundle: TaskBundle, rel: str, path: str, event: str) -> LintIssue:
    return LintIssue("error", rel, path, f"{event!r} is not an event of {bundle.task.event_program}")
