"""``wait_until_ready``: retries a probe that is not answering yet, fails at once when the container
exits (with its cause), and gives up after its timeout with the probe's last error."""

from __future__ import annotations

import pytest

from sandbox.errors import ControlRequestError, SandboxUnavailableError
from sandbox.readiness import wait_until_ready


class Probe:
    """Fails with each of ``failures`` in turn, then answers."""

    def __init__(self, *failures: BaseException) -> None:
        self.failures = list(failures)
        self.calls = 0

    async def __call__(self) -> None:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)


class ExitReason:
    """The container's fate as the backend reports it, call by call (``None``: still running)."""

    def __init__(self, *reasons: str | None) -> None:
        self.reasons = list(reasons)
        self.calls = 0

    async def __call__(self) -> str | None:
        self.calls += 1
        return self.reasons.pop(0) if self.reasons else None


async def test_every_kind_of_not_yet_is_retried_until_the_probe_answers() -> None:
    probe = Probe(ConnectionRefusedError("refused"), ControlRequestError("/health", 503, "loading"),
                  SandboxUnavailableError("no socket yet"))
    exits = ExitReason()

    seconds = await wait_until_ready(probe, timeout_s=30, exit_reason=exits, what="server")

    assert probe.calls == 4 and exits.calls == 3, "the exit reason is read after each failed probe"
    assert seconds >= 0


async def test_a_container_that_exits_fails_at_once_with_its_cause() -> None:
    probe = Probe(*[ConnectionRefusedError("refused")] * 10)
    exits = ExitReason(None, "exit code 3: Traceback ... ImportError")

    with pytest.raises(SandboxUnavailableError) as raised:
        await wait_until_ready(probe, timeout_s=30, exit_reason=exits, what="container c1 (task)")

    assert str(raised.value) == "container c1 (task) exited while starting: exit code 3: Traceback ... ImportError"
    assert probe.calls == 2, "no probe after the container is known dead"


async def test_a_probe_that_never_answers_times_out_with_its_last_error() -> None:
    probe = Probe(*[ConnectionRefusedError(f"refused #{n}") for n in range(10_000)])

    with pytest.raises(SandboxUnavailableError, match=r"^server not ready after 0 s: refused #\d+$"):
        await wait_until_ready(probe, timeout_s=0.05, exit_reason=ExitReason(), what="server")

    assert probe.calls >= 1


async def test_an_error_that_is_not_a_not_yet_is_raised_unretried() -> None:
    probe = Probe(ValueError("a bug in the probe"))
    exits = ExitReason()

    with pytest.raises(ValueError, match="a bug in the probe"):
        await wait_until_ready(probe, timeout_s=30, exit_reason=exits, what="server")

    assert probe.calls == 1 and exits.calls == 0


async def test_an_error_reading_the_exit_reason_ends_the_wait() -> None:
    """The backend's own failure (say the engine's API) is not a probe's "not yet": it is not retried."""

    async def broken_engine() -> str | None:
        raise OSError("engine socket closed")

    probe = Probe(*[ConnectionRefusedError("refused")] * 10)
    with pytest.raises(OSError, match="engine socket closed"):
        await wait_until_ready(probe, timeout_s=30, exit_reason=broken_engine, what="server")
    assert probe.calls == 1
