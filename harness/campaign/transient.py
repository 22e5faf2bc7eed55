"""Is a session failure the infrastructure's (retry, never score) or not (persist an error row)?

Typed errors decide first (our :class:`SessionInfraError` says so itself; sandbox outages,
dropped connections and timeouts are transient). Errors from third-party clients that we cannot
type (websocket close codes, HTTP 5xx from a provider) are recognised by the published markers in
``"<Type>: <message>"``.
"""

from __future__ import annotations

from harness.results.result_record import error_text
from harness.session.errors import SessionInfraError
from sandbox.errors import SandboxUnavailableError

__all__ = ["TRANSIENT_MARKERS", "TRANSIENT_TYPES", "is_infrastructure_error", "is_transient"]

TRANSIENT_TYPES: tuple[type[BaseException], ...] = (SandboxUnavailableError, ConnectionError, TimeoutError)

TRANSIENT_MARKERS = (
    "connectionclosed",
    "keepalive",
    "no close frame",
    "ping timeout",
    "timeouterror",
    "timed out",
    "1011",
    "1006",
    "econnreset",
    "connection reset",
    "server disconnected",
    "connection closed",
    "temporarily",
    "handshake",
    "502",
    "503",
    "504",
)


def is_transient(exc: BaseException) -> bool:
    """Whether retrying the session may succeed (a group is transient when all its members are)."""
    if isinstance(exc, BaseExceptionGroup):
        return all(is_transient(member) for member in exc.exceptions)
    if isinstance(exc, SessionInfraError):
        return exc.transient
    if isinstance(exc, TRANSIENT_TYPES):
        return True
    text = error_text(exc).lower()
    return any(marker in text for marker in TRANSIENT_MARKERS)


def is_infrastructure_error(exc: BaseException) -> bool:
    """Never the model's fault: a cell that ends with this is left empty, not scored."""
    return isinstance(exc, SessionInfraError) or is_transient(exc)
