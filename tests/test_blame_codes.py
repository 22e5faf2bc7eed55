"""Blame in one place: every failure code is :mod:`harness.blame`'s, written as it always was, and
the origin table answers for every origin and every code.

The stray-literal check reads the sources with :mod:`ast`: outside ``harness/blame`` no code spells a
failure code or an ``AdapterError`` code as a string. A few code words are also words of other
namespaces (the ``sandbox`` package, the campaign's ``provider_error`` cell status, the fork
server's ``exited`` message, a probe's ``refused`` verdict); those are flagged only where they
would be a code: an ``AgentFailure``'s or a ``Blame``'s kind, a comparison with a ``.kind`` or
``.code``, a ``code=`` argument.
"""

from __future__ import annotations

import ast
import errno
import json
from pathlib import Path
from typing import get_args

import pytest
from pydantic import ValidationError

from harness.blame.codes import (
    AGENT_FAILURE_KINDS,
    BLAME_KINDS,
    AdapterErrorCode,
    AgentFailureKind,
    AgentKind,
    BlameKind,
    FailureCode,
)
from harness.blame.errors import (
    AgentFailure,
    HarnessBug,
    JudgeUnavailable,
    NodeLostError,
    ProviderError,
    ProviderTransient,
    SandboxFailure,
)
from harness.blame.origin_table import (
    CHECK_FAILED,
    GRAVITY,
    RAISED,
    START_FAILED,
    agent_check_failed,
    agent_raised,
    agent_reported,
    agent_start_failed,
    classify,
)
from harness.events.payloads import AgentFailurePayload
from sandbox.errors import AgentStartFailed

ROOT = Path(__file__).resolve().parents[1]
#: The words result files and published data hold today: the enum must keep every one, unchanged.
PUBLISHED = {
    "raised", "malformed_event", "bad_audio", "over_limit", "closed", "exited", "hung", "refused",
    "sandbox", "provider_transient", "provider_error", "judge_unavailable", "harness_bug",
}
#: Code words that are also words of another namespace (see the module doc).
OTHER_MEANINGS = {"sandbox", "provider_error", "exited", "refused"}


def test_every_failure_code_keeps_its_published_string():
    assert {code.value for code in FailureCode} == PUBLISHED
    for code in FailureCode:
        assert FailureCode(code.value) is code
        assert code == code.value and str(code) == code.value and f"{code}" == code.value
        assert json.dumps({"kind": code}) == json.dumps({"kind": code.value})
    assert {code.value for code in AdapterErrorCode} == {"over_limit", "malformed", "agent_failed"}


def test_the_agents_kinds_and_the_campaigns_kinds_split_the_enum():
    assert AGENT_FAILURE_KINDS | BLAME_KINDS == set(FailureCode)
    assert not AGENT_FAILURE_KINDS & BLAME_KINDS
    assert set(get_args(AgentFailureKind)) == AGENT_FAILURE_KINDS and set(get_args(BlameKind)) == BLAME_KINDS
    assert sorted(GRAVITY) == sorted(BLAME_KINDS)  # a group's blame ranks every kind, once


def test_an_agent_failure_is_recorded_as_its_string():
    failure = AgentFailure(FailureCode.BAD_AUDIO, "odd bytes")
    assert str(failure) == "bad_audio: odd bytes"
    payload = AgentFailurePayload(kind=failure.kind, detail=failure.detail)
    assert payload.model_dump_json() == '{"kind":"bad_audio","detail":"odd bytes"}'
    # An events file written before the enum reads back as the same kind.
    assert AgentFailurePayload.model_validate_json(payload.model_dump_json()).kind is FailureCode.BAD_AUDIO
    with pytest.raises(ValidationError):
        AgentFailurePayload(kind="harness_bug", detail="not an agent's failure")


@pytest.mark.parametrize("kind", get_args(AgentKind))
def test_the_table_answers_for_every_agent_kind(kind):
    assert kind in RAISED and kind in CHECK_FAILED and kind in START_FAILED
    # Every exception gets a ruling: each kind's rules end with BaseException.
    assert RAISED[kind][-1][0] is BaseException


@pytest.mark.parametrize("code", sorted(AGENT_FAILURE_KINDS))
def test_every_agent_failure_kind_is_blamed_by_origin(code):
    failure = AgentFailure(code, "detail")
    # Raised by the agent's own code: the agent's failure; by our provider adapter: its own
    # classification of the model's failure, kept; by a builtin agent: ours, unchanged.
    assert agent_raised("external_code", failure, "act", "x").kind == FailureCode.RAISED
    assert agent_raised("provider", failure, "act", "x") is failure
    assert agent_raised("builtin", failure, "act", "x") is failure
    # Found by a check on what the agent handed over: the agent's, unless the code is ours.
    assert agent_check_failed("remote_agent", failure, "sent an event") is failure
    assert isinstance(agent_check_failed("builtin", failure, "sent an event"), HarnessBug)
    # One that escaped the session is our bug: never scored, never retried.
    assert classify(failure).kind == FailureCode.HARNESS_BUG


