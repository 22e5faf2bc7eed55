"""Who is to blame when a session fails: a small taxonomy, decided by where the failure came from.

Blame is by origin, never by an exception's type alone nor by its message. The code that called
something outside itself (a provider, the sandbox, the judge, the agent under test) knows what
failed, so it raises one of these at the point of the call; :mod:`.origin_table` says what each
means where it came from. They live at the bottom of the harness, importing nothing of ours but
:mod:`.codes`, because the adapters, the judge, the events and the session all raise or carry them:

- :class:`AgentFailure`: whatever crossed the agent boundary (an exception of any class from an
  adapter, a malformed event, a close, an exit, a hang, a conversation its model could not go on
  with), its ``kind`` a :data:`~.codes.AgentFailureKind`. The session ends, is graded on the state
  reached and is scored; it never reaches the campaign.
- :class:`SandboxFailure`, :class:`NodeLostError` and other :class:`SessionInfraError`: what the
  harness runs failed (the sandbox's transport, its server process or container, the Ray cluster's
  node or worker). Retried when ``transient``; when retries run out the cell is left empty, never
  scored.
- :class:`ProviderTransient`: a provider adapter saw its provider drop the socket, time out,
  answer 5xx or rate-limit us. Retried (after ``retry_after_s`` when the provider said so); never
  scored.
- :class:`ProviderError`: the provider refused us (bad key, bad request). Nothing will succeed, so
  the campaign stops at once and says why.
- :class:`JudgeUnavailable`: the semantic judge did not answer. The field verdict is left
  ``pending`` for a later ``regrade``; it is never graded FAIL against the model.
- :class:`HarnessBug`, and anything no caller converted (a bare ``TimeoutError`` from our own
  ``wait_for``, a ``KeyError``, a refused control request, a fault in one of our tool handlers):
  the harness's own bug. The cell fails loudly with its traceback, never retried as
  infrastructure and never scored.
"""

from __future__ import annotations

from typing import Literal

from .codes import AgentFailureKind

__all__ = [
    "AgentFailure",
    "HarnessBug",
    "JudgeUnavailable",
    "NodeLostError",
    "ProviderError",
    "ProviderErrorKind",
    "ProviderTransient",
    "SandboxFailure",
    "SessionInfraError",
]

#: Why a provider refused the harness (``AdapterError.kind`` values that stop the campaign).
ProviderErrorKind = Literal["auth", "bad_request"]


class SessionInfraError(RuntimeError):
    """The session could not run or finish for reasons outside the agent under test."""

    def __init__(self, message: str, *, transient: bool = True) -> None:
        super().__init__(message)
        self.transient = transient


class SandboxFailure(SessionInfraError):
    """The sandbox (container, MCP server, control API, harness disk) failed the session."""


class NodeLostError(SessionInfraError):
    """The Ray cluster lost a cell (its node or worker died mid-session): infrastructure, retried."""


class ProviderTransient(SessionInfraError):
    """The agent's provider failed in a way that retrying may fix (socket drop, 5xx, rate limit)."""

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message, transient=True)
        self.retry_after_s = retry_after_s


class ProviderError(RuntimeError):
    """The provider refused the harness itself (``auth``, ``bad_request``): stop the campaign."""

    def __init__(self, message: str, *, kind: ProviderErrorKind = "bad_request") -> None:
        super().__init__(message)
        self.kind: ProviderErrorKind = kind


class AgentFailure(Exception):
    """The agent under test failed at its boundary: the session ends here, is graded and scored.

    Never infrastructure and never a harness bug: the agent is the thing being measured, so
    whatever it does (raise, send garbage, flood, close, exit, hang) is its own result. Raised
    inside the session only; the session catches it, records it in ``agent_failure`` and grades
    the environment as the agent left it.
    """

    def __init__(self, kind: AgentFailureKind, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind: AgentFailureKind = kind
        self.detail = detail


class HarnessBug(RuntimeError):
    """The harness's own code failed (an adapter of ours, a tool handler of ours): fail loudly.

    Raised by in-tree code only, so the agent boundary can tell our bug from the agent's failure:
    it lets this through from the harness's own adapters and treats it like any other exception
    (the agent's failure) from out-of-tree adapter code, which could raise it to dodge a score.
    """


class JudgeUnavailable(RuntimeError):
    """The semantic judge's endpoint is down, failing or timing out: the verdict stays pending."""

