"""Every event an agent hands the runner is checked at the boundary, and rebuilt from checked fields.

The event classes are plain dataclasses: nothing stops an adapter from building an ``AudioDelta``
whose ``pcm`` is ``None`` or a ``ToolCallRequested`` whose name is an object, and the runner's
handlers would fail deep inside (``np.frombuffer``, a JSON parse, an event payload model) as if
the harness had a bug. Here each field is checked for its declared type and bound
(:class:`~harness.agents.limits.AgentLimits`) and the event is rebuilt from the checked
values, so nothing the adapter still holds can change what the runner saw. Transcript budgets are
running counts (per item and per session), so checking costs time linear in what the agent sent.

Everything the harness keeps per thing the agent names is bounded here too, before any handler
keys a record by it: events per frame (however many polls it takes) and per session, distinct
responses and items, error events. And every string the agent wrote is made safe once, here
(:mod:`harness.agents.agent_text`): no writer, parser or terminal downstream meets a lone
surrogate, a NUL, a control or a bidi character from it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, get_args

from harness.agents.agent_text import safe_text, safe_value
from harness.agents.limits import AgentLimits
from harness.agents.realtime import (
    AdapterError,
    AdapterInfo,
    AgentEvent,
    AudioDelta,
    CallEnded,
    ErrorKind,
    McpCallReported,
    PlayoutCleared,
    ResponseDone,
    SpeechStarted,
    SpeechStopped,
    ToolCallCancelled,
    ToolCallRequested,
    TranscriptDelta,
    TranscriptDone,
    Usage,
    UserTranscript,
)
from harness.blame.codes import FailureCode
from harness.blame.errors import AgentFailure

__all__ = ["EventCheck", "json_copy"]

#: Integers an agent may report (ms, tokens): beyond this they are junk that would overflow floats.
INT_BOUND = 2**53
_ERROR_KINDS = frozenset(get_args(ErrorKind))
_MCP_STATUSES = frozenset(("started", "completed", "failed"))


def _malformed(what: str, value: object, expected: str) -> AgentFailure:
    return AgentFailure(FailureCode.MALFORMED_EVENT, f"{what} is {type(value).__name__}, not {expected}")


def _str(value: object, what: str, limit: int) -> str:
    """A string field within its bound, made safe (the same length: one U+FFFD per unsafe code point)."""
    if type(value) is not str:
        raise _malformed(what, value, "str")
    if len(value) > limit:
        raise AgentFailure(FailureCode.OVER_LIMIT, f"{what} has {len(value)} characters (limit {limit})")
    return safe_text(value)


def _opt_str(value: object, what: str, limit: int) -> str | None:
    return None if value is None else _str(value, what, limit)


def _opt_int(value: object, what: str) -> int | None:
    if value is None:
        return None
    if type(value) is not int or not -INT_BOUND < value < INT_BOUND:
        raise _malformed(what, value, "an int within ±2**53")
    return value


def _opt_seconds(value: object, what: str) -> float | None:
    if value is None:
        return None
    if not isinstance(value, int | float) or type(value) not in (int, float) or not math.isfinite(value) or value < 0:
        raise _malformed(what, value, "a finite number of seconds ≥ 0")
    return float(value)


def _choice(value: object, what: str, options: frozenset[str]) -> Any:
    if type(value) is not str or value not in options:
        shown = repr(value[:40]) if type(value) is str else type(value).__name__
        raise AgentFailure(FailureCode.MALFORMED_EVENT, f"{what} is {shown}, not one of {sorted(options)}")
    return value


def json_copy(value: object, what: str, limit: int) -> dict[str, Any]:
    """A JSON round trip of a metadata dict: plain data only, bounded, and no longer the adapter's."""
    if type(value) is not dict:
        raise _malformed(what, value, "a dict")
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise AgentFailure(FailureCode.MALFORMED_EVENT, f"{what} is not JSON data: {type(exc).__name__}") from None
    if len(text) > limit:
        raise AgentFailure(FailureCode.OVER_LIMIT, f"{what} is {len(text)} characters of JSON (limit {limit})")
    try:
        # JSON data (a dict: ``value`` was one), so typed as the caller reads it.
        copied: dict[str, Any] = safe_value(json.loads(text))
    except RecursionError:
        raise AgentFailure(FailureCode.MALFORMED_EVENT, f"{what} is nested too deeply") from None
    return copied


