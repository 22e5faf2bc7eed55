"""Bearer-token checks shared by the control API and the agent's ``/mcp`` endpoint.

Compared in constant time (``hmac.compare_digest``), so response timing reveals nothing of a token.
"""

from __future__ import annotations

import hmac

__all__ = ["bearer_matches"]


def bearer_matches(authorization: str | None, token: str) -> bool:
    """Whether an ``Authorization`` header value is ``Bearer <token>`` (scheme case-insensitive)."""
    scheme, _, given = (authorization or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.encode(), token.encode())
