"""The session's environment port over a sandboxed task server (MCP for tools, control API for the rest).

Tools are listed and called with the official ``mcp`` client over streamable HTTP, exactly as a
native MCP agent would; each result carries the full :class:`ToolCallRecord` in its ``_meta``
(one request per call), so a session graded through the sandbox sees the same records as one run
in process. Every request carries the session's agent token (``SandboxEnvironment.mcp_headers``).

Arguments that are not a JSON object (a model emitted a list or a string) cannot travel as MCP
``arguments``; they are forwarded in ``_meta`` and the server refuses them like the in-process
environment does, so the refusal is logged and graded identically. What the model sends is data,
never a reason to fail the session: a tool name or arguments that cannot be sent at all (a lone
surrogate, NaN, nesting or size beyond the limits) are not sent; the server is told why instead and
logs the call as refused, so the model sees a tool error and is graded for it.

Media time is set through the control plane before each call (the server ignores any media time in
a caller's ``_meta``), so a native agent on the same endpoint cannot stamp its own calls.

Failures are blamed where the request failed, never by a catch-all: the sandbox's transport (a
refused or reset connection, a timeout, the server process or container gone) raises
:class:`SandboxUnavailableError` (infrastructure, retried, never the model's fault); a server that
answered but refused (a JSON-RPC error, its own fault on a call, a control request it rejected)
is a harness bug (:class:`HarnessBug`, :class:`ControlRequestError`); anything else raised here is
our own code's and propagates as what it is. A snapshot that the control API cannot give is recovered from the persisted state file, and
:attr:`McpEnvironment.snapshot_recovered` says so.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, ExitStack, suppress
from typing import Any

import httpx2
import mcp.types as mcp_types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from harness.errors import HarnessBug
from harness.tasks.bundle import TaskBundle
from mcp_servers.argument_validation import arguments_problem, loggable_name
from mcp_servers.records import ApprovalToken, EnvironmentSnapshot, SnapshotDelta, ToolCallRecord
from mcp_servers.server import CALL_RECORD_META_KEY, RAW_ARGUMENTS_META_KEY, REFUSED_ARGUMENTS_META_KEY
from mcp_servers.state_file import fold_journal, journal_lines
from sandbox.backend import SandboxBackend, SandboxEnvironment
from sandbox.errors import SandboxUnavailableError
from sandbox.session_files import owned_temp_dir

from .tool_faults import checked_record

__all__ = ["McpEnvironment", "SandboxedEnvironments"]

log = logging.getLogger(__name__)

SandboxStarter = Callable[[], AbstractAsyncContextManager[SandboxEnvironment]]

#: JSON-RPC errors that mean the server never answered (it stalled, or its stream ended).
_NO_ANSWER_CODES = frozenset({mcp_types.REQUEST_TIMEOUT, mcp_types.CONNECTION_CLOSED})

DEFAULT_CALL_TIMEOUT_S = 30.0
_CLIENT_CLOSE_S = 5.0


class _ClientTask:
    """The MCP client, running in a task of its own.

    The SDK client runs an anyio task group inside the task that enters it; when its transport
    fails (the server died), that group cancels the entering task. Isolated here, a dead server
    fails only this task, and every pending and later request gets a clean error instead.
    """

    def __init__(self, url: str, timeout_s: float, headers: dict[str, str]) -> None:
        self.url = url
        self._headers = headers
        self._timeout_s = timeout_s
        self._requests: asyncio.Queue[tuple[Callable[[Client], Awaitable[Any]], asyncio.Future[Any]] | None]
        self._requests = asyncio.Queue()
        self._failure: BaseException | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._serve(ready), name=f"mcp-client {self.url}")
        await ready

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        pending: asyncio.Future[Any] | None = None
        try:
            async with (
                # Plain HTTP (a sandbox's URL) never uses the CA bundle: skip loading it per session.
                httpx2.AsyncClient(headers=self._headers, timeout=httpx2.Timeout(self._timeout_s),
                                   verify=not self.url.startswith("http://")) as http,
                Client(streamable_http_client(self.url, http_client=http), read_timeout_seconds=self._timeout_s) as client,
            ):
                ready.set_result(None)
                while (request := await self._requests.get()) is not None:
                    operation, pending = request
                    try:
                        pending.set_result(await operation(client))
                    except Exception as exc:
                        pending.set_exception(exc)
                    pending = None
        except BaseException as exc:  # the transport failed and cancelled us, or we are shut down
            self._failure = exc
        finally:
            self._failure = self._failure or RuntimeError("MCP client closed")
            error = SandboxUnavailableError(f"MCP client for {self.url} stopped: {self._failure!r}")
            if not ready.done():
                ready.set_exception(error)
            for future in [pending, *self._drain()]:
                if future is not None and not future.done():
                    future.set_exception(error)

    def _drain(self) -> list[asyncio.Future[Any]]:
        futures = []
        while not self._requests.empty():
            request = self._requests.get_nowait()
            if request is not None:
                futures.append(request[1])
        return futures

    async def run(self, operation: Callable[[Client], Awaitable[Any]]) -> Any:
        if self._failure is not None:
            raise SandboxUnavailableError(f"MCP client for {self.url} stopped: {self._failure!r}")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        await self._requests.put((operation, future))
        return await future

    async def aclose(self) -> None:
        if self._task is None or self._task.done():
            return
        await self._requests.put(None)
        try:
            await asyncio.wait_for(asyncio.shield(self._task), _CLIENT_CLOSE_S)
        except TimeoutError:
            self._task.cancel()
            with suppress(BaseException):
                await self._task


class McpEnvironment:
    """Implements ``EnvironmentPort`` over a running sandbox (or one started on first use).

    Give it a :class:`SandboxEnvironment` that someone else tears down, or a starter (a
    ``backend.start(...)`` context factory) that it enters on first use and exits in :meth:`aclose`.
    """

    def __init__(
        self, sandbox: SandboxEnvironment | SandboxStarter, *, call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S
    ) -> None:
        self._source = sandbox
        self._sandbox = sandbox if isinstance(sandbox, SandboxEnvironment) else None
        self._call_timeout_s = call_timeout_s
        self._sandbox_stack = AsyncExitStack()
        self._client: _ClientTask | None = None
        # A call's media time and the call itself go out as one unit.
        self._call_lock = asyncio.Lock()
        self.snapshot_recovered = False

    async def __aenter__(self) -> McpEnvironment:
        await self._connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the MCP client, then (when this object started it) the sandbox.

        A client whose server already died fails while closing; that must not keep the sandbox
        from being torn down, nor hide the error that ended the session.
        """
        client, self._client = self._client, None
        try:
            if client is not None:
                await client.aclose()
        finally:
            await self._sandbox_stack.aclose()

    @property
    def sandbox(self) -> SandboxEnvironment:
        if self._sandbox is None:
            raise RuntimeError("McpEnvironment is not connected yet (call a method or enter it first)")
        return self._sandbox

    async def _connect(self) -> _ClientTask:
        if self._client is not None:
            return self._client
        if self._sandbox is None:
            assert callable(self._source)
            self._sandbox = await self._sandbox_stack.enter_async_context(self._source())
        client = _ClientTask(self._sandbox.mcp_url, self._call_timeout_s, self._sandbox.mcp_headers())
        await client.start()
        self._client = client
        return client

    async def list_tools(self) -> list[dict[str, Any]]:
        client = await self._connect()
        try:
            listing = await client.run(lambda c: c.list_tools())
        except (MCPError, httpx2.TransportError, OSError) as exc:
            raise _blamed(f"tools/list at {self.sandbox.mcp_url}", exc) from exc
        return [
            {"name": tool.name, "description": tool.description or "", "parameters": tool.input_schema}
            for tool in listing.tools
        ]

    async def call_tool(self, name: str, args: Any, media_time_ms: int) -> ToolCallRecord:
        client = await self._connect()
        sent_name, arguments, meta = _request_parts(name, args)
        try:
            async with self._call_lock:
                # The control client blames its own failures (SandboxUnavailableError, ControlRequestError).
                await self.sandbox.control.set_media_time(media_time_ms)
                result = await client.run(lambda c: c.call_tool(sent_name, arguments, meta=meta))  # type: ignore[arg-type]
        except (MCPError, httpx2.TransportError, OSError) as exc:
            raise _blamed(f"tools/call {sent_name} at {self.sandbox.mcp_url}", exc) from exc
        record = (result.meta or {}).get(CALL_RECORD_META_KEY)
        if not isinstance(record, dict):
            raise HarnessBug(f"tools/call {sent_name}: our task server's result carries no {CALL_RECORD_META_KEY!r}")
        return checked_record(ToolCallRecord.model_validate(record))

    async def grant_approval(
        self, action_type: str, target_id: str, media_time_ms: int, source_event_id: str | None
    ) -> ApprovalToken:
        await self._connect()
        data = await self.sandbox.control.grant(action_type, target_id, media_time_ms, source_event_id)
        return ApprovalToken.model_validate(data)

    async def revoke_approval(self, action_type: str, target_id: str, media_time_ms: int) -> list[str]:
        await self._connect()
        return await self.sandbox.control.revoke(action_type, target_id, media_time_ms)

    async def apply_event(
        self, event_id: str, *, stale_fields: list[str], world_updates: dict[str, Any], media_time_ms: int
    ) -> None:
        await self._connect()
        await self.sandbox.control.apply_event(
            event_id, stale_fields=stale_fields, world_updates=world_updates, media_time_ms=media_time_ms
        )

    async def follow_calls(self) -> AsyncIterator[ToolCallRecord]:
        """The server's call stream: every call it records, the agent's own included."""
        async for record in self.sandbox.control.follow(after=0):
            yield checked_record(ToolCallRecord.model_validate(record))

    async def set_media_time(self, media_time_ms: int) -> int:
        return await self.sandbox.control.set_media_time(media_time_ms)

    async def snapshot_since(self, cursor: dict[str, int]) -> SnapshotDelta:
        await self._connect()
        return SnapshotDelta.model_validate(await self.sandbox.control.snapshot_since(cursor))

    async def snapshot(self) -> EnvironmentSnapshot:
        """From the control API; from the persisted state file when the server does not answer."""
        await self._connect()
        try:
            data = await self.sandbox.control.snapshot()
        except SandboxUnavailableError as live_error:
            try:
                data = fold_journal(journal_lines(await self.sandbox.read_persisted_state()))
            except (SandboxUnavailableError, ValueError) as file_error:
                raise SandboxUnavailableError(
                    f"snapshot: control API failed ({live_error}); state file failed ({file_error})"
                ) from file_error
            log.warning("snapshot recovered from the state file: %s", live_error)
            self.snapshot_recovered = True
        return EnvironmentSnapshot.model_validate(data)


