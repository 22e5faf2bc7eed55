"""Failures are blamed by type and attribute, never by words in their message."""

from __future__ import annotations

import errno
from types import SimpleNamespace

import httpx
import pytest

from harness.campaign.blame import classify
from harness.session.errors import (
    JudgeUnavailable,
    ProviderError,
    ProviderTransient,
    SandboxFailure,
    SessionInfraError,
    provider_failure,
)
from sandbox.errors import ControlRequestError, SandboxUnavailableError


def _websockets_type(name: str, base: type[Exception] = Exception) -> type[Exception]:
    """A class named like the websockets one, so the mapping by qualified name is what is tested."""
    return type(name, (base,), {"__module__": "websockets.exceptions", "__qualname__": name})


ConnectionClosed = _websockets_type("ConnectionClosed")
ConnectionClosedError = type(
    "ConnectionClosedError", (ConnectionClosed,), {"__module__": "websockets.exceptions"}
)
InvalidHandshake = _websockets_type("InvalidHandshake")
InvalidStatus = _websockets_type("InvalidStatus", InvalidHandshake)


def _closed(code: int | None, cls: type[Exception] = ConnectionClosedError) -> Exception:
    exc = cls("whatever the message says")
    exc.rcvd = None if code is None else SimpleNamespace(code=code, reason="")
    return exc


def _rejected(status: int) -> Exception:
    exc = InvalidStatus("server rejected WebSocket connection")
    exc.response = SimpleNamespace(status_code=status)
    return exc


def _http_error(status: int, headers: dict[str, str] | None = None) -> httpx.HTTPStatusError:
    request = httpx.Request("POST", "https://provider.example/v1/realtime")
    response = httpx.Response(status, headers=headers, request=request)
    return httpx.HTTPStatusError("no words matter here", request=request, response=response)


@pytest.mark.parametrize(
    ("error", "kind", "transient"),
    [
        (SessionInfraError("socket dropped"), "sandbox", True),
        (SessionInfraError("no image", transient=False), "sandbox", False),
        (SandboxFailure("container died"), "sandbox", True),
        (SandboxUnavailableError("container exited"), "sandbox", True),
        (ProviderTransient("rate limited", retry_after_s=7.0), "provider_transient", True),
        (ConnectionResetError("peer"), "provider_transient", True),
        (ConnectionError("server disconnected (1006)"), "provider_transient", True),
        (TimeoutError(), "provider_transient", True),
        (httpx.ConnectError("refused"), "provider_transient", True),
        (httpx.ReadTimeout("slow"), "provider_transient", True),
        (_http_error(503), "provider_transient", True),
        (_http_error(429, {"retry-after": "12"}), "provider_transient", True),
        (_closed(1011, ConnectionClosed), "provider_transient", True),
        (_closed(1006), "provider_transient", True),
        (_closed(None), "provider_transient", True),
        (JudgeUnavailable("judge 502"), "judge_unavailable", True),
    ],
)
def test_infrastructure_is_recognised_by_type(error, kind, transient):
    blame = classify(error)
    assert (blame.kind, blame.transient, blame.infrastructure, blame.stops_campaign) == (kind, transient, True, False)


def test_retry_after_is_kept():
    assert classify(ProviderTransient("slow down", retry_after_s=7.0)).retry_after_s == 7.0
    assert classify(_http_error(429, {"retry-after": "12"})).retry_after_s == 12.0


@pytest.mark.parametrize(
    "error",
    [
        ProviderError("invalid api key", kind="auth"),
        _http_error(401),
        _http_error(400),
        _closed(1008),
        _rejected(403),
    ],
)
def test_a_provider_refusal_stops_the_campaign(error):
    blame = classify(error)
    assert (blame.kind, blame.stops_campaign, blame.transient, blame.infrastructure) == (
        "provider_error", True, False, False
    )


def test_a_rejected_handshake_with_5xx_is_transient():
    assert classify(_rejected(502)).kind == "provider_transient"


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
        ExceptionGroup("tasks", [ConnectionError("a"), ValueError("b")]),
    ],
)
def test_anything_untyped_is_a_harness_bug(error):
    blame = classify(error)
    assert (blame.kind, blame.transient, blame.infrastructure) == ("harness_bug", False, False)


def test_a_group_is_transient_only_when_every_member_is():
    assert classify(ExceptionGroup("tasks", [ConnectionError("a"), TimeoutError()])).transient
    group = classify(ExceptionGroup("tasks", [ConnectionError("a"), SessionInfraError("x", transient=False)]))
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
