"""How much the agent under test may send into the harness: every path has a bound.

An agent controls its protocol stream, so each path from it into the harness is bounded, and
passing a bound is the agent's failure (:class:`~harness.blame.errors.AgentFailure` of kind
``over_limit``), never a harness error. The defaults sit far above what an honest realtime agent
sends (a 24 kHz PCM16 stream is 48 KB per second of speech) and far below what would hurt a
harness running many sessions at once. ``docs/security.md`` states them. They sit with the agents
because the adapters read them too (a websocket message's bound), below the session that enforces
the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AGENT_LIMITS", "AgentLimits"]


@dataclass(frozen=True)
class AgentLimits:
    #: One websocket message from an agent or provider (base64 audio of a few seconds fits easily).
    ws_message_bytes: int = 4 * 1024 * 1024
    #: Agent audio queued ahead of playout, in milliseconds of media (an honest agent is at most
    #: one long answer ahead of the clock).
    queued_audio_ms: int = 120_000
    #: Text of one transcript item (a delta stream or a final transcript).
    transcript_item_chars: int = 32_000
    #: All transcript text of one session.
    transcript_session_chars: int = 1_000_000
    #: Events one ``poll_events()`` may return (one 20 ms frame's worth, with room to spare).
    events_per_poll: int = 2_000
    #: Events the agent may hand over in one 20 ms frame, however many polls it takes (an
    #: in-process adapter is polled until a poll comes back empty).
    events_per_frame: int = 2_000
    #: Events an adapter's client may hold for the runner between two polls (its reader's queue).
    events_pending: int = 20_000
    #: Events of one session (each may become a line of ``events.jsonl``; an honest session sends
    #: a few thousand, 50 a second of speech at most).
    events_per_session: int = 250_000
    #: Distinct responses (by the agent's id) of one session, and distinct items (response, item)
    #: — what the harness keeps a record of per response or item.
    responses_per_session: int = 10_000
    items_per_session: int = 20_000
    #: Audio deltas queued ahead of playout (a flood of one-sample deltas would otherwise hold a
    #: numpy array per sample within the 120 s bound): 5 ms a delta on average over 120 s.
    queued_audio_deltas: int = 24_000
    #: The agent's error events (or errors its client reports) kept over a session; an MCP call
    #: the agent reports as failed with an error counts as one.
    errors_per_session: int = 1_000
    #: Bytes of one audio delta (87 s of speech: an agent may hand over a whole answer at once, as
    #: the oracle hands over each clip).
    audio_delta_bytes: int = 4 * 1024 * 1024
    #: Characters of a tool call's name and arguments, and of any other string field of an event.
    tool_name_chars: int = 256
    tool_arguments_chars: int = 1_000_000
    #: All tool call arguments of one session (each call's are logged, and on disk).
    tool_arguments_session_chars: int = 16_000_000
    #: The wall-clock watchdog: the task's time budget times this factor, plus the grace below
    #: (connect, clip preparation and grading happen outside media time).
    watchdog_factor: float = 2.0
    watchdog_grace_s: float = 120.0
    #: One call into the agent (``connect``, ``send_audio``, ``send_tool_result``, a text agent's
    #: ``act``/``reset``) that has not returned after this many seconds ends the session as the
    #: agent's ``hung`` failure (a text agent's turn is one LLM request: this leaves it room).
    agent_call_s: float = 120.0
    #: ``close()`` gets this long, then it is cancelled.
    agent_close_s: float = 10.0
    #: A call cancelled at its bound that swallows the cancellation and still has not returned this
    #: many seconds later is abandoned: the session goes on without it (recorded as ``hung``).
    agent_abandon_s: float = 2.0


#: The limits every session uses unless a test passes others.
AGENT_LIMITS = AgentLimits()
