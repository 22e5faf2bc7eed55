"""Sandbox failures, split by whose fault they are.

A sandbox that cannot start or stops answering is an infrastructure failure: the session is
retried, never graded as the model's failure. A control request the server refuses (4xx) is a
harness bug and must surface loudly instead of being retried.
"""

from __future__ import annotations

__all__ = ["AgentStartFailed", "AgentImageError", "ControlRequestError", "SandboxUnavailableError", "UnknownBackendError"]


class UnknownBackendError(ValueError):
    """No sandbox backend has the name asked for (a usage error: the message lists the known ones)."""


class SandboxUnavailableError(RuntimeError):
    """The sandbox could not be started or stopped answering (retryable, never a model failure)."""


class ControlRequestError(RuntimeError):
    """The control API answered but refused the request (wrong token, bad body, unknown call)."""

    def __init__(self, route: str, status: int, message: str) -> None:
        super().__init__(f"control API {route} answered HTTP {status}: {message}")
        self.route = route
        self.status = status


class AgentImageError(SandboxUnavailableError):
    """An agent container's image is not on the engine and cannot be built here: no session of
    this model can start, so the campaign stops and names the image."""


class AgentStartFailed(SandboxUnavailableError):
    """An agent's container or adapter host process started but exited, or never listened, before
    its session could open.

    The container (or the hosted adapter) *is* the agent under test, so a session that runs it
    scores this as the agent's own failure (``exited``); a subclass of :class:`SandboxUnavailableError` only so that code
    which does not look closer still sees a container that did not come up.
    """
