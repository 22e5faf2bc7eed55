"""Failures are blamed by where they came from (the type our code raised there), never by words in their message."""

from __future__ import annotations

import errno
from types import SimpleNamespace

import httpx
import pytest

from harness.blame.errors import (
    AgentFailure,
    HarnessBug,
    JudgeUnavailable,
    ProviderError,
    ProviderTransient,
    SandboxFailure,
    SessionInfraError,
)
from harness.blame.origin_table import classify, provider_failure
from sandbox.errors import ControlRequestError, SandboxUnavailableError


def _websockets_type(name: str, base: type[Exception] = Exception) -> type[Exception]:
    """A class named like the websockets one: its name used to be enough to blame the provider."""
    return type(name, (base,), {"__module__": "websockets.exceptions", "__qualname__": name})


ConnectionClosedError = _websockets_type("ConnectionClosedError")
InvalidStatus = _websockets_type("InvalidStatus")


def _closed(code: int) -> Exception:
    exc = ConnectionClosedError("whatever the message says")
    exc.rcvd = SimpleNamespace(code=code, reason="")
    return exc


def _rejected(status: int) -> Exception:
    exc = InvalidStatus("server rejected WebSocket connection")
    exc.response = SimpleNamespace(status_code=status)
    return exc


def _http_error(status: int) -> httpx.HTTPStatusError:
    request = httpx.Request("POST", "https://provider.example/v1/realtime")
    response = httpx.Response(status, request=request)
    return httpx.HTTPStatusError("no words matter here", request=request, response=response)


@pytest.mark.parametrize(
    ("error", "kind", "transient"),
    [
        (SessionInfraError("socket dropped"), "sandbox", True),
        (SessionInfraError("no image", transient=False), "sandbox", False),
        (SandboxFailure("container died"), "sandbox", True),
        (SandboxUnavailableError("container exited"), "sandbox", True),
        (ProviderTransient("rate limited", retry_after_s=7.0), "provider_transient", True),
        (JudgeUnavailable("judge 502"), "judge_unavailable", True),
    ],
)
def test_infrastructure_is_recognised_by_type(error, kind, transient):
    blame = classify(error)
    assert (blame.kind, blame.transient, blame.infrastructure, blame.stops_campaign) == (kind, transient, True, False)


def test_retry_after_is_kept():
    assert classify(ProviderTransient("slow down", retry_after_s=7.0)).retry_after_s == 7.0


@pytest.mark.parametrize(
    "error",
    [
        ProviderError("invalid api key", kind="auth"),
        ProviderError("unknown model", kind="bad_request"),
    ],
)
def test_a_provider_refusal_stops_the_campaign(error):
    blame = classify(error)
    assert (blame.kind, blame.stops_campaign, blame.transient, blame.infrastructure) == (
        "provider_error", True, False, False
    )


def test_a_full_harness_disk_is_infrastructure_that_stops_the_campaign():
    blame = classify(OSError(errno.ENOSPC, "No space left on device"))
    assert (blame.kind, blame.infrastructure, blame.transient, blame.stops_campaign) == ("sandbox", True, False, True)


@pytest.mark.parametrize(
    "error",
    [
        ValueError("HTTP 503 temporarily unavailable handshake 1011"),  # markers in the text do not count
        KeyError("field"),
        RuntimeError("connection closed"),
        FileNotFoundError(errno.ENOENT, "missing"),
        ControlRequestError("/control/apply_event", 422, "bad body"),
        ExceptionGroup("tasks", [ProviderTransient("a"), ValueError("b")]),
    ],
)
def test_anything_untyped_is_a_harness_bug(error):
    blame = classify(error)
    assert (blame.kind, blame.transient, blame.infrastructure) == ("harness_bug", False, False)


def test_a_group_is_transient_only_when_every_member_is():
    assert classify(ExceptionGroup("tasks", [ProviderTransient("a"), SandboxFailure("b")])).transient
    group = classify(ExceptionGroup("tasks", [ProviderTransient("a"), SessionInfraError("x", transient=False)]))
    assert (group.kind, group.transient) == ("sandbox", False)


@pytest.mark.parametrize(
    ("kind", "expected"),
    [("transient", ProviderTransient), ("rate_limited", ProviderTransient), ("auth", ProviderError),
     ("bad_request", ProviderError), ("provider", type(None))],
)
def test_adapter_error_kinds_map_to_the_taxonomy(kind, expected):
    assert isinstance(provider_failure("boom", kind, retry_after_s=3.0), expected)


def test_session_infra_error_keeps_its_interface():
    error = SessionInfraError("agent connection failed", transient=False)
    assert str(error) == "agent connection failed" and error.transient is False
    assert isinstance(ProviderTransient("x"), SessionInfraError)


@pytest.mark.parametrize(
    "error",
    [
        TimeoutError(),  # our own wait_for: every adapter converts its provider's timeouts itself
        ConnectionError("server disconnected (1006)"),
        ConnectionResetError("peer"),
        httpx.ConnectError("refused"),
        httpx.ReadTimeout("slow"),
        _http_error(503),
        _http_error(401),
        _closed(1011),
        _closed(1008),
        _rejected(403),
    ],
)
def test_a_failure_nobody_converted_at_its_source_is_a_harness_bug(error):
    """Blame by origin: by the time it reaches the campaign, a provider's failure is already a
    ProviderTransient/ProviderError; a bare transport exception was raised by code of ours."""
    blame = classify(error)
    assert (blame.kind, blame.transient, blame.stops_campaign) == ("harness_bug", False, False)


@pytest.mark.parametrize(
    "error",
    [
        HarnessBug("our adapter failed"),
        AgentFailure("raised", "the agent's failure is scored in the session, never here"),
        ExceptionGroup("tasks", [ProviderTransient("a"), HarnessBug("b")]),
    ],
)
def test_harness_bugs_and_escaped_agent_failures_are_harness_bugs(error):
    blame = classify(error)
    assert (blame.kind, blame.transient, blame.infrastructure, blame.stops_campaign) == ("harness_bug", False, False, False)


def test_a_full_disk_in_a_group_still_stops_the_campaign():
    blame = classify(ExceptionGroup("tasks", [ProviderTransient("a"), OSError(errno.EDQUOT, "quota")]))
    assert (blame.kind, blame.stops_campaign, blame.transient) == ("sandbox", True, False)
