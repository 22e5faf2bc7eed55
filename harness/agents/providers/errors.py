"""Provider failures classified by the provider's own error type, code, HTTP status or close code.

The kind decides the blame: ``auth`` and ``bad_request`` mean nothing will succeed (the campaign
stops, naming the provider); ``transient`` and ``rate_limited`` are infrastructure (the session is
retried, never scored); ``provider`` is logged and the session goes on. Raised while connecting,
they are the session's own blame types (``harness.blame.errors``), so the campaign needs no
knowledge of any provider.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from harness.agents.realtime import AdapterError, ErrorKind
from harness.blame.errors import ProviderError, ProviderTransient

__all__ = [
    "BENIGN_ERROR_CODES",
    "CLOSE_KINDS",
    "ProviderRefused",
    "ProviderUnavailable",
    "classify_close",
    "classify_error",
    "classify_status",
    "raise_for",
    "retry_after",
]

#: Error codes a correct client can provoke in a race with the server; never a failure.
#: (After a function output some servers start a response on their own; our continuation
#: ``response.create`` then meets the one already running.)
BENIGN_ERROR_CODES = frozenset({"conversation_already_has_active_response", "response_cancel_not_active"})

_AUTH_CODES = frozenset({"invalid_api_key", "authentication_error", "unauthorized", "permission_denied", "insufficient_quota"})
_TRANSIENT_CODES = frozenset({"server_error", "session_expired", "internal_error", "service_unavailable", "overloaded"})
_RETRY_IN = re.compile(r"try again in ([0-9.]+)\s*(ms|s)\b", re.IGNORECASE)


class ProviderRefused(ProviderError):
    """The provider refused the session (bad key, bad request): retrying cannot help."""

    def __init__(self, error: AdapterError) -> None:
        super().__init__(error.message, kind="auth" if error.kind == "auth" else "bad_request")
        self.error = error


class ProviderUnavailable(ProviderTransient):
    """The provider could not take the session now (5xx, 429, network): retry, never score."""

    def __init__(self, error: AdapterError) -> None:
        super().__init__(error.message, retry_after_s=error.retry_after_s)
        self.error = error


def raise_for(error: AdapterError) -> None:
    """Raise the exception that carries ``error``'s blame (used while connecting)."""
    if error.transient:
        raise ProviderUnavailable(error)
    raise ProviderRefused(error)


def retry_after(headers: Mapping[str, str] | None, message: str = "") -> float | None:
    """Seconds to wait, from a ``Retry-After`` header (seconds) or "try again in 2.5s" in the text."""
    value = (headers or {}).get("Retry-After") or (headers or {}).get("retry-after")
    if value:
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
    match = _RETRY_IN.search(message)
    if match:
        amount = float(match.group(1))
        return amount / 1000 if match.group(2).lower() == "ms" else amount
    return None


def classify_status(provider: str, status: int, headers: Mapping[str, str] | None, body: str) -> AdapterError:
    """The websocket upgrade was answered with an HTTP error."""
    detail = body.strip().replace("\n", " ")[:300] or f"HTTP {status}"
    message = f"{provider} refused the connection: HTTP {status}: {detail}"
    if status in (401, 403):
        return AdapterError(f"{message} (check the API key)", kind="auth", code=str(status))
    if status == 429:
        wait = retry_after(headers, body)
        return AdapterError(message, kind="rate_limited", retry_after_s=wait, code="429")
    if status >= 500 or status == 408:
        return AdapterError(message, kind="transient", retry_after_s=retry_after(headers, body), code=str(status))
    return AdapterError(message, kind="bad_request", code=str(status))


def classify_error(provider: str, error_type: str | None, code: str | None, message: str) -> AdapterError | None:
    """An ``error`` event from the provider; ``None`` for a benign race (see BENIGN_ERROR_CODES)."""
    if code in BENIGN_ERROR_CODES:
        return None
    kinds = {error_type, code}
    text = f"{provider} error {code or error_type}: {message}"
    kind: ErrorKind
    if kinds & _AUTH_CODES:
        kind = "auth"
    elif any(k and "rate_limit" in k for k in kinds):
        kind = "rate_limited"
    elif kinds & _TRANSIENT_CODES or error_type == "server_error":
        kind = "transient"
    elif error_type == "invalid_request_error":
        kind = "bad_request"
    else:
        kind = "provider"
    return AdapterError(text, kind=kind, retry_after_s=retry_after(None, message), code=code or error_type)


#: The one close-code table (RFC 6455 §7.4.1 and the IANA registry): what a close we did not ask
#: for means. 1008 is the providers' "policy violation" for a bad key; 1002/1003/1007/1009/1010
#: say the two ends disagree on the protocol or on a message, which no retry changes; the rest
#: (1000 and 1001 included: any close we did not ask for ends the session, the agent said nothing
#: wrong) are infrastructure. A code outside the table (none, 1015, an application's 4xxx) is
#: infrastructure too.
CLOSE_KINDS: dict[int, ErrorKind] = {
    1000: "transient",
    1001: "transient",
    1002: "bad_request",
    1003: "bad_request",
    1005: "transient",
    1006: "transient",
    1007: "bad_request",
    1008: "auth",
    1009: "bad_request",
    1010: "bad_request",
    1011: "transient",
    1012: "transient",
    1013: "transient",
    1014: "transient",
}


def classify_close(provider: str, code: int | None, reason: str) -> AdapterError:
    """The provider closed the socket without being asked to. Any close we did not ask for ends the
    agent, so even a normal code is infrastructure unless the code says otherwise."""
    kind = CLOSE_KINDS.get(code or 1006, "transient")
    return AdapterError(
        f"{provider} closed the connection (code {code or 1006}{': ' + reason if reason else ''})",
        kind=kind,
        code=str(code or 1006),
    )
