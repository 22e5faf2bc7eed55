"""The ``local`` backend: the task server as a subprocess on a free loopback port.

For machines without a Docker engine (and for fast tests). It isolates nothing beyond a separate
process: the server runs with the harness user's rights, though with a scrubbed environment
(:mod:`sandbox.child_env`: no provider key) and its private directory as working directory. Use
``docker`` for untrusted agents.

Servers are forked from one warm process (:mod:`sandbox.forkserver`, :mod:`mcp_servers.forkserver`)
that imported the server once, so a server is up in milliseconds instead of a second of CPU, and
started ahead of need (:class:`~sandbox.warm_pool.WarmPool`): a spare boots while the previous
session runs, empty, and gets its task through ``POST /control/load`` when a session takes it.
With :attr:`~sandbox.backend.SandboxBackend.expects_mcp_clients` off (a campaign that only bridges:
the harness calls tools on the control plane) neither the forkserver nor its servers import the MCP
SDK (``--lazy-mcp``: a server imports it on the first ``/mcp`` request, if one comes).
Each server serves exactly one session and is stopped when that session ends. Servers die with the
harness: the forkserver's stdin is a pipe from it; at end of file the forkserver stops every server
and exits, and each server dies with the forkserver (``PR_SET_PDEATHSIG``), even after a SIGKILL of
the harness. The private folders such a harness leaves are removed by the next one's first session.
Everything that blocks (forks, token files, the orphan sweep, reading the task) runs off the loop.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import sys
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from .backend import SandboxBackend, SandboxEnvironment
from .child_env import child_environment, source_root
from .control_client import ControlClient
from .errors import SandboxUnavailableError
from .forkserver import ForkedServer, Forkserver, wait_or_kill
from .public_files import read_public_files
from .readiness import wait_until_ready
from .session_files import SessionFiles, owned_mkdtemp, sweep_orphaned_files
from .warm_pool import WarmPool

__all__ = ["LocalBackend"]

LOOPBACK = "127.0.0.1"
_TERMINATE_GRACE_S = 3.0
_PORT_ATTEMPTS = 3


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


def _server_environment(home: Path) -> dict[str, str]:
    """The servers' scrubbed environment (:mod:`sandbox.child_env`: no provider key reaches it),
    with the directory holding ``mcp_servers`` first on its path, then the harness's own path.
    Each forked server points ``HOME``/``TMPDIR`` at its own private directory."""
    root = source_root("mcp_servers")
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return child_environment(home=home, python_path=[*([root] if root else []), *inherited])


@dataclass
class _LocalServer:
    """One empty server process and its private files; used by one session, then stopped."""

    process: ForkedServer
    port: int
    files: SessionFiles
    spawned_at: float = field(default_factory=time.monotonic)

    def exit_reason(self) -> str | None:
        if self.process.poll() is None:
            return None
        log_tail = (
            (self.files.root / "server.log").read_text(encoding="utf-8", errors="replace")[-600:].strip()
        )
        return f"exit code {self.process.returncode}: {log_tail or 'no output'}"

    def stop(self) -> None:
        """terminate, then kill after a grace period; always removes the private files (blocking)."""
        try:
            if self.process.poll() is None:
                with suppress(ProcessLookupError):
                    self.process.terminate()
                wait_or_kill(self.process, _TERMINATE_GRACE_S)
        finally:
            self.files.remove()


class LocalBackend(SandboxBackend):
    name = "local"

    def __init__(
        self, *, python: str = sys.executable, ready_timeout_s: float = 30.0, pool_size: int = 1
    ) -> None:
        self.python = python
        self.ready_timeout_s = ready_timeout_s
        self._pool: WarmPool[_LocalServer] = WarmPool(_LocalServer.stop, size=pool_size)
        self._swept = False
        self._forkserver_home: Path | None = None
        self._forkserver = Forkserver(
            python, self._forkserver_environment, reply_timeout_s=ready_timeout_s, arguments=self._lazy_mcp
        )
        # A backend dropped without aclose() must not leave its forkserver running until we exit.
        weakref.finalize(self, self._forkserver.abandon)

    async def aclose(self) -> None:
        """Stop every spare server and the forkserver (call it once the sessions have ended)."""
        await asyncio.to_thread(self._close)

    def _close(self) -> None:
        self._pool.drain()
        self._forkserver.close()
        if self._forkserver_home is not None:
            shutil.rmtree(self._forkserver_home, ignore_errors=True)
            self._forkserver_home = None

    def _lazy_mcp(self) -> list[str]:
        """The flag that leaves the MCP SDK out of the forkserver and its servers, when no MCP client
        but the harness (which calls through the control plane) is expected."""
        return [] if self.expects_mcp_clients else ["--lazy-mcp"]

    def _forkserver_environment(self) -> tuple[dict[str, str], Path]:
        if self._forkserver_home is None or not self._forkserver_home.is_dir():
            self._forkserver_home = owned_mkdtemp("apexvoice-forkserver-")
        return _server_environment(self._forkserver_home), self._forkserver_home

    @asynccontextmanager
    async def start(
        self, public_dir: Path, run_id: str, *, task_id: str
    ) -> AsyncIterator[SandboxEnvironment]:
        started = time.monotonic()
        files = await asyncio.to_thread(read_public_files, Path(public_dir))
        server: _LocalServer | None = None
        control: ControlClient | None = None
        try:
            for attempt in range(1, _PORT_ATTEMPTS + 1):
                taken = await asyncio.to_thread(self._pool.take, self._spawn)
                server, warm = taken  # unpacked apart from the await: mypy then knows ``server`` is set
                control = ControlClient("", server.files.token, uds=str(server.files.control_socket))
                try:
                    ready_s = await wait_until_ready(
                        control.health,
                        timeout_s=self.ready_timeout_s,
                        exit_reason=partial(asyncio.to_thread, server.exit_reason),
                        what=f"local task server for {task_id}",
                    )
                    break
                except SandboxUnavailableError as exc:
                    await control.aclose()
                    await asyncio.to_thread(server.stop)
                    control = server = None
                    if "address already in use" not in str(exc).lower() or attempt == _PORT_ATTEMPTS:
                        raise
            assert server is not None and control is not None
            await control.load(files)
            start_to_ready_s = time.monotonic() - started
            # The next session's server boots while this one runs.
            await asyncio.to_thread(self._pool.refill, self._spawn)

            async def read_state() -> bytes:
                return await asyncio.to_thread(_read_state_file, server.files)

            yield SandboxEnvironment(
                mcp_url=f"http://{LOOPBACK}:{server.port}/mcp",
                control=control,
                backend=self.name,
                read_persisted_state=read_state,
                agent_token=server.files.agent_token,
                metadata={
                    "run_id": run_id,
                    "task_id": task_id,
                    "pid": server.process.pid,
                    "private_dir": str(server.files.root),
                    "address": f"{LOOPBACK}:{server.port}",
                    "warm": warm,
                    "ready_s": round(ready_s, 4),
                    "start_to_ready_s": round(start_to_ready_s, 4),
                },
            )
        finally:
            try:
                if control is not None:
                    await control.aclose()
            finally:
                if server is not None:
                    await asyncio.shield(asyncio.to_thread(server.stop))

    def _spawn(self) -> _LocalServer:
        """Fork an empty server (blocking but quick once the forkserver is warm).

        The first spawn also removes private folders a killed harness left behind.
        """
        if not self._swept:
            self._swept = True
            sweep_orphaned_files()
        files = SessionFiles.create("apexvoice-local-", for_container=False)
        port = _free_port()
        try:
            process = self._forkserver.spawn(
                [
                    "--host", LOOPBACK,
                    "--port", str(port),
                    "--token-file", str(files.token_file),
                    "--agent-token-file", str(files.agent_token_file),
                    "--control-socket", str(files.control_socket),
                    "--state-file", str(files.state_file),
                    *self._lazy_mcp(),
                ],
                cwd=files.root, home=files.root, log=files.root / "server.log",
            )  # fmt: skip
        except BaseException:
            files.remove()
            raise
        return _LocalServer(process=process, port=port, files=files)


def _read_state_file(files: SessionFiles) -> bytes:
    try:
        return files.state_file.read_bytes()
    except OSError as exc:
        raise SandboxUnavailableError(f"state file {files.state_file} unreadable: {exc}") from exc
