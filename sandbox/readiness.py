"""Wait until a freshly started sandbox container answers its probe, or say why it never will.

The task server is probed on its control API's health route, an agent container on its websocket
port; both give up at once when the container exits, with its cause.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from .errors import ControlRequestError, SandboxUnavailableError

__all__ = ["wait_until_ready"]

#: First polls are quick (a warm server is up in tens of ms); later ones back off.
_FIRST_DELAY_S = 0.01
_MAX_DELAY_S = 0.2


async def wait_until_ready(
    probe: Callable[[], Awaitable[object]],
    *,
    timeout_s: float,
    exit_reason: Callable[[], Awaitable[str | None]],
    what: str,
) -> float:
    """Call ``probe`` until it succeeds; returns the seconds it took.

    A probe that fails raises :class:`SandboxUnavailableError`, :class:`ControlRequestError` or an
    ``OSError`` (a refused connection). ``exit_reason`` reports a container that died while
    starting (its exit code, its last log lines), so a crash fails at once with its cause instead
    of after the timeout.
    """
    started = time.monotonic()
    delay = _FIRST_DELAY_S
    last_error = "no answer yet"
    while True:
        try:
            await probe()
            return time.monotonic() - started
        except (SandboxUnavailableError, ControlRequestError, OSError) as exc:
            last_error = str(exc)
        reason = await exit_reason()
        if reason is not None:
            raise SandboxUnavailableError(f"{what} exited while starting: {reason}")
        if time.monotonic() - started > timeout_s:
            raise SandboxUnavailableError(f"{what} not ready after {timeout_s:.0f} s: {last_error}")
        await asyncio.sleep(delay)
        delay = min(delay * 1.5, _MAX_DELAY_S)
