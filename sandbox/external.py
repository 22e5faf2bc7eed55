"""A task server that is already running (the compose stack's ``task-mcp``), used for one session.

The harness did not start it, so it cannot tear it down or read its state file; it can only
connect, and refuse to reuse it: one server serves one session. A server that does not answer is
reported as such (and does not count as used), so retries say what is wrong.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

from .backend import SandboxBackend, SandboxEnvironment
from .control_client import ControlClient
from .errors import ControlRequestError, SandboxUnavailableError
from .session_files import CONTROL_SOCKET_NAME

__all__ = ["ExternalBackend"]


class ExternalBackend(SandboxBackend):
    name: ClassVar[str] = "external"

    def __init__(self, mcp_url: str, token: str, *, control_socket: Path) -> None:
        self.mcp_url = mcp_url
        self.token = token
        self.control_socket = control_socket
        self._used = False

    @classmethod
    def from_token_file(cls, mcp_url: str, token_file: Path) -> ExternalBackend:
        """The server's control socket is the one beside its token file (the compose stack's
        ``control`` volume holds both)."""
        socket = token_file.parent / CONTROL_SOCKET_NAME
        return cls(mcp_url, token_file.read_text(encoding="utf-8").strip(), control_socket=socket)

    def start(self, public_dir: Path, run_id: str, *, task_id: str) -> Any:
        return self._session()

    def _control(self) -> ControlClient:
        return ControlClient("", self.token, uds=str(self.control_socket))

    async def check(self) -> None:
        """Raise :class:`SandboxUnavailableError` unless the server answers its health probe."""
        control = self._control()
        try:
            await control.health()
        except (SandboxUnavailableError, ControlRequestError) as exc:
            raise SandboxUnavailableError(f"the task server at {self.mcp_url} does not answer: {exc}") from exc
        finally:
            await control.aclose()

    @asynccontextmanager
    async def _session(self) -> AsyncIterator[SandboxEnvironment]:
        if self._used:
            raise SandboxUnavailableError(
                f"{self.mcp_url} already served a session; an external server serves exactly one"
            )
        await self.check()
        self._used = True
        control = self._control()

        async def no_state_file() -> bytes:
            raise SandboxUnavailableError("an external server's state file is not reachable from here")

        try:
            yield SandboxEnvironment(self.mcp_url, control, self.name, no_state_file, {"address": self.mcp_url})
        finally:
            await control.aclose()
