"""Wait until a freshly started sandbox container answers its probe, or say why it never will.

The task server is probed on its control API's health route, an agent container on its websocket
port; both give up at once when the container exits, with its cause. Retrying is ``tenacity``'s
(as for the judge): probes back off exponentially until the deadline.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from tenacity import AsyncRetrying, RetryError, retry_if_exception_type, stop_after_delay, wait_exponential

from .errors import ControlRequestError, SandboxUnavailableError

__all__ = ["wait_until_ready"]

#: What a probe raises while the container is still starting (an ``OSError``: a refused connection).
_NOT_YET = (SandboxUnavailableError, ControlRequestError, OSError)

#: First polls are quick (a warm server is up in tens of ms); later ones back off by half each time.
_FIRST_DELAY_S = 0.01
_MAX_DELAY_S = 0.2
_BACKOFF = 1.5


async def wait_until_ready(
    probe: Callable[[], Awaitable[object]],
    *,
    timeout_s: float,
    exit_reason: Callable[[], Awaitable[str | None]],
    what: str,
) -> float:
    """Call ``probe`` until it succeeds; returns the seconds it took.

    A probe that fails raises :class:`SandboxUnavailableError`, :class:`ControlRequestError` or an
    ``OSError``; anything else is not retried. ``exit_reason`` reports a container that died while
    starting (its exit code, its last log lines), so a crash fails at once with its cause instead
    of after the timeout. It runs outside the retried attempt: its own errors end the wait.
    """
    started = time.monotonic()
    retrying = AsyncRetrying(
        retry=retry_if_exception_type(_NOT_YET),
        wait=wait_exponential(multiplier=_FIRST_DELAY_S, exp_base=_BACKOFF, max=_MAX_DELAY_S),
        stop=stop_after_delay(timeout_s),
    )
    try:
        async for attempt in retrying:
            with attempt:
                await probe()
            outcome = attempt.retry_state.outcome
            if outcome is not None and isinstance(outcome.exception(), _NOT_YET):
                reason = await exit_reason()
                if reason is not None:
                    raise SandboxUnavailableError(f"{what} exited while starting: {reason}")
    except RetryError as gave_up:
        last_error = gave_up.last_attempt.exception()
        raise SandboxUnavailableError(f"{what} not ready after {timeout_s:.0f} s: {last_error}") from last_error
    return time.monotonic() - started