def _blamed(request: str, exc: MCPError | httpx2.TransportError | OSError) -> SandboxUnavailableError | HarnessBug:
    """A failed MCP request, blamed by where it failed: no answer is the sandbox's (retried); an
    answer that refused us (any JSON-RPC error: a bad request, a fault of our server's handler,
    a status our own gate gave) is our bug, since both ends are the harness's code."""
    if isinstance(exc, MCPError) and exc.code not in _NO_ANSWER_CODES:
        return HarnessBug(f"{request}: the task server answered JSON-RPC error {exc.code}: {exc.message} (data {exc.data!r})")
    return SandboxUnavailableError(f"{request} failed: {exc!r}")


def _request_parts(name: str, args: Any) -> tuple[str, dict[str, Any] | None, dict[str, Any]]:
    """``(name, arguments, _meta)`` that can always be encoded, whatever the model sent.

    The name is made loggable (escaped, shortened) exactly as the server logs it; arguments that
    cannot be sent are replaced by the reason, which the server logs as the call's refusal.
    """
    sent_name = loggable_name(name)
    problem = arguments_problem(args)
    if problem is not None:
        log.warning("tool call %s: arguments refused before sending: %s", sent_name, problem.message)
        return sent_name, None, {REFUSED_ARGUMENTS_META_KEY: {"message": problem.message, "logged": problem.logged}}
    if sent_name != name:
        log.warning("tool call: a name that cannot be sent as is was escaped to %s", sent_name)
    if args is not None and not isinstance(args, dict):
        return sent_name, None, {RAW_ARGUMENTS_META_KEY: args}
    return sent_name, args, {}


