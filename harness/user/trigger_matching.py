"""Whether a flow/event trigger holds for an observation.

One table of per-field checks serves both the flow engine (every field) and the event engine
(a published subset), so the two can never disagree on what a field means.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any

from harness.tasks.models import Trigger

from .observation import Observation

__all__ = ["TRIGGER_FIELDS", "trigger_matches"]

_Check = Callable[[Any, Observation, Collection[str]], bool]

_CHECKS: dict[str, _Check] = {
    "agent_act": lambda want, obs, _: want in obs.new_act_keys,
    "tool_call": lambda want, obs, _: want in obs.tool_calls,
    "tool_result": lambda want, obs, _: want in obs.tool_results,
    "artifact_mutation": lambda want, obs, _: want in obs.artifact_mutations,
    "commit_attempt": lambda want, obs, _: want in obs.commit_attempts,
    "approval_request": lambda want, obs, _: want in obs.approval_requests,
    "world_predicate": lambda want, obs, _: want in obs.world_predicates,
    "external_event": lambda want, obs, _: want in obs.fired_events,
    "media_time_ms_gte": lambda want, obs, _: obs.media_time_ms >= want,
    "agent_speech_continuous_ms_gte": lambda want, obs, _: obs.agent_speech_continuous_ms >= want,
    "repetition_count_gte": lambda want, obs, _: max(obs.repetition_counts.values(), default=0) >= want,
    "fact_unrevealed": lambda want, _, revealed: want not in revealed,
}

#: Every trigger field, in model order.
TRIGGER_FIELDS: tuple[str, ...] = tuple(Trigger.model_fields)

if set(_CHECKS) != set(TRIGGER_FIELDS):  # pragma: no cover - guards model/table drift at import
    raise RuntimeError(f"trigger checks {sorted(_CHECKS)} do not cover Trigger fields {TRIGGER_FIELDS}")


def trigger_matches(
    trigger: Trigger,
    obs: Observation,
    *,
    revealed: Collection[str] = frozenset(),
    fields: Iterable[str] = TRIGGER_FIELDS,
) -> bool:
    """True when every populated field among ``fields`` holds; unset or unlisted fields are wildcards."""
    for name in fields:
        want = getattr(trigger, name)
        if want is not None and not _CHECKS[name](want, obs, revealed):
            return False
    return True
