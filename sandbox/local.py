"""The ``local`` backend: the task server as a subprocess on a free loopback port.

For machines without a Docker engine (and for fast tests). It isolates nothing beyond a separate
process: the server runs with the harness user's rights. Use ``docker`` for untrusted agents.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import socket
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path

from .backend import SandboxBackend, SandboxEnvironment
from .control_client import ControlClient
from .errors import SandboxUnavailableError
from .readiness import wait_until_ready
from .session_files import SessionFiles

__all__ = ["LocalBackend"]

LOOPBACK = "127.0.0.1"
_TERMINATE_GRACE_S = 3.0
_PORT_ATTEMPTS = 3


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


def _server_environment() -> dict[str, str]:
    """The child's environment, with the directory holding ``mcp_servers`` on its path.

    Located with ``find_spec`` (nothing of ours is imported), so a source checkout works uninstalled.
    """
    env = dict(os.environ)
    spec = importlib.util.find_spec("mcp_servers")
    if spec is not None and spec.origin is not None:
        root = str(Path(spec.origin).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    return env


class LocalBackend(SandboxBackend):
    name = "local"

    def __init__(self, *, python: str = sys.executable, ready_timeout_s: float = 30.0) -> None:
        self.python = python
        self.ready_timeout_s = ready_timeout_s

    @asynccontextmanager
    async def start(self, public_dir: Path, run_id: str, *, task_id: str) -> AsyncIterator[SandboxEnvironment]:
        started = time.monotonic()
        files = SessionFiles.create("apexvoice-local-", for_container=False)
        process: asyncio.subprocess.Process | None = None
        control: ControlClient | None = None
        try:
            for attempt in range(1, _PORT_ATTEMPTS + 1):
                port = _free_port()
                process = await self._spawn(Path(public_dir), port, files)
                control = ControlClient(f"http://{LOOPBACK}:{port}", files.token)
                try:
                    ready_s = await wait_until_ready(
                        control,
                        timeout_s=self.ready_timeout_s,
                        exit_reason=lambda p=process: self._exit_reason(p, files),
                        what=f"local task server for {task_id}",
                    )
                    break
                except SandboxUnavailableError as exc:
                    await control.aclose()
                    await _stop(process)
                    control = process = None
                    if "address already in use" not in str(exc).lower() or attempt == _PORT_ATTEMPTS:
                        raise

            async def read_state() -> dict:
                return await asyncio.to_thread(_read_state_file, files)

            yield SandboxEnvironment(
                mcp_url=f"http://{LOOPBACK}:{port}/mcp",
                control=control,
                backend=self.name,
                read_persisted_state=read_state,
                metadata={
                    "run_id": run_id,
                    "task_id": task_id,
                    "pid": process.pid,
                    "private_dir": str(files.root),
                    "address": f"{LOOPBACK}:{port}",
                    "ready_s": round(ready_s, 4),
                    "start_to_ready_s": round(time.monotonic() - started, 4),
                },
            )
        finally:
            try:
                if control is not None:
                    await control.aclose()
            finally:
                if process is not None:
                    await _stop(process)
                files.remove()

    async def _spawn(self, public_dir: Path, port: int, files: SessionFiles) -> asyncio.subprocess.Process:
        stderr = (files.root / "server.log").open("ab")
        try:
            return await asyncio.create_subprocess_exec(
                self.python, "-m", "mcp_servers",
                "--task", str(public_dir),
                "--host", LOOPBACK,
                "--port", str(port),
                "--token-file", str(files.token_file),
                "--state-file", str(files.state_file),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=stderr,
                env=_server_environment(),
                start_new_session=True,  # Ctrl-C in the terminal reaches the harness, which tears down
            )  # fmt: skip
        except OSError as exc:
            raise SandboxUnavailableError(f"cannot start {self.python} -m mcp_servers: {exc}") from exc
        finally:
            stderr.close()

    @staticmethod
    async def _exit_reason(process: asyncio.subprocess.Process, files: SessionFiles) -> str | None:
        if process.returncode is None:
            return None
        log_tail = (files.root / "server.log").read_text(encoding="utf-8", errors="replace")[-600:].strip()
        return f"exit code {process.returncode}: {log_tail or 'no output'}"


def _read_state_file(files: SessionFiles) -> dict:
    try:
        return json.loads(files.state_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SandboxUnavailableError(f"state file {files.state_file} unreadable: {exc}") from exc


async def _stop(process: asyncio.subprocess.Process) -> None:
    """terminate, then kill after a grace period; kill at once when cancelled while waiting."""
    if process.returncode is not None:
        return
    with suppress(ProcessLookupError):
        process.terminate()
    try:
        await asyncio.wait_for(process.wait(), _TERMINATE_GRACE_S)
    except TimeoutError:
        with suppress(ProcessLookupError):
            process.kill()
        await process.wait()
    except BaseException:
        with suppress(ProcessLookupError):
            process.kill()
        raise
