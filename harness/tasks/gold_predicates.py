"""Every predicate of a gold spec with its field path, for checks that treat them uniformly."""

from __future__ import annotations

from collections.abc import Iterator

from .models import GoldSpec, PredicateSpec

__all__ = ["iter_predicates"]


def iter_predicates(gold: GoldSpec) -> Iterator[tuple[str, PredicateSpec]]:
    """``(field path, predicate)`` for GS, alternates, RA, evidence, forbidden and critical gates."""
    for name in ("terminal_state", "required_actions", "required_evidence", "forbidden"):
        for index, predicate in enumerate(getattr(gold, name)):
            yield f"{name}[{index}]", predicate
    for outer, alternative in enumerate(gold.alternate_terminal_states):
        for index, predicate in enumerate(alternative):
            yield f"alternate_terminal_states[{outer}][{index}]", predicate
    for index, gate in enumerate(gold.critical_gates):
        yield f"critical_gates[{index}].predicate", gate.predicate
