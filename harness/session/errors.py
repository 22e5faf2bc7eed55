"""Session failures that are the infrastructure's fault, never the model's.

A campaign retries a transient one (dropped socket, sandbox hiccup) and, when retries run out,
leaves the cell empty instead of scoring it; a non-transient one (no sandbox backend, a broken
image) is reported and also never scored against the model.
"""

from __future__ import annotations

__all__ = ["SessionInfraError"]


class SessionInfraError(RuntimeError):
    """The session could not run or finish for reasons outside the agent under test."""

    def __init__(self, message: str, *, transient: bool = True) -> None:
        super().__init__(message)
        self.transient = transient
