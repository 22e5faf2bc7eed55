"""Which agents ``apex-voice run --model KEY`` can evaluate, and how to construct them.

Each entry names its adapter as ``"module:Class"`` and is imported only when used, so a provider's
SDK is needed only to run that provider. Credentials are checked by name before a campaign starts
(any one of ``required_env`` suffices) and never read here.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Literal

from .realtime import RealtimeAdapter

__all__ = ["MODELS", "ModelSpec", "UnknownModelError", "get_model"]


class UnknownModelError(KeyError):
    """No registered model has this key; the message lists the known ones."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class ModelSpec:
    key: str
    display_name: str
    provider: str
    #: ``"module:Class"`` of a :class:`RealtimeAdapter` constructed with no arguments.
    adapter: str
    #: Environment variables of which at least one must be set (empty: no credentials needed).
    required_env: tuple[str, ...] = ()
    clock: Literal["virtual", "realtime"] = "realtime"
    notes: str = ""

    @property
    def deterministic(self) -> bool:
        """A virtual-clock agent: every repetition of a task is identical."""
        return self.clock == "virtual"

    def missing_credentials(self) -> tuple[str, ...]:
        """The accepted variables when none of them is set, else ``()``."""
        if not self.required_env or any(os.environ.get(name, "").strip() for name in self.required_env):
            return ()
        return self.required_env

    def create_adapter(self) -> RealtimeAdapter:
        """A fresh adapter (one per session attempt); constructors do no I/O."""
        module_name, _, class_name = self.adapter.partition(":")
        adapter_class = getattr(importlib.import_module(module_name), class_name)
        return adapter_class()


MODELS: dict[str, ModelSpec] = {
    spec.key: spec
    for spec in (
        ModelSpec(
            key="oracle",
            display_name="Oracle (reference policy)",
            provider="apex-voice",
            adapter="harness.agents.oracle_voice:OracleVoiceAgent",
            clock="virtual",
            notes="speaks the task's reference policy; reaches PTS 1 on every valid task",
        ),
        ModelSpec(
            key="noop",
            display_name="No-op (silent)",
            provider="apex-voice",
            adapter="harness.agents.noop_voice:NoOpVoiceAgent",
            clock="virtual",
            notes="never speaks nor calls a tool; must score 0",
        ),
    )
}


def get_model(key: str) -> ModelSpec:
    """The registered model ``key``, or :class:`UnknownModelError` listing the known keys."""
    try:
        return MODELS[key]
    except KeyError:
        raise UnknownModelError(f"unknown model {key!r}; known models: {', '.join(MODELS)}") from None
