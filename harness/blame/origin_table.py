"""What happens when something raises, by where it came from: the one table of blame.

Blame is by origin, never by an exception's type alone nor by words in its message. Two questions,
answered here and nowhere else:

**In the session: whose failure is it?** Asked where the harness calls the agent under test
(``harness/session/agent_blame.py``'s ``AgentCalls``, the agent boundary, the text runner, the
cell that starts an agent's container), by the model's :data:`AgentKind`. The agent's code
(``external_code``) or the server behind our client (``remote_agent``) can raise anything — our
own infrastructure types included — so for them an exception's *type* says nothing about whose
fault it is: it crossed the agent boundary, so it is the agent's failure
(:class:`~.errors.AgentFailure`), graded and scored. Only the harness's own agents (``builtin``)
and our provider adapters (``provider``) keep typed blame, because their code is ours. (The
harness stopping itself — our cancellation, the user's Ctrl-C — is never anyone's failure: the
caller, which alone knows its task's state, lets it through before asking.)

- :data:`RAISED`: an exception out of an agent's method;
- :data:`CHECK_FAILED`: what the agent handed over failed a check (a malformed event, bad audio,
  a bound passed);
- :data:`REPORTED_BY_AGENT` and :data:`PROVIDER_FAILURES`: an ``AdapterError`` event it sent;
- :data:`START_FAILED`: its container or host process exited before its session opened.

**In the campaign: what does the cell do next?** :func:`classify`, by :data:`BY_TYPE`. By the time a
failure reaches the campaign, each part of the harness that called something outside itself has
already said what the failure was, at the point of the call:

- a provider adapter turns its own transport failures, timeouts, closes and refusals into
  :class:`~.errors.ProviderTransient` / :class:`~.errors.ProviderError`
  (``harness/agents/providers``, ``harness/agents/chat_agent.py``);
- the sandbox's clients turn a dead server into :class:`~sandbox.errors.SandboxUnavailableError`
  and a refused control request into :class:`~sandbox.errors.ControlRequestError`; the Ray
  executor turns a lost node into :class:`~.errors.NodeLostError`;
- the judge's client turns an outage into :class:`~.errors.JudgeUnavailable`;
- the agent boundary turns whatever the agent under test did into a scored session, so
  :class:`~.errors.AgentFailure` never reaches here (if it does, that is our bug).

So a bare ``TimeoutError`` (our own ``wait_for``), ``ConnectionError``, ``httpx`` or ``websockets``
exception here was converted by nobody: it is a harness bug, like anything else not mapped, and
fails the cell loudly instead of hiding in retries. The one standard-library case kept is a full
harness disk (``ENOSPC``/``EDQUOT``), which fails every session alike and stops the campaign.
"""

from __future__ import annotations

import enum
import errno
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import get_args

from sandbox.errors import AgentImageError, ControlRequestError, SandboxUnavailableError

from .codes import AdapterErrorCode, AgentFailureKind, AgentKind, BlameKind, FailureCode
from .errors import (
    AgentFailure,
    HarnessBug,
    JudgeUnavailable,
    ProviderError,
    ProviderTransient,
    SessionInfraError,
)

__all__ = [
    "AGENTS_OWN",
    "BY_TYPE",
    "CHECK_FAILED",
    "PROVIDER_FAILURES",
    "RAISED",
    "REPORTED_BY_AGENT",
    "START_FAILED",
    "Blame",
    "Ruling",
    "agent_check_failed",
    "agent_raised",
    "agent_reported",
    "agent_start_failed",
    "classify",
    "provider_failure",
]

# --- In the session: whose failure is it? -------------------------------------------------------

#: Kinds whose code is the agent author's (or whose server is): what crosses is the agent's failure.
AGENTS_OWN: frozenset[AgentKind] = frozenset({"remote_agent", "external_code"})


class Ruling(enum.Enum):
    """What becomes of a failure that is not the agent's own (a rule's other answer is an
    :data:`~.codes.AgentFailureKind`: the agent's failure of that kind, scored)."""

    #: It goes on as itself: our own typed failure (retried, stopping the campaign), our bug, or a
    #: failed check's own ``AgentFailure``.
    PASSES = "passes"
    #: Our own code failed: it becomes a :class:`~.errors.HarnessBug`.
    OUR_BUG = "our_bug"


Rule = Ruling | AgentFailureKind
#: Exception types and their rule, most specific first; the first that matches decides.
TypeRules = tuple[tuple[type[BaseException], Rule], ...]

#: A provider failure our client raised or reported about an agent's own server: it dropped
#: (``closed``) or refused (``refused``) the session.
_AGENTS_PROVIDER_FAILURES: tuple[tuple[type[BaseException], AgentFailureKind], ...] = (
    (ProviderTransient, FailureCode.CLOSED),
    (ProviderError, FailureCode.REFUSED),
)

