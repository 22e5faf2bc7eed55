"""What every websocket provider adapter shares: the handshake, the reader task, the event queue.

A subclass says how to open its session (``_open_session``, which waits for the provider's
acknowledgement through ``_ready``) and how to turn one provider message into normalized events
(``_on_message``). Every failure is classified here or by the subclass (see ``errors``), at the
point where it happens, so nothing above needs to guess from an exception's type: a refused
handshake raises before the session starts; a socket closed under us becomes an ``AdapterError``
event for the runner, and sending on it is a no-op (the reader has reported it). A message the
provider sent that does not parse or validate against its wire types is the peer's malformed data
(an ``AdapterError`` of kind ``provider``, code ``malformed``); any other exception from
``_on_message`` is a bug of ours, raised as :class:`HarnessBug` from the next call the runner makes.

What the peer sends is bounded: one message may be at most ``AGENT_LIMITS.ws_message_bytes``
(the frame header is checked before its payload is read, so an announced 3 GiB frame costs
nothing); past it the socket closes with 1009 and the runner gets an ``AdapterError`` of kind
``bad_request`` and code ``over_limit`` — a provider refusal for a provider, the agent's failure
for a remote agent. The reader yields to the loop after every message, so a burst already in the
socket's buffer cannot hold the session's frames. What the client itself keeps from the peer is
bounded the same way: at most ``AGENT_LIMITS.events_pending`` events wait for the runner's next
poll, and a subclass raises :class:`PeerOverLimit` when the peer makes it keep more (names, ids,
errors) than a bound allows; both end the session with an ``AdapterError`` of code ``over_limit``.
"""

from __future__ import annotations

import asyncio
import binascii
import json
import os
from collections import deque
from typing import Any, ClassVar, Literal
from urllib.parse import urlencode, urlsplit, urlunsplit

from pydantic import BaseModel, ValidationError
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI, PayloadTooBig

from harness.agents.limits import AGENT_LIMITS
from harness.agents.realtime import AdapterError, AgentEvent, RealtimeAdapter, SessionConfig, ToolResult
from harness.audio.frames import AudioFrame
from harness.blame.codes import AdapterErrorCode
from harness.blame.errors import HarnessBug

from .errors import (
    ProviderRefused,
    ProviderUnavailable,
    classify_close,
    classify_error,
    classify_status,
    raise_for,
)

__all__ = ["MalformedMessage", "PeerOverLimit", "WebsocketAdapter", "check_bound", "with_query"]

class MalformedMessage(ValueError):
    """Raised by a subclass's ``_on_message`` for data the wire types cannot check (odd PCM bytes)."""


class PeerOverLimit(Exception):
    """Raised by a subclass's ``_on_message`` when the peer would make it keep more than a bound
    allows (:class:`~harness.agents.limits.AgentLimits`); the message says what and which bound."""


def check_bound(count: int, limit: int, what: str) -> None:
    """Raise :class:`PeerOverLimit` when ``count`` passes ``limit``."""
    if count > limit:
        raise PeerOverLimit(f"{what}: {count} (limit {limit})")


#: The provider's data, not our code, is wrong: base64 that does not decode is part of parsing.
_MALFORMED = (ValidationError, binascii.Error, MalformedMessage)
_MESSAGE_HEAD = 120

def with_query(url: str, **params: str | None) -> str:
    """``url`` with ``params`` (those not None) added to its query string."""
    parts = urlsplit(url)
    extra = urlencode({k: v for k, v in params.items() if v is not None})
    query = "&".join(q for q in (parts.query, extra) if q)
    return urlunsplit(parts._replace(query=query))


