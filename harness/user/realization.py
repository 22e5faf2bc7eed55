"""Frozen wording: a plan id → one variant of the realization bank, chosen reproducibly."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from harness.tasks.models import RealizationEntry

from .stable_hash import stable_choice

__all__ = ["Utterance", "select_variant"]


@dataclass(frozen=True)
class Utterance:
    plan_id: str
    variant_id: str
    text: str
    speech_act: str


def select_variant(
    bank: Mapping[str, RealizationEntry], plan_id: str, scenario: str, seed: int = 1
) -> Utterance | None:
    """The variant ``stable_choice(variants, scenario, seed, plan_id)``; ``None`` if the bank has none."""
    entry = bank.get(plan_id)
    if entry is None or not entry.variants:
        return None
    variant = stable_choice(entry.variants, scenario, seed, plan_id)
    return Utterance(
        plan_id=plan_id, variant_id=variant.variant_id, text=variant.text, speech_act=entry.speech_act
    )
