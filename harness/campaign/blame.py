"""Classify a session failure once, by type: whose fault it is and what the campaign does next.

Our own exceptions carry their kind (:mod:`harness.session.errors`); third-party ones are mapped
by their type and attributes (a websocket close code, an HTTP status, an ``errno``), never by
words in their message. Whatever is not mapped is a harness bug: it fails the cell loudly instead
of hiding in retries.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import httpx

from harness.session.errors import (
    JudgeUnavailable,
    ProviderError,
    ProviderTransient,
    SessionInfraError,
)
from sandbox.errors import AgentImageError, ControlRequestError, SandboxUnavailableError

__all__ = ["Blame", "BlameKind", "classify"]

BlameKind = Literal["sandbox", "provider_transient", "provider_error", "judge_unavailable", "harness_bug"]

#: Websocket close codes after which a new session may well succeed (RFC 6455 §7.4.1, IANA).
TRANSIENT_CLOSE_CODES = frozenset({1001, 1005, 1006, 1011, 1012, 1013, 1014})
#: Close codes that say the provider refused us: retrying cannot help.
REFUSED_CLOSE_CODES = frozenset({1003, 1007, 1008, 1009, 1010})
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


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return float(response.headers["retry-after"])
    except (KeyError, ValueError):
        return None


def _by_status(status: int | None, retry_after_s: float | None = None) -> Blame:
    if status is None or status == 429 or status >= 500:
        return Blame("provider_transient", transient=True, retry_after_s=retry_after_s)
    return Blame("provider_error", stops_campaign=True)


def _http_status(exc: httpx.HTTPStatusError) -> Blame:
    return _by_status(exc.response.status_code, _retry_after(exc.response))


def _websocket_rejected(exc: BaseException) -> Blame:
    """A handshake the server answered with an HTTP status (``InvalidStatus``/``InvalidStatusCode``)."""
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None) or getattr(exc, "status_code", None)
    return _by_status(status)


def _close_code(exc: BaseException) -> int | None:
    """The close code a websockets ``ConnectionClosed`` received (``None``: no close frame)."""
    received = getattr(exc, "rcvd", None)
    return getattr(received, "code", None)


def _websocket_closed(exc: BaseException) -> Blame:
    code = _close_code(exc)
    if code in REFUSED_CLOSE_CODES:
        return Blame("provider_error", stops_campaign=True)
    return Blame("provider_transient", transient=True)


#: Our types and standard-library ones, most specific first.
_BY_TYPE: list[tuple[type[BaseException], Callable[..., Blame]]] = [
    (SessionInfraError, _session_infra),
    (ProviderError, _provider_error),
    (JudgeUnavailable, lambda exc: Blame("judge_unavailable", transient=True)),
    # No session of this model can start (its image is not on the engine): say so once and stop.
    (AgentImageError, lambda exc: Blame("sandbox", stops_campaign=True)),
    (SandboxUnavailableError, lambda exc: Blame("sandbox", transient=True)),
    # The control API answered but refused our request: our bug, never the sandbox's.
    (ControlRequestError, lambda exc: _HARNESS_BUG),
    (httpx.HTTPStatusError, _http_status),
    (httpx.TransportError, lambda exc: Blame("provider_transient", transient=True)),
    (ConnectionError, lambda exc: Blame("provider_transient", transient=True)),
    (TimeoutError, lambda exc: Blame("provider_transient", transient=True)),
    (OSError, _oserror),
]

#: Third-party types matched by qualified name, so the harness need not import their packages.
_BY_NAME: dict[str, Callable[[BaseException], Blame]] = {
    "websockets.exceptions.ConnectionClosed": _websocket_closed,
    "websockets.exceptions.InvalidStatus": _websocket_rejected,
    "websockets.exceptions.InvalidStatusCode": _websocket_rejected,
    "websockets.exceptions.InvalidHandshake": lambda exc: Blame("provider_transient", transient=True),
}

# A group takes the gravest blame among its members: a bug anywhere is a bug.
_GRAVITY: list[BlameKind] = ["harness_bug", "provider_error", "sandbox", "judge_unavailable", "provider_transient"]


def _classify_one(exc: BaseException) -> Blame:
    for cls in type(exc).__mro__:
        mapper = _BY_NAME.get(f"{cls.__module__}.{cls.__qualname__}")
        if mapper is not None:
            return mapper(exc)
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
