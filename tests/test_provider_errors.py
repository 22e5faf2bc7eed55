"""Provider errors classified by type, code, HTTP status and close code (the blame of a failure)."""

from __future__ import annotations

import pytest

from harness.agents.providers.errors import (
    CLOSE_KINDS,
    classify_close,
    classify_error,
    classify_status,
    retry_after,
)


@pytest.mark.parametrize(
    ("error_type", "code", "kind"),
    [
        ("invalid_request_error", "invalid_api_key", "auth"),
        ("invalid_request_error", "unknown_parameter", "bad_request"),
        ("rate_limit_exceeded", None, "rate_limited"),
        ("server_error", None, "transient"),
        ("invalid_request_error", "session_expired", "transient"),
        ("something_new", None, "provider"),
    ],
)
def test_error_events_are_classified_by_type_and_code(error_type, code, kind):
    error = classify_error("OpenAI", error_type, code, "details")
    assert error is not None and error.kind == kind


def test_an_active_response_race_is_benign():
    assert classify_error("OpenAI", "invalid_request_error", "conversation_already_has_active_response", "busy") is None


@pytest.mark.parametrize(("status", "kind"), [(401, "auth"), (403, "auth"), (400, "bad_request"), (429, "rate_limited"), (503, "transient")])
def test_handshake_statuses(status, kind):
    assert classify_status("xAI", status, {"Retry-After": "3"}, "nope").kind == kind


@pytest.mark.parametrize(
    ("code", "kind"),
    [(1011, "transient"), (1000, "transient"), (1001, "transient"), (1005, "transient"), (1006, "transient"),
     (1012, "transient"), (1013, "transient"), (1014, "transient"), (1015, "transient"), (4000, "transient"),
     (None, "transient"), (1008, "auth"), (1002, "bad_request"), (1003, "bad_request"), (1007, "bad_request"),
     (1009, "bad_request"), (1010, "bad_request")],
)
def test_close_codes(code, kind):
    assert classify_close("Gemini", code, "").kind == kind


def test_the_close_table_is_the_only_one_and_covers_every_registered_close_code():
    """One table decides a close's blame; the campaign keeps no copy of its own to disagree with."""
    import harness.blame.origin_table as blame

    assert set(CLOSE_KINDS) == set(range(1000, 1015)) - {1004}  # 1004 is reserved, never sent
    assert set(CLOSE_KINDS.values()) <= {"transient", "auth", "bad_request"}
    assert not [name for name in vars(blame) if "CLOSE" in name]


def test_retry_after_from_the_header_or_the_message():
    assert retry_after({"Retry-After": "7"}) == 7.0
    assert retry_after(None, "Rate limit reached. Please try again in 250ms.") == 0.25
    assert retry_after(None, "Please try again in 2.5s") == 2.5
    assert retry_after(None, "no hint") is None