#: An exception out of an agent's method, by the agent's kind.
RAISED: Mapping[AgentKind, TypeRules] = {
    # Our bug, or our own typed failure.
    "builtin": ((BaseException, Ruling.PASSES),),
    # Provider failures keep their campaign meaning (retried, or stopping the campaign); an
    # AgentFailure is our adapter classifying the model's own failure (a chat model's
    # ``context_length_exceeded``), scored as such; anything else is a bug in our adapter, but a
    # BaseException that is no Exception (SystemExit, GeneratorExit) is let through.
    "provider": (
        (ProviderTransient, Ruling.PASSES),
        (ProviderError, Ruling.PASSES),
        (HarnessBug, Ruling.PASSES),
        (AgentFailure, Ruling.PASSES),
        (Exception, Ruling.OUR_BUG),
        (BaseException, Ruling.PASSES),
    ),
    # Our client's own bug passes; its typed provider failures are the agent's server's.
    "remote_agent": (
        (HarnessBug, Ruling.PASSES),
        *_AGENTS_PROVIDER_FAILURES,
        (BaseException, FailureCode.RAISED),
    ),
    # Every exception, BaseException included, is the agent's.
    "external_code": ((BaseException, FailureCode.RAISED),),
}

#: What the agent handed over failed a check: the agent's failure, unless the code is ours.
CHECK_FAILED: Mapping[AgentKind, Ruling] = {
    kind: Ruling.PASSES if kind in AGENTS_OWN else Ruling.OUR_BUG for kind in get_args(AgentKind)
}

#: The agent's container or host process exited, or never listened, before its session opened:
#: the agent's failure, scored on the untouched environment; the harness's own agent image (the
#: native oracle) failing so stays the sandbox's.
START_FAILED: Mapping[AgentKind, Rule] = {
    "builtin": Ruling.PASSES,
    "provider": FailureCode.EXITED,
    "remote_agent": FailureCode.EXITED,
    "external_code": FailureCode.EXITED,
}

#: An ``AdapterError``'s ``kind`` (what our adapter says the provider meant) → the exception that
#: ends the session; a kind not listed (``provider``) is logged and the session goes on.
PROVIDER_FAILURES: Mapping[str, Callable[[str, float | None], ProviderTransient | ProviderError]] = {
    "transient": lambda message, retry_after_s: ProviderTransient(message, retry_after_s=retry_after_s),
    "rate_limited": lambda message, retry_after_s: ProviderTransient(message, retry_after_s=retry_after_s),
    "auth": lambda message, retry_after_s: ProviderError(message, kind="auth"),
    "bad_request": lambda message, retry_after_s: ProviderError(message, kind="bad_request"),
}

#: An ``AdapterError`` about an agent's own code or server, by its code first: the agent passed a
#: bound, sent what does not parse, or failed or went away. Then by what it would mean from a
#: provider (:data:`_AGENTS_PROVIDER_FAILURES`): nothing it reports can make its cell unscored.
REPORTED_BY_AGENT: Mapping[str, AgentFailureKind] = {
    AdapterErrorCode.OVER_LIMIT: FailureCode.OVER_LIMIT,
    AdapterErrorCode.MALFORMED: FailureCode.MALFORMED_EVENT,
    AdapterErrorCode.AGENT_FAILED: FailureCode.CLOSED,
}


def _rule(rules: TypeRules, exc: BaseException) -> Rule:
    return next(rule for cls, rule in rules if isinstance(exc, cls))


def agent_raised(kind: AgentKind, exc: BaseException, call: str, described: str) -> BaseException:
    """The exception the session raises for ``exc``, raised by the agent's ``call`` (:data:`RAISED`).

    ``described``: ``exc`` as safe, bounded text (the agent's exception message is its own text).
    """
    rule = _rule(RAISED[kind], exc)
    if rule is Ruling.PASSES:
        return exc
    if rule is Ruling.OUR_BUG:
        bug = HarnessBug(f"our {kind} adapter failed in {call}: {described}")
        bug.__cause__ = exc
        return bug
    return AgentFailure(rule, f"{call}: {described}")


def agent_check_failed(kind: AgentKind, failure: AgentFailure, what: str) -> BaseException:
    """A check that failed on what the agent handed over (:data:`CHECK_FAILED`)."""
    if CHECK_FAILED[kind] is Ruling.PASSES:
        return failure
    return HarnessBug(f"our {kind} agent {what}: {failure}")


def agent_start_failed(kind: AgentKind, exc: SandboxUnavailableError) -> AgentFailure | None:
    """The agent's failure when its container or host process exited before its session
    (:data:`START_FAILED`); ``None``: not the agent's, ``exc`` goes on as itself."""
    rule = START_FAILED[kind]
    return None if isinstance(rule, Ruling) else AgentFailure(rule, str(exc))


