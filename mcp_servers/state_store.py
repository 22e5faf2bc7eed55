"""World state: a nested JSON object addressed by dot paths, with a history of every change.

Predicates (``state_equals``), ``get_entity``, commit effects and events all address the state by
dot path, so the store owns the path semantics in one place.
"""

from __future__ import annotations

import copy
from typing import Any

from .record_copy import copy_json, copy_records
from .records import WorldMutationRecord

__all__ = ["StateStore"]


class StateStore:
    """Nested dict with dot-path access; every ``set`` appends a :class:`WorldMutationRecord`."""

    def __init__(self, initial_state: dict[str, Any]) -> None:
        self._state: dict[str, Any] = copy.deepcopy(initial_state)
        self._history: list[WorldMutationRecord] = []

    def get(self, path: str, default: Any = None) -> Any:
        """Value at ``path`` (a copy); a missing segment or a ``None`` value gives ``default``."""
        node: Any = self._state
        for segment in path.split("."):
            if not isinstance(node, dict) or node.get(segment) is None:
                return default
            node = node[segment]
        return copy.deepcopy(node)

    def set(self, path: str, value: Any, *, media_time_ms: int, cause: str) -> WorldMutationRecord:
        """Store a copy of ``value`` at ``path``, creating (or replacing non-dict) intermediates."""
        *parents, leaf = path.split(".")
        node = self._state
        for segment in parents:
            if not isinstance(node.get(segment), dict):
                node[segment] = {}
            node = node[segment]
        record = WorldMutationRecord(
            seq=len(self._history),
            path=path,
            old=copy_json(node.get(leaf)),
            new=copy_json(value),
            media_time_ms=media_time_ms,
            cause=cause,
        )
        node[leaf] = copy.deepcopy(value)
        self._history.append(record)
        return record

    def apply_updates(self, updates: dict[str, Any], *, media_time_ms: int, cause: str) -> None:
        for path, value in updates.items():
            self.set(path, value, media_time_ms=media_time_ms, cause=cause)

    def as_dict(self) -> dict[str, Any]:
        return copy_json(self._state)

    def records_since(self, start: int) -> list[WorldMutationRecord]:
        return copy_records(self._history[start:])

    @property
    def history(self) -> list[WorldMutationRecord]:
        return copy_records(self._history)