class WebsocketAdapter(RealtimeAdapter):
    #: Name used in every message ("OpenAI", "xAI", ...).
    provider: ClassVar[str]
    #: Environment variables holding the key (the first non-empty one is used).
    api_key_env: ClassVar[tuple[str, ...]] = ()
    #: Environment variable overriding the endpoint.
    endpoint_env: ClassVar[str | None] = None
    default_endpoint: ClassVar[str]
    default_model: ClassVar[str | None] = None
    #: How long the handshake plus the provider's session acknowledgement may take.
    open_timeout_s: ClassVar[float] = 20.0
    #: In native tool mode the provider's own MCP client calls the task's endpoint.
    mcp_client: ClassVar[Literal["agent", "provider"]] = "provider"

    def __init__(self, *, endpoint: str | None = None, model: str | None = None, require_key: bool = True) -> None:
        self.endpoint = endpoint or (os.environ.get(self.endpoint_env, "").strip() if self.endpoint_env else "") or self.default_endpoint
        self.provider_model = self.default_model if model is None else model
        self.require_key = require_key
        self._events: deque[AgentEvent] = deque()
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._closing = False
        self._failed = False
        #: Our own ``_on_message`` failed: raised from every later call of the runner.
        self._bug: HarnessBug | None = None
        #: Media time of the newest user frame (the adapter's clock for playback estimates).
        self.now_ms = 0
        self._session_meta: dict[str, Any] = {}

    # -- what subclasses provide -------------------------------------------------------------

    def _url(self) -> str:
        return self.endpoint

    def _headers(self, api_key: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}

    async def _open_session(self, config: SessionConfig) -> None:
        """Send the session set-up; ``connect`` then waits for ``_ready``."""
        raise NotImplementedError

    async def _on_message(self, message: dict[str, Any]) -> None:
        raise NotImplementedError

    # -- connection ------------------------------------------------------------------------

    def api_key(self) -> str | None:
        for name in self.api_key_env:
            value = os.environ.get(name, "").strip()
            if value:
                return value
        if self.require_key and self.api_key_env:
            raise ProviderRefused(
                AdapterError(f"{self.provider}: set {' or '.join(self.api_key_env)} in your environment or .env", kind="auth")
            )
        return None

    async def _open(self) -> ClientConnection:
        """The websocket handshake, its failures classified (refused: raise; unreachable: transient)."""
        url = self._url()
        try:
            return await connect(
                url, additional_headers=self._headers(self.api_key()), max_size=AGENT_LIMITS.ws_message_bytes,
                compression=None,
                open_timeout=self.open_timeout_s,
            )
        except InvalidStatus as exc:
            response = exc.response
            raise_for(classify_status(self.provider, response.status_code, response.headers, response.body.decode(errors="replace")))
        except InvalidURI as exc:
            raise ProviderRefused(AdapterError(f"{self.provider}: bad endpoint {url!r}: {exc}", kind="bad_request")) from None
        except (OSError, TimeoutError, InvalidHandshake) as exc:
            raise ProviderUnavailable(
                AdapterError(f"{self.provider}: cannot connect to {url}: {type(exc).__name__}: {exc}", kind="transient")
            ) from exc
        raise AssertionError("unreachable")

    def _start_reader(self) -> None:
        assert self._ws is not None
        self._ready = asyncio.get_running_loop().create_future()
        self._reader = asyncio.create_task(self._read(self._ws), name=f"{self.provider}-reader")

    async def _await_ready(self) -> None:
        assert self._ready is not None
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), self.open_timeout_s)
        except TimeoutError:
            raise ProviderUnavailable(
                AdapterError(f"{self.provider}: no session acknowledgement within {self.open_timeout_s:.0f} s", kind="transient")
            ) from None

    async def connect(self, config: SessionConfig) -> None:
        self._ws = await self._open()
        self._start_reader()
        try:
            await self._open_session(config)
            await self._await_ready()
        except BaseException:
            await self.close()
            raise

    async def _resume(self) -> bool:
        """The provider closed the socket: reopen the same session if the protocol allows it."""
        return False

    def _session_ready(self, **metadata: Any) -> None:
        self._session_meta.update(metadata)
        if self._ready is not None and not self._ready.done():
            self._ready.set_result(None)

    def _fail(self, error: AdapterError) -> None:
        """A terminal provider error: refuse ``connect`` if still opening, else tell the runner."""
        if self._failed:
            return
        self._failed = True
        if self._ready is not None and not self._ready.done():
            self._ready.set_exception(ProviderUnavailable(error) if error.transient else ProviderRefused(error))
        else:
            self._events.append(error)

    def _provider_error(self, error_type: str | None, code: str | None, message: str) -> None:
        """An ``error`` event: refuse the session while opening; after that, only auth, rate limits
        and infrastructure end it (a request error on one event is the provider's remark on it)."""
        error = classify_error(self.provider, error_type, code, message)
        if error is None:
            return  # a benign race (e.g. the server already started the continuation itself)
        opening = self._ready is not None and not self._ready.done()
        if opening or error.kind in ("transient", "rate_limited", "auth"):
            self._fail(error)
        else:
            self._events.append(AdapterError(error.message, kind="provider", code=error.code))

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for raw in ws:
                try:
                    message = json.loads(raw)
                except (TypeError, ValueError):
                    self._malformed(raw, "is not JSON")
                    continue
                if not isinstance(message, dict):
                    self._malformed(raw, "is not a JSON object")
                    continue
                try:
                    check_bound(len(self._events) + 1, AGENT_LIMITS.events_pending, "events waiting for the runner")
                    await self._on_message(message)
                except PeerOverLimit as exc:
                    self._fail(AdapterError(f"{self.provider} passed a bound: {exc}", kind="bad_request", code=AdapterErrorCode.OVER_LIMIT))
                    await ws.close(1008, "over limit")
                    return
                except _MALFORMED as exc:
                    self._malformed(raw, f"does not fit its wire types ({type(exc).__name__}: {exc})")
                except Exception as exc:  # our bug, not the provider's nor the model's: fail loudly
                    self._report_bug(exc, raw)
                    await ws.close()
                    return
                # A burst already buffered in the socket would otherwise be read without a pause.
                await asyncio.sleep(0)
        except ConnectionClosed:
            pass
        if self._closing or ws is not self._ws or self._failed:
            return
        if isinstance(ws.protocol.parser_exc, PayloadTooBig):
            self._fail(AdapterError(
                f"{self.provider} sent a message over the {AGENT_LIMITS.ws_message_bytes}-byte limit "
                f"({ws.protocol.parser_exc}); the socket was closed with 1009", kind="bad_request", code=AdapterErrorCode.OVER_LIMIT))
            return
        if not await self._resume():
            self._fail(classify_close(self.provider, ws.close_code, ws.close_reason or ""))

    def _emit(self, event: AgentEvent) -> None:
        """Queue an event for the runner."""
        self._events.append(event)

    def _malformed(self, raw: str | bytes, problem: str) -> None:
        """The provider sent data we cannot read: its remark is logged, the session goes on."""
        head = str(raw)[:_MESSAGE_HEAD]
        self._events.append(
            AdapterError(f"{self.provider} sent a message that {problem}: {head!r}", kind="provider", code=AdapterErrorCode.MALFORMED)
        )

    def _report_bug(self, exc: Exception, raw: str | bytes) -> None:
        """Keep our ``_on_message`` failure for the runner's next call (and for ``connect``)."""
        bug = HarnessBug(f"{self.provider} adapter failed on {str(raw)[:_MESSAGE_HEAD]!r}: {exc!r}")
        bug.__cause__ = exc
        self._bug = bug
        self._failed = True
        if self._ready is not None and not self._ready.done():
            self._ready.set_exception(bug)

    def _raise_bug(self) -> None:
        if self._bug is not None:
            raise self._bug

    async def _send(self, message: BaseModel | dict[str, Any]) -> None:
        if self._ws is None or self._failed:
            return
        text = message.model_dump_json(exclude_none=True) if isinstance(message, BaseModel) else json.dumps(message)
        try:
            await self._ws.send(text)
        except ConnectionClosed:
            pass  # the reader reports why

    # -- the runner's side -----------------------------------------------------------------

    async def send_audio(self, frame: AudioFrame) -> None:
        self._raise_bug()
        self.now_ms = frame.start_ms
        await self._send_audio(frame)

    async def _send_audio(self, frame: AudioFrame) -> None:
        raise NotImplementedError

    async def send_tool_result(self, result: ToolResult) -> None:
        self._raise_bug()
        await self._send_tool_result(result)

    async def _send_tool_result(self, result: ToolResult) -> None:
        raise NotImplementedError

    def poll_events(self) -> list[AgentEvent]:
        self._raise_bug()
        events = list(self._events)
        self._events.clear()
        return events

    def metadata(self) -> dict[str, Any]:
        return {"provider": self.provider, "provider_model": self.provider_model, "endpoint": self.endpoint, **self._session_meta}

    async def close(self) -> None:
        self._closing = True
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            await self._reader