def test_what_an_agents_server_reports_is_its_failure_and_a_providers_keeps_its_meaning():
    reported = {code: agent_reported("remote_agent", "provider", code, "m") for code in AdapterErrorCode}
    assert {code: failure.kind for code, failure in reported.items()} == {
        AdapterErrorCode.OVER_LIMIT: "over_limit", AdapterErrorCode.MALFORMED: "malformed_event",
        AdapterErrorCode.AGENT_FAILED: "closed"}
    assert agent_reported("external_code", "transient", None, "m").kind == FailureCode.CLOSED
    assert agent_reported("external_code", "auth", "401", "m").kind == FailureCode.REFUSED
    assert agent_reported("external_code", "provider", "whatever", "m") is None
    assert isinstance(agent_reported("provider", "rate_limited", "429", "m", 2.0), ProviderTransient)
    assert isinstance(agent_reported("provider", "bad_request", AdapterErrorCode.OVER_LIMIT, "m"), ProviderError)


def test_an_agent_that_exits_before_its_session_is_scored_unless_it_is_ours():
    exc = AgentStartFailed("the container exited with 1")
    assert agent_start_failed("remote_agent", exc).kind == FailureCode.EXITED
    assert agent_start_failed("builtin", exc) is None


@pytest.mark.parametrize(
    ("exc", "kind"),
    [(HarnessBug("x"), "harness_bug"), (SandboxFailure("x"), "sandbox"), (NodeLostError("x"), "sandbox"),
     (ProviderTransient("x"), "provider_transient"), (ProviderError("x"), "provider_error"),
     (JudgeUnavailable("x"), "judge_unavailable"), (OSError(errno.ENOSPC, "full"), "sandbox")],
)
def test_every_blame_kind_is_reached_from_its_origin(exc, kind):
    assert classify(exc).kind == kind


def _is_code_site(node: ast.AST, parent: ast.AST) -> bool:
    """``node`` (a string) stands where a code would: a kind, a compared kind or code, a ``code=``."""
    if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node:
        name = parent.func.attr if isinstance(parent.func, ast.Attribute) else getattr(parent.func, "id", "")
        return name in ("AgentFailure", "Blame")
    if isinstance(parent, ast.keyword):
        return parent.arg == "code"
    if isinstance(parent, ast.Compare):
        sides = [parent.left, *parent.comparators]
        return any(isinstance(side, ast.Attribute) and side.attr in ("kind", "code") for side in sides)
    return False


def stray_codes(root: Path) -> list[str]:
    """Every string spelling a failure or adapter-error code outside ``harness/blame``, as ``file:line``."""
    codes = {code.value for code in FailureCode} | {code.value for code in AdapterErrorCode}
    found: list[tuple[Path, int, str]] = []
    for package in ("harness", "tui", "mcp_servers", "sandbox"):
        for path in sorted((root / package).rglob("*.py")):
            if path.relative_to(root).parts[:2] == ("harness", "blame"):
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for parent in ast.walk(tree):
                for node in ast.iter_child_nodes(parent):
                    if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in codes):
                        continue
                    if node.value not in OTHER_MEANINGS or _is_code_site(node, parent):
                        found.append((path.relative_to(root), node.lineno, node.value))
    return [f"{path}:{line}: {value!r}" for path, line, value in sorted(found)]


def test_no_failure_code_is_spelled_outside_the_blame_package():
    assert stray_codes(ROOT) == []


def test_the_stray_code_check_sees_a_code_and_leaves_other_words_alone(tmp_path):
    source = tmp_path / "harness" / "x.py"
    source.parent.mkdir()
    source.write_text(
        'raise AgentFailure("hung", "d")\n'
        'if failure.kind == "refused": pass\n'
        'AdapterError("m", code="agent_failed")\n'
        'blame = {"kind": "harness_bug"}\n'
        'backend = "sandbox"\n'  # the package, not the blame
        'outcome = CellOutcome(cell, "provider_error")\n'  # the cell's status
        'message = {"exited": 1}\n',  # the fork server's message
        encoding="utf-8",
    )
    assert stray_codes(tmp_path) == ["harness/x.py:1: 'hung'", "harness/x.py:2: 'refused'",
                                     "harness/x.py:3: 'agent_failed'", "harness/x.py:4: 'harness_bug'"]


def test_an_adapter_error_carries_its_code_as_a_plain_string():
    """Regression: ``AdapterErrorCode`` members (a str subclass) reached the agent boundary's event
    check, which takes no str subclass, and a ws:// agent's 1009 close became ``malformed_event``
    instead of ``over_limit``."""
    from harness.agents.realtime import AdapterError
    from harness.blame.codes import AdapterErrorCode

    for code in AdapterErrorCode:
        error = AdapterError("bound passed", kind="bad_request", code=code)
        assert type(error.code) is str and error.code == code.value
    assert AdapterError("x", code="rate_limit_exceeded").code == "rate_limit_exceeded"
