"""The failure codes: every word the harness writes or compares to say how a session failed.

:class:`FailureCode` is one enum for the two verdicts blame reaches, because they answer the same
question at two levels and share no value:

- how the agent under test failed at its boundary (:data:`AgentFailureKind`: ``result.json``'s
  ``agent_failure.kind`` and the ``AGENT_FAILURE`` event's ``kind``), the session still scored;
- what a failure that reached the campaign means for the cell (:data:`BlameKind`: ``Blame.kind``).

Its values are the strings result files, goldens and published data already hold, and a
:class:`~enum.StrEnum` member *is* its string (it compares, hashes, formats and serializes as
one), so records stay byte-identical.

:class:`AdapterErrorCode` is a second, separate namespace on purpose: the codes our adapters put
on an ``AdapterError`` event (``AdapterError.code``) to say what their peer did. They are reports,
not verdicts — the same event from a provider and from an agent's own server is blamed differently
(:mod:`.origin_table`) — and ``AdapterError.code`` is an open field that mostly carries the
provider's own codes (``"429"``, ``"rate_limit_exceeded"``), which no enum of ours could list.
Two of the three values are no failure code at all (``malformed``, ``agent_failed``), and the
one that reads like one (``over_limit``) still has to go through the table.

:data:`AgentKind` is the origin the session's blame is keyed by (``ModelSpec.agent_kind``).
"""

from __future__ import annotations

import enum
from typing import Literal, get_args

__all__ = [
    "AGENT_FAILURE_KINDS", "BLAME_KINDS", "AdapterErrorCode", "AgentFailureKind", "AgentKind", "BlameKind", "FailureCode",
]

#: ``ModelSpec.agent_kind``: whose code runs and who is behind it — the origin the session's blame
#: is decided by (:mod:`.origin_table`).
AgentKind = Literal["builtin", "provider", "remote_agent", "external_code"]


class FailureCode(enum.StrEnum):
    """How a session failed: the agent's own failure (scored), or the campaign's blame (never scored)."""

    # The agent under test failed at its boundary: the session ends, is graded and scored.
    RAISED = "raised"  # an adapter method raised (any class, BaseException included)
    MALFORMED_EVENT = "malformed_event"  # an event of the wrong type, or with fields of the wrong type
    BAD_AUDIO = "bad_audio"  # audio bytes that are not PCM16 (odd length, not bytes)
    OVER_LIMIT = "over_limit"  # a frame, a queue, a transcript or a frame's events past its bound
    CLOSED = "closed"  # the agent's socket closed or dropped (a hang-up with 1000 is not a failure)
    EXITED = "exited"  # the agent's process or container exited
    HUNG = "hung"  # the session's wall-clock watchdog fired
    REFUSED = "refused"  # the agent refused or never acknowledged its session

    # A failure reached the campaign: the cell is retried, left empty, stops the campaign or fails loudly.
    SANDBOX = "sandbox"  # what the harness runs failed (sandbox, container, harness disk, the cluster)
    PROVIDER_TRANSIENT = "provider_transient"  # the provider dropped, timed out, 5xx'd or rate-limited us
    PROVIDER_ERROR = "provider_error"  # the provider refused the harness itself (bad key, bad request)
    JUDGE_UNAVAILABLE = "judge_unavailable"  # the semantic judge did not answer
    HARNESS_BUG = "harness_bug"  # our own code failed, or nobody converted what was raised


#: How the agent under test failed at its boundary (``result.json`` ``agent_failure.kind``).
AgentFailureKind = Literal[
    FailureCode.RAISED, FailureCode.MALFORMED_EVENT, FailureCode.BAD_AUDIO, FailureCode.OVER_LIMIT,
    FailureCode.CLOSED, FailureCode.EXITED, FailureCode.HUNG, FailureCode.REFUSED,
]
#: What a failure that reached the campaign means for its cell (``Blame.kind``).
BlameKind = Literal[
    FailureCode.SANDBOX, FailureCode.PROVIDER_TRANSIENT, FailureCode.PROVIDER_ERROR, FailureCode.JUDGE_UNAVAILABLE,
    FailureCode.HARNESS_BUG,
]
AGENT_FAILURE_KINDS: frozenset[FailureCode] = frozenset(get_args(AgentFailureKind))
BLAME_KINDS: frozenset[FailureCode] = frozenset(get_args(BlameKind))


class AdapterErrorCode(enum.StrEnum):
    """What our adapters say their peer did, on an ``AdapterError`` event (``code``); see the module doc."""

    OVER_LIMIT = "over_limit"  # the peer passed a bound (a message, a frame, marks waiting)
    MALFORMED = "malformed"  # the peer sent what does not parse as its protocol
    AGENT_FAILED = "agent_failed"  # an agent's own server reported it failed, or went away
