"""The simulated user as the runners see it: one object per session wiring the user parts together.

Hidden state (facts, flow, events, wording) lives here and never reaches the agent; the runner
feeds in what the agent said and did, and gets back plans, utterances and fired events.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import TYPE_CHECKING, Any

from .act_observer import ActObserver, ObservedAct
from .event_engine import EventEngine, FiredEvent
from .flow_engine import Observation, UserFlowEngine, UserPlan
from .realization import Utterance, select_variant
from .realization_compiler import compile_bank
from .recovery import RecoveryDecision, RecoveryMove, RecoveryPlanner
from .stable_hash import scenario_id
from .user_state_manager import UserStateManager

if TYPE_CHECKING:
    from harness.tasks.bundle import TaskBundle

__all__ = ["SimulatedUser"]


class SimulatedUser:
    """Facade over the user state, flow engine, act observer, event engine, bank and recovery."""

    def __init__(self, bundle: TaskBundle, *, condition: str, seed: int = 1, event_seed: int = 1) -> None:
        condition = condition.value if isinstance(condition, Enum) else str(condition)
        self.condition = condition
        self.seed = seed
        self.scenario_id = scenario_id(bundle.task.id, bundle.task.version, condition)
        self.users = UserStateManager(bundle.user_state)
        self.flow = UserFlowEngine(bundle.flow, self.users)
        self.observer = ActObserver(bundle.observer)
        self.events = EventEngine(bundle.events)
        self.recovery = RecoveryPlanner.for_condition(bundle.flow, condition, event_seed=event_seed)
        # A package without a bank hears compiled template wording rather than fallbacks (§4.11).
        self._bank = bundle.realization_bank or compile_bank(bundle.flow, bundle.user_state)

    @property
    def done(self) -> bool:
        return self.flow.done

    @property
    def observed_act_keys(self) -> set[str]:
        return self.flow.observed_act_keys

    @property
    def leakage_violations(self) -> list[str]:
        return self.flow.leakage_violations

    @property
    def repetition_counts(self) -> dict[str, int]:
        return self.observer.repetition_counts

    def next_plans(self, obs: Observation) -> list[UserPlan]:
        """The plans of one user beat (drain loop)."""
        return self.flow.drain(obs)

    def realize(self, plan: UserPlan) -> Utterance | None:
        """The frozen wording of a plan; ``None`` means the bank lacks it (simulator fallback)."""
        return self._realize_id(plan.id)

    def speakable_texts(self) -> list[str]:
        """Every utterance this user may speak in the session (the wording chosen for each plan,
        plus the recovery lines), so speech can be prepared before the session starts."""
        chosen = [u.text for plan_id in self._bank if (u := self._realize_id(plan_id)) is not None]
        return [*dict.fromkeys([*chosen, *self.recovery.runner_lines])]

    def hear_agent_text(self, text: str) -> list[ObservedAct]:
        return self._heard(self.observer.observe_text(text))

    def hear_classified(self, labels: Iterable[str]) -> list[ObservedAct]:
        """Acts an LLM classifier found in the agent's words (labels ``ACT:field`` or ``ACT``)."""
        return self._heard(self.observer.observe_labels(labels))

    def classifier_candidates(self) -> list[str]:
        """Every act the classifier may label: pattern acts ∪ flow ``agent_act`` triggers (sorted)."""
        return sorted({*self.observer.pattern_act_keys, *self.flow.agent_act_triggers})

    def acts_in(self, text: str) -> list[ObservedAct]:
        """Acts in a partial transcript, not yet counted as heard (see :meth:`hear_agent_text`)."""
        return self.observer.match_text(text)

    def see_tool_call(self, tool: str, result: Any) -> list[ObservedAct]:
        return self._heard(self.observer.observe_tool(tool, result))

    def fire_events(
        self,
        *,
        act_keys: Iterable[str],
        tool_calls: Iterable[str],
        artifact_mutations: Iterable[str],
        commit_attempts: Iterable[str],
        media_time_ms: int,
        time_triggers: bool,
    ) -> list[FiredEvent]:
        """Fire matching events and record their fact corrections in the user state.

        Environment effects (stale fields, world updates, approval revocation) are the runner's.
        """
        fired = self.events.fire(
            act_keys=act_keys,
            tool_calls=tool_calls,
            artifact_mutations=artifact_mutations,
            commit_attempts=commit_attempts,
            media_time_ms=media_time_ms,
            time_triggers=time_triggers,
        )
        for event in fired:
            self.users.context.fired_events.add(event.event_id)
            for fact_id, value in event.fact_updates.items():
                self.users.add_event_fact(fact_id, event.event_id, value)
        return fired

    def recover(self, last_act_keys: Iterable[str]) -> RecoveryDecision:
        """§4.9 move for a beat that drained no plan; a re-stated answer marks its facts revealed."""
        decision = self.recovery.decide(
            last_act_keys=last_act_keys, revealed=self.users.revealed, realize=self._realize_id
        )
        if decision.move is RecoveryMove.RESTATE and decision.answer is not None:
            self.users.mark_revealed(decision.answer.fact_ids)
        return decision

    def _heard(self, acts: list[ObservedAct]) -> list[ObservedAct]:
        # Count acts as observed at once: the agent's last beat before hanging up never reaches a
        # flow step, yet grading's ``agent_act_observed`` predicates must see it.
        self.users.context.observed_acts.update(a.key for a in acts)
        return acts

    def _realize_id(self, plan_id: str) -> Utterance | None:
        return select_variant(self._bank, plan_id, self.scenario_id, self.seed)
