"""The state one task server holds for its one session: the environment, its media clock, its
persisted state and its call stream (:class:`TaskServer`), and the keys its tool results carry.

The apps that serve it are built elsewhere: the control API (:mod:`.control_api`), the MCP app
(:mod:`.mcp_app`) and the listeners gating them (:mod:`.server`). Each imports this module and none
imports another's, so the server's modules form no import circle.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from .argument_validation import ArgumentsProblem
from .bundle_upload import TaskAlreadyLoadedError
from .call_stream import CallStream
from .environment import TaskEnvironment
from .public_bundle import PublicBundle
from .records import ToolCallRecord
from .state_file import StateJournal

__all__ = ["CALL_INDEX_META_KEY", "CALL_RECORD_META_KEY", "MAX_REQUEST_BODY", "TaskServer"]

#: ``_meta`` key on every tool result: the call's index in the call log (``/control/calls/{index}``).
CALL_INDEX_META_KEY = "apex_voice/call_index"

#: ``_meta`` key on every tool result: the whole ``ToolCallRecord`` as JSON, so an MCP client needs
#: one request per call to know what it did. It holds nothing the caller does not already know (its
#: own call, the output it was shown, the fields it changed).
CALL_RECORD_META_KEY = "apex_voice/call_record"

#: Tool arguments larger than this are refused by the environment; the HTTP body cap sits above it.
MAX_REQUEST_BODY = 1024 * 1024

class TaskServer:
    """The environment, its media clock, its persisted state and its call stream, for one session.

    ``bundle`` and ``env`` are ``None`` until a task is loaded (at construction or by :meth:`load`).
    """

    def __init__(self, bundle: PublicBundle | None = None, *, state_file: Path | None = None) -> None:
        self.bundle: PublicBundle | None = None
        self.env: TaskEnvironment | None = None
        self.media_time_ms = 0
        self.calls = CallStream()
        self.state_file = StateJournal(state_file) if state_file else None
        # Calls are applied one at a time so the log order is the execution order.
        self._lock = asyncio.Lock()
        if bundle is not None:
            self.load(bundle)

    @property
    def task_id(self) -> str | None:
        return self.bundle.task_id if self.bundle is not None else None

    def refuse_second_load(self) -> None:
        """Raise :class:`TaskAlreadyLoadedError` when a task is loaded: a server is never reused."""
        if self.bundle is not None:
            raise TaskAlreadyLoadedError(
                f"this server already serves task {self.bundle.task_id!r}; a server serves one session"
            )

    def load(self, bundle: PublicBundle) -> None:
        """Serve ``bundle`` from now on; refused when a task is already loaded."""
        self.refuse_second_load()
        env = TaskEnvironment(bundle)
        self.bundle, self.env = bundle, env
        if self.state_file is not None:
            self.state_file.start(env.journal_base())

    def loaded_env(self) -> TaskEnvironment:
        if self.env is None:
            raise RuntimeError("no task is loaded on this server yet (POST /control/load)")
        return self.env

    async def call_tool(
        self, name: str, args: Any | ArgumentsProblem, *, media_time_ms: int | None = None
    ) -> tuple[ToolCallRecord, dict[str, Any]]:
        """Run one call; returns its record and that record as JSON (as published and persisted).

        The call is stamped with the server's media time, which only the harness sets: through the
        control plane beforehand (``/control/media_time``, for an MCP caller), or as
        ``media_time_ms`` with the call itself (the harness's own calls, ``/control/call``), which
        sets the media time for the calls that follow too. An MCP caller's call (native tool mode)
        is stamped no earlier than the last grant, revocation, event or call the server holds: the
        pushed clock lags by up to a push interval while those carry their exact time, and a call
        that reaches the server after a grant did not happen before it (issue 33, break 7).
        """
        env = self.loaded_env()
        async with self._lock:
            if media_time_ms is not None:
                self.media_time_ms = media_time_ms
                at = media_time_ms
            else:
                at = max(self.media_time_ms, env.media_time_ms)
            record = env.call_tool(name, args, at)
            await self.persist()
            record_json = record.model_dump(mode="json")
            self.calls.publish(record_json)
        return record, record_json

    async def persist(self) -> None:
        """Append what the last operation changed to the state journal (nothing when unchanged)."""
        if self.state_file is not None:
            changes = self.loaded_env().journal_changes()
            if changes is not None:
                self.state_file.append(changes)