class EventCheck:
    """The checks of one session's events, with its running transcript counts."""

    def __init__(self, limits: AgentLimits) -> None:
        self.limits = limits
        self._ids = limits.tool_name_chars
        #: Characters streamed so far per response, per item (reset when the response is done).
        self._item_chars: dict[str | None, dict[str | None, int]] = {}
        self._session_chars = 0
        self._frame_events = 0
        self._session_events = 0
        self._errors = 0
        self._argument_chars = 0
        #: Every response id and (response id, item id) the agent named: the keys of the runner's
        #: records (a response done without an id starts a new one, so each such done counts).
        self._responses: set[str | None] = set()
        self._unnamed_responses = 0
        self._items: set[tuple[str | None, str | None]] = set()
        #: Every tool call id the agent named (requested or cancelled): the tool executor's keys.
        self._calls: set[str] = set()
        self._checks: dict[type, Callable[[Any], AgentEvent]] = {
            AudioDelta: self._audio,
            TranscriptDelta: self._transcript_delta,
            TranscriptDone: self._transcript_done,
            UserTranscript: self._user_transcript,
            SpeechStarted: lambda e: SpeechStarted(_opt_int(e.audio_start_ms, "audio_start_ms"), self._id(e.item_id)),
            SpeechStopped: lambda e: SpeechStopped(_opt_int(e.audio_end_ms, "audio_end_ms"), self._id(e.item_id)),
            ToolCallRequested: self._tool_call,
            ToolCallCancelled: self._tool_cancel,
            McpCallReported: self._mcp_call,
            PlayoutCleared: lambda e: PlayoutCleared(self._response_id(e.response_id)),
            ResponseDone: self._response_done,
            CallEnded: lambda e: CallEnded(),
            AdapterError: self._adapter_error,
            AdapterInfo: lambda e: AdapterInfo(self.metadata(e.metadata, "AdapterInfo.metadata")),
        }

    def new_frame(self) -> None:
        """A 20 ms frame starts: its events are counted afresh."""
        self._frame_events = 0

    def events(self, polled: object) -> list[AgentEvent]:
        """``poll_events()``'s value checked: a list, of at most ``events_per_poll`` known events,
        within the frame's and the session's event bounds."""
        if type(polled) is not list:
            raise _malformed("poll_events()", polled, "a list")
        limits = self.limits
        if len(polled) > limits.events_per_poll:
            raise AgentFailure(FailureCode.OVER_LIMIT, f"poll_events() returned {len(polled)} events "
                                             f"(limit {limits.events_per_poll})")
        self._frame_events += len(polled)
        self._session_events += len(polled)
        if self._frame_events > limits.events_per_frame:
            raise AgentFailure(FailureCode.OVER_LIMIT, f"the agent sent {self._frame_events} events in one 20 ms frame "
                                             f"(limit {limits.events_per_frame})")
        if self._session_events > limits.events_per_session:
            raise AgentFailure(FailureCode.OVER_LIMIT, f"the agent sent {self._session_events} events in the session "
                                             f"(limit {limits.events_per_session})")
        try:
            return [self._event(event) for event in polled]
        except AttributeError as exc:  # an event built without its fields (``object.__new__``)
            raise AgentFailure(FailureCode.MALFORMED_EVENT, f"an event lacks a field: {exc}") from None

    def metadata(self, value: object, what: str) -> dict[str, Any]:
        return json_copy(value, what, self.limits.tool_arguments_chars)

    def _event(self, event: object) -> AgentEvent:
        check = self._checks.get(type(event))  # exact types: the runner routes by type
        if check is None:
            raise AgentFailure(FailureCode.MALFORMED_EVENT, f"poll_events() returned a {type(event).__name__}, not an agent event")
        return check(event)

    def _id(self, value: object, what: str = "id") -> str | None:
        return _opt_str(value, what, self._ids)

    def _response_id(self, value: object) -> str | None:
        """A response id, counted among the session's responses."""
        response_id = self._id(value, "response_id")
        if response_id not in self._responses:
            self._responses.add(response_id)
            self._count_responses()
        return response_id

    def _count_responses(self) -> None:
        count = len(self._responses) + self._unnamed_responses
        if count > self.limits.responses_per_session:
            raise AgentFailure(FailureCode.OVER_LIMIT, f"the agent started {count} responses in the session "
                                             f"(limit {self.limits.responses_per_session})")

    def _ids_of(self, event: Any) -> tuple[str | None, str | None]:
        """An event's (response id, item id), both counted."""
        response_id, item_id = self._response_id(event.response_id), self._id(event.item_id, "item_id")
        key = (response_id, item_id)
        if key not in self._items:
            self._items.add(key)
            if len(self._items) > self.limits.items_per_session:
                raise AgentFailure(FailureCode.OVER_LIMIT, f"the agent named {len(self._items)} items in the session "
                                                 f"(limit {self.limits.items_per_session})")
        return key

    def _text(self, text: object, what: str, response_id: str | None, item_id: str | None, *, replaces: bool) -> str:
        """Transcript text within the item's and the session's budget (running counts)."""
        checked = _str(text, what, self.limits.transcript_item_chars)
        items = self._item_chars.setdefault(response_id, {})
        item = len(checked) if replaces else items.get(item_id, 0) + len(checked)
        if item > self.limits.transcript_item_chars:
            raise AgentFailure(FailureCode.OVER_LIMIT, f"transcript of item {item_id!r} passed "
                                             f"{self.limits.transcript_item_chars} characters")
        items[item_id] = item
        self._count_session(len(checked))
        return checked

    def _count_session(self, chars: int) -> None:
        self._session_chars += chars
        if self._session_chars > self.limits.transcript_session_chars:
            raise AgentFailure(FailureCode.OVER_LIMIT, f"the session's transcript text passed "
                                             f"{self.limits.transcript_session_chars} characters")

    def _audio(self, event: AudioDelta) -> AudioDelta:
        pcm = event.pcm
        if type(pcm) is not bytes:
            raise AgentFailure(FailureCode.BAD_AUDIO, f"AudioDelta.pcm is {type(pcm).__name__}, not bytes")
        if len(pcm) % 2:
            raise AgentFailure(FailureCode.BAD_AUDIO, f"AudioDelta.pcm has {len(pcm)} bytes: PCM16 samples are 2 bytes each")
        if len(pcm) > self.limits.audio_delta_bytes:
            raise AgentFailure(FailureCode.OVER_LIMIT, f"AudioDelta.pcm has {len(pcm)} bytes "
                                             f"(limit {self.limits.audio_delta_bytes})")
        return AudioDelta(pcm, *self._ids_of(event))

    def _transcript_delta(self, event: TranscriptDelta) -> TranscriptDelta:
        response_id, item_id = self._ids_of(event)
        text = self._text(event.text, "TranscriptDelta.text", response_id, item_id, replaces=False)
        return TranscriptDelta(text, response_id, item_id, self._words(event.words))

    def _words(self, words: object) -> tuple[tuple[str, int, int], ...] | None:
        if words is None:
            return None
        if type(words) not in (tuple, list) or len(words) > self.limits.transcript_item_chars:  # type: ignore[arg-type]
            raise _malformed("TranscriptDelta.words", words, "a bounded tuple of (word, start_ms, end_ms)")
        checked = []
        for word in words:  # type: ignore[attr-defined]
            if type(word) not in (tuple, list) or len(word) != 3:
                raise _malformed("TranscriptDelta.words item", word, "(word, start_ms, end_ms)")
            text = _str(word[0], "a timed word", self._ids)
            start, end = _opt_int(word[1], "a word's start_ms"), _opt_int(word[2], "a word's end_ms")
            if start is None or end is None:
                raise _malformed("a word's times", None, "int")
            self._count_session(len(text))
            checked.append((text, start, end))
        return tuple(checked)

    def _transcript_done(self, event: TranscriptDone) -> TranscriptDone:
        response_id, item_id = self._ids_of(event)
        return TranscriptDone(self._text(event.text, "TranscriptDone.text", response_id, item_id, replaces=True),
                              response_id, item_id)

    def _user_transcript(self, event: UserTranscript) -> UserTranscript:
        text = _str(event.text, "UserTranscript.text", self.limits.transcript_item_chars)
        self._count_session(len(text))
        if type(event.final) is not bool:
            raise _malformed("UserTranscript.final", event.final, "bool")
        return UserTranscript(text, event.final, self._id(event.item_id))

    def _call_id(self, value: object, what: str) -> str:
        """A tool call id, counted among the session's calls (bounded as its items are)."""
        call_id = _str(value, what, self._ids)
        if call_id not in self._calls:
            self._calls.add(call_id)
            if len(self._calls) > self.limits.items_per_session:
                raise AgentFailure(FailureCode.OVER_LIMIT, f"the agent named {len(self._calls)} tool calls in the session "
                                                 f"(limit {self.limits.items_per_session})")
        return call_id

    def _tool_call(self, event: ToolCallRequested) -> ToolCallRequested:
        arguments = _str(event.arguments, "ToolCallRequested.arguments", self.limits.tool_arguments_chars)
        self._argument_chars += len(arguments)
        if self._argument_chars > self.limits.tool_arguments_session_chars:
            raise AgentFailure(FailureCode.OVER_LIMIT, f"the session's tool call arguments passed "
                                             f"{self.limits.tool_arguments_session_chars} characters")
        return ToolCallRequested(
            self._call_id(event.call_id, "ToolCallRequested.call_id"),
            _str(event.name, "ToolCallRequested.name", self._ids),
            arguments,
            *self._ids_of(event),
        )

    def _tool_cancel(self, event: ToolCallCancelled) -> ToolCallCancelled:
        ids = event.call_ids
        if type(ids) not in (tuple, list) or len(ids) > self.limits.events_per_poll:
            raise _malformed("ToolCallCancelled.call_ids", ids, "a bounded tuple of str")
        return ToolCallCancelled(tuple(self._call_id(i, "a cancelled call id") for i in ids))

    def _mcp_call(self, event: McpCallReported) -> McpCallReported:
        if event.error is not None:
            self._count_error()
        return McpCallReported(
            _str(event.call_id, "McpCallReported.call_id", self._ids),
            _str(event.name, "McpCallReported.name", self._ids),
            _choice(event.status, "McpCallReported.status", _MCP_STATUSES),
            self._response_id(event.response_id),
            _opt_str(event.error, "McpCallReported.error", self.limits.transcript_item_chars),
        )

    def _response_done(self, event: ResponseDone) -> ResponseDone:
        response_id = self._response_id(event.response_id)
        if response_id is None:
            self._unnamed_responses += 1
            self._count_responses()
        self._item_chars.pop(response_id, None)  # a new response starts its items' counts afresh
        return ResponseDone(response_id, self._usage(event.usage), _opt_str(event.status, "ResponseDone.status", self._ids))

    def _usage(self, usage: object) -> Usage | None:
        if usage is None:
            return None
        if type(usage) is not Usage:
            raise _malformed("ResponseDone.usage", usage, "Usage")
        return Usage(**{name: _opt_int(getattr(usage, name), f"Usage.{name}") for name in Usage.__slots__})

    def _count_error(self) -> None:
        self._errors += 1
        if self._errors > self.limits.errors_per_session:
            raise AgentFailure(FailureCode.OVER_LIMIT, f"the agent reported {self._errors} errors in the session "
                                             f"(limit {self.limits.errors_per_session})")

    def _adapter_error(self, event: AdapterError) -> AdapterError:
        self._count_error()
        return AdapterError(
            _str(event.message, "AdapterError.message", self.limits.transcript_item_chars),
            _choice(event.kind, "AdapterError.kind", _ERROR_KINDS),
            _opt_seconds(event.retry_after_s, "AdapterError.retry_after_s"),
            _opt_str(event.code, "AdapterError.code", self._ids),
        )