class SandboxedEnvironments:
    """An environment factory (``make_env``) that gives each session its own sandbox.

    For ``validate_task(task_dir, make_env=...)`` and runners that build environments from bundles:
    the sandbox starts on the environment's first use; :meth:`aclose` tears every one down.
    """

    def __init__(self, backend: SandboxBackend, *, run_id: str | None = None) -> None:
        self.backend = backend
        self.run_id = run_id or uuid.uuid4().hex[:12]
        # Owner-stamped, so a killed harness's copy is swept like its tokens.
        self._files = ExitStack()
        self._public_root = self._files.enter_context(owned_temp_dir("apexvoice-public-"))
        self._environments: list[McpEnvironment] = []

    def __call__(self, bundle: TaskBundle) -> McpEnvironment:
        public_dir = self._public_root / f"{bundle.task_id}-{len(self._environments)}"
        bundle.public_bundle().write(public_dir)

        def start() -> AbstractAsyncContextManager[SandboxEnvironment]:
            return self.backend.start(public_dir, self.run_id, task_id=bundle.task_id)

        environment = McpEnvironment(start)
        self._environments.append(environment)
        return environment

    async def aclose(self) -> None:
        try:
            while self._environments:
                environment = self._environments.pop()
                try:
                    await environment.aclose()
                except Exception:
                    log.exception("tearing down a sandboxed environment failed")
        finally:
            self._files.close()

    async def __aenter__(self) -> SandboxedEnvironments:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