def provider_failure(message: str, kind: str, *, retry_after_s: float | None = None
                     ) -> ProviderTransient | ProviderError | None:
    """The exception for an adapter-reported error of ``kind`` (:data:`PROVIDER_FAILURES`)."""
    make = PROVIDER_FAILURES.get(kind)
    return None if make is None else make(message, retry_after_s)


def agent_reported(agent: AgentKind, kind: str, code: str | None, message: str,
                   retry_after_s: float | None = None) -> BaseException | None:
    """What an ``AdapterError`` event (its ``kind``, ``code``, ``message``) ends the session with
    (``None``: logged, the session goes on).

    From our provider adapters: a retried transient or a campaign-stopping refusal, as the
    provider meant it. From the agent's own code or server: :data:`REPORTED_BY_AGENT`.
    """
    failure = provider_failure(message, kind, retry_after_s=retry_after_s)
    if agent not in AGENTS_OWN:
        return failure
    reported = REPORTED_BY_AGENT.get(code) if code is not None else None
    if reported is not None:
        return AgentFailure(reported, message)
    if failure is None:
        return None
    return AgentFailure(next(code for cls, code in _AGENTS_PROVIDER_FAILURES if isinstance(failure, cls)), message)


# --- In the campaign: what does the cell do next? -----------------------------------------------

#: A disk that is full (or over quota) on the harness side fails every session alike.
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
#: Not the model's fault and not a bug of ours: the cell is left empty, never scored.
_INFRASTRUCTURE = frozenset({FailureCode.SANDBOX, FailureCode.PROVIDER_TRANSIENT, FailureCode.JUDGE_UNAVAILABLE})


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
        return self.kind in _INFRASTRUCTURE


_HARNESS_BUG = Blame(FailureCode.HARNESS_BUG)


def _session_infra(exc: SessionInfraError) -> Blame:
    if isinstance(exc, ProviderTransient):
        return Blame(FailureCode.PROVIDER_TRANSIENT, transient=True, retry_after_s=exc.retry_after_s)
    return Blame(FailureCode.SANDBOX, transient=exc.transient)


def _oserror(exc: OSError) -> Blame:
    if exc.errno in DISK_FULL_ERRNOS:
        return Blame(FailureCode.SANDBOX, stops_campaign=True)
    return _HARNESS_BUG


#: Our types, most specific first; the first that matches decides; anything else is our bug.
BY_TYPE: tuple[tuple[type[BaseException], Callable[..., Blame]], ...] = (
    (HarnessBug, lambda exc: _HARNESS_BUG),
    # The agent's own failure is scored inside the session; one that escaped it is our bug.
    (AgentFailure, lambda exc: _HARNESS_BUG),
    # The sandbox, the cluster (NodeLostError) or a provider's transient: retried when transient.
    (SessionInfraError, _session_infra),
    (ProviderError, lambda exc: Blame(FailureCode.PROVIDER_ERROR, stops_campaign=True)),
    (JudgeUnavailable, lambda exc: Blame(FailureCode.JUDGE_UNAVAILABLE, transient=True)),
    # No session of this model can start (its image is not on the engine): say so once and stop.
    (AgentImageError, lambda exc: Blame(FailureCode.SANDBOX, stops_campaign=True)),
    (SandboxUnavailableError, lambda exc: Blame(FailureCode.SANDBOX, transient=True)),
    # The control API answered but refused our request: our bug, never the sandbox's.
    (ControlRequestError, lambda exc: _HARNESS_BUG),
    (OSError, _oserror),
)

#: A group takes the gravest blame among its members: a bug anywhere is a bug.
GRAVITY: tuple[BlameKind, ...] = (
    FailureCode.HARNESS_BUG, FailureCode.PROVIDER_ERROR, FailureCode.SANDBOX, FailureCode.JUDGE_UNAVAILABLE,
    FailureCode.PROVIDER_TRANSIENT,
)


def _classify_one(exc: BaseException) -> Blame:
    return next((blame(exc) for cls, blame in BY_TYPE if isinstance(exc, cls)), _HARNESS_BUG)


def classify(exc: BaseException) -> Blame:
    """The blame of ``exc``; an exception group is transient only when all its members are."""
    if not isinstance(exc, BaseExceptionGroup):
        return _classify_one(exc)
    members = [classify(member) for member in exc.exceptions]
    worst = min(members, key=lambda b: GRAVITY.index(b.kind))
    return Blame(
        worst.kind,
        transient=all(m.transient for m in members),
        stops_campaign=any(m.stops_campaign for m in members),
        retry_after_s=max((m.retry_after_s for m in members if m.retry_after_s is not None), default=None),
    )
