"""Which dialogue-act keys the deterministic act observer can ever produce for a task.

An act key is ``ACT:field`` or ``ACT``. Text patterns with a fixed ``field`` produce exactly
``ACT:field``; patterns with a ``(?P<field>...)`` group produce ``ACT:<anything>``; patterns with
neither produce ``ACT``. A tool in ``tool_act_map`` produces ``ACT`` or ``ACT:<id from its result>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .models import ObserverSpec

__all__ = ["ObservableActs"]


@dataclass(frozen=True)
class ObservableActs:
    exact_keys: frozenset[str] = field(default_factory=frozenset)
    any_field_acts: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def from_observer(cls, observer: ObserverSpec, tool_names: set[str]) -> ObservableActs:
        exact: set[str] = set()
        any_field: set[str] = set()
        for pattern in observer.patterns:
            if pattern.field:
                exact.add(f"{pattern.act}:{pattern.field}")
            elif "field" in re.compile(pattern.pattern).groupindex:
                any_field.add(pattern.act)
            else:
                exact.add(pattern.act)
        for tool, act in observer.tool_act_map.items():
            if tool in tool_names:
                exact.add(act)
                any_field.add(act)
        return cls(frozenset(exact), frozenset(any_field))

    def can_produce(self, act_key: str) -> bool:
        act, _, act_field = act_key.partition(":")
        return act_key in self.exact_keys or (bool(act_field) and act in self.any_field_acts)
