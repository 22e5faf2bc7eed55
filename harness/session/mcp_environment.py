"""The session's environment port over a sandboxed task server, through its control API.

The harness lists and calls the tools for an agent it bridges on the server's control plane
(``GET /control/tools``, ``POST /control/call``), never on ``/mcp``: the control plane is the
harness's authenticated channel (a unix socket in the session's private directory, plus the control
token), so each call carries its own media time and costs one request. ``/mcp`` is the agent's door
(native tool mode, a provider's MCP client) and stamps calls with the media time the harness last
set through the control plane; what an MCP caller sends cannot move it. Both paths run the same
``TaskServer.call_tool``, so the records, and the grades, are those of a session run in process.

Arguments that are not a JSON object (a model emitted a list or a string) are sent as they are, and
the server refuses them like the in-process environment does, so the refusal is logged and graded
identically. What the model sends is data, never a reason to fail the session: a tool name or
arguments that cannot be sent at all (a lone surrogate, NaN, nesting or size beyond the limits) are
not sent; the server is told why instead and logs the call as refused, so the model sees a tool
error and is graded for it.

Failures are blamed where the request failed, never by a catch-all: the sandbox's transport (a
refused or reset connection, a timeout, a 5xx, the server process or container gone) raises
:class:`SandboxUnavailableError` (infrastructure, retried, never the model's fault); a control
request the server refused (:class:`ControlRequestError`) or a call our handler failed on (its
record's ``server_fault``: :class:`HarnessBug`) is a harness bug; anything else raised here is our
own code's and propagates as what it is. A snapshot that the control API cannot give is recovered
from the persisted state file, and :attr:`McpEnvironment.snapshot_recovered` says so.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, ExitStack
from typing import Any

from mcp_servers.argument_validation import arguments_problem, loggable_name
from mcp_servers.public_bundle import PublicBundle
from mcp_servers.records import ApprovalToken, EnvironmentSnapshot, SnapshotDelta, ToolCallRecord
from mcp_servers.state_file import fold_journal, journal_lines
from sandbox.backend import SandboxBackend, SandboxEnvironment
from sandbox.errors import SandboxUnavailableError
from sandbox.session_files import owned_temp_dir

from .tool_faults import checked_record

__all__ = ["McpEnvironment", "SandboxedEnvironments"]

log = logging.getLogger(__name__)

SandboxStarter = Callable[[], AbstractAsyncContextManager[SandboxEnvironment]]

#: How long one tool call (or the listing) may take before the sandbox counts as unavailable.
DEFAULT_CALL_TIMEOUT_S = 30.0


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
        self.snapshot_recovered = False

    async def __aenter__(self) -> McpEnvironment:
        await self._connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Tear down the sandbox when this object started it."""
        await self._sandbox_stack.aclose()

    @property
    def sandbox(self) -> SandboxEnvironment:
        if self._sandbox is None:
            raise RuntimeError("McpEnvironment is not connected yet (call a method or enter it first)")
        return self._sandbox

    async def _connect(self) -> SandboxEnvironment:
        if self._sandbox is None:
            assert callable(self._source)
            self._sandbox = await self._sandbox_stack.enter_async_context(self._source())
        return self._sandbox

    async def list_tools(self) -> list[dict[str, Any]]:
        sandbox = await self._connect()
        return [
            {"name": tool["name"], "description": tool.get("description") or "", "parameters": tool["parameters"]}
            for tool in await sandbox.control.tools(timeout_s=self._call_timeout_s)
        ]

    async def call_tool(self, name: str, args: Any, media_time_ms: int) -> ToolCallRecord:
        """One call, its media time with it (the control client blames its own failures:
        :class:`SandboxUnavailableError`, :class:`ControlRequestError`)."""
        sandbox = await self._connect()
        sent_name, arguments, refused = _request_parts(name, args)
        record = await sandbox.control.call_tool(
            sent_name, arguments, media_time_ms, refused=refused, timeout_s=self._call_timeout_s
        )
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


def _request_parts(name: str, args: Any) -> tuple[str, Any, dict[str, str | None] | None]:
    """``(name, arguments, refused)`` that can always be encoded, whatever the model sent.

    The name is made loggable (escaped, shortened) exactly as the server logs it; arguments that
    cannot be sent are replaced by the reason (``refused``), which the server logs as the call's
    refusal.
    """
    sent_name = loggable_name(name)
    problem = arguments_problem(args)
    if problem is not None:
        log.warning("tool call %s: arguments refused before sending: %s", sent_name, problem.message)
        return sent_name, None, {"message": problem.message, "logged": problem.logged}
    if sent_name != name:
        log.warning("tool call: a name that cannot be sent as is was escaped to %s", sent_name)
    return sent_name, args, None


class SandboxedEnvironments:
    """An environment factory (``make_env``) that gives each session its own sandbox.

    For ``validate_task(task_dir, make_env=...)`` and runners that build environments from bundles:
    the sandbox starts on the environment's first use; :meth:`aclose` tears every one down.
    """

    def __init__(self, backend: SandboxBackend, *, run_id: str | None = None) -> None:
        self.backend = backend
        # Every session here is bridged (through the control plane): nothing else calls the tools.
        backend.expects_mcp_clients = False
        self.run_id = run_id or uuid.uuid4().hex[:12]
        # Owner-stamped, so a killed harness's copy is swept like its tokens.
        self._files = ExitStack()
        self._public_root = self._files.enter_context(owned_temp_dir("apexvoice-public-"))
        self._environments: list[McpEnvironment] = []

    def __call__(self, public: PublicBundle) -> McpEnvironment:
        public_dir = self._public_root / f"{public.task_id}-{len(self._environments)}"
        public.write(public_dir)

        def start() -> AbstractAsyncContextManager[SandboxEnvironment]:
            return self.backend.start(public_dir, self.run_id, task_id=public.task_id)

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
