"""Classify a session failure once, by where it came from: whose fault it is and what the campaign does next.

Blame is by origin, never by an exception's type alone nor by words in its message. By the time a
failure reaches the campaign, each part of the harness that called something outside itself has
already said what the failure was, at the point of the call:

- a provider adapter turns its own transport failures, timeouts, closes and refusals into
  :class:`~harness.errors.ProviderTransient` / :class:`~harness.errors.ProviderError`
  (``harness/agents/providers``, ``harness/agents/chat_agent.py``);
- the sandbox's clients turn a dead server into :class:`~sandbox.errors.SandboxUnavailableError`
  and a refused control request into :class:`~sandbox.errors.ControlRequestError`;
- the judge's client turns an outage into :class:`~harness.errors.JudgeUnavailable`;
- the agent boundary turns whatever the agent under test did into a scored session, so
  :class:`~harness.errors.AgentFailure` never reaches here (if it does, that is our bug).

So a bare ``TimeoutError`` (our own ``wait_for``), ``ConnectionError``, ``httpx`` or ``websockets``
exception here was converted by nobody: it is a harness bug, like anything else not mapped, and
fails the cell loudly instead of hiding in retries. The one standard-library case kept is a full
harness disk (``ENOSPC``/``EDQUOT``), which fails every session alike and stops the campaign.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from harness.errors import (
    AgentFailure,
    HarnessBug,
    JudgeUnavailable,
    ProviderError,
    ProviderTransient,
    SessionInfraError,
)
from sandbox.errors import AgentImageError, ControlRequestError, SandboxUnavailableError

__all__ = ["Blame", "BlameKind", "classify"]

BlameKind = Literal["sandbox", "provider_transient", "provider_error", "judge_unavailable", "harness_bug"]

#: A disk that is full (or over quota) on the harness side fails every session alike.
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


@dataclass(frozen=True)
class Blame:
    """What a failure means for the campaign."""

    kind: BlameKind
    #: Retrying the session may succeed.
    transient: bool = False
    #: Nothing else will succeed either: stop the campaign now.
    stops_campaign: bool = False
    retry_after_s: float | None = None

    @property
    def infrastructure(self) -> bool:
        """Not the model's fault and not a bug of ours: the cell is left empty, never scored."""
        return self.kind in ("sandbox", "provider_transient", "judge_unavailable")


_HARNESS_BUG = Blame("harness_bug")


def _session_infra(exc: SessionInfraError) -> Blame:
    if isinstance(exc, ProviderTransient):
        return Blame("provider_transient", transient=True, retry_after_s=exc.retry_after_s)
    return Blame("sandbox", transient=exc.transient)


def _provider_error(exc: ProviderError) -> Blame:
    return Blame("provider_error", stops_campaign=True)


def _oserror(exc: OSError) -> Blame:
    if exc.errno in DISK_FULL_ERRNOS:
        return Blame("sandbox", stops_campaign=True)
    return _HARNESS_BUG


#: Our types, most specific first; the first that matches decides.
_BY_TYPE: list[tuple[type[BaseException], Callable[..., Blame]]] = [
    (HarnessBug, lambda exc: _HARNESS_BUG),
    # The agent's own failure is scored inside the session; one that escaped it is our bug.
    (AgentFailure, lambda exc: _HARNESS_BUG),
    (SessionInfraError, _session_infra),
    (ProviderError, _provider_error),
    (JudgeUnavailable, lambda exc: Blame("judge_unavailable", transient=True)),
    # No session of this model can start (its image is not on the engine): say so once and stop.
    (AgentImageError, lambda exc: Blame("sandbox", stops_campaign=True)),
    (SandboxUnavailableError, lambda exc: Blame("sandbox", transient=True)),
    # The control API answered but refused our request: our bug, never the sandbox's.
    (ControlRequestError, lambda exc: _HARNESS_BUG),
    (OSError, _oserror),
]

# A group takes the gravest blame among its members: a bug anywhere is a bug.
_GRAVITY: list[BlameKind] = ["harness_bug", "provider_error", "sandbox", "judge_unavailable", "provider_transient"]


def _classify_one(exc: BaseException) -> Blame:
    for cls, map_type in _BY_TYPE:
        if isinstance(exc, cls):
            return map_type(exc)
    return _HARNESS_BUG


def classify(exc: BaseException) -> Blame:
    """The blame of ``exc``; an exception group is transient only when all its members are."""
    if not isinstance(exc, BaseExceptionGroup):
        return _classify_one(exc)
    members = [classify(member) for member in exc.exceptions]
    worst = min(members, key=lambda b: _GRAVITY.index(b.kind))
    return Blame(
        worst.kind,
        transient=all(m.transient for m in members),
        stops_campaign=any(m.stops_campaign for m in members),
        retry_after_s=max((m.retry_after_s for m in members if m.retry_after_s is not None), default=None),
    )
