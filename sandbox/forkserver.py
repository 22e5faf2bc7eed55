"""The harness's side of :mod:`mcp_servers.forkserver`: task servers forked from one warm process.

:class:`Forkserver` starts ``python -m mcp_servers.forkserver`` (scrubbed environment, its own
session, stdin a pipe from us) the first time a server is wanted and asks it for a child per
server. :class:`ForkedServer` is that child seen from here: ``poll``/``terminate``/``kill``/
``wait`` as on a ``subprocess.Popen``, with its exit code reported by the forkserver (the child is
its child, not ours). All methods block (a pipe write, waiting for a reply): call them off the
event loop.

A forkserver that dies is started again on the next request; one that cannot start at all fails
the request with its exit code and last output.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from .errors import SandboxUnavailableError

__all__ = ["ForkedServer", "Forkserver", "wait_or_kill"]

_TERMINATE_GRACE_S = 5.0
_LOG_TAIL = 600


def wait_or_kill(process: subprocess.Popen[bytes] | ForkedServer, grace_s: float) -> None:
    """Wait ``grace_s`` for ``process`` to exit (it was asked to), then kill it and wait (blocking)."""
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        with suppress(ProcessLookupError):
            process.kill()
        process.wait()


class ForkedServer:
    """One forked task server: the ``Popen`` subset the local backend uses."""

    def __init__(self, pid: int, exits: _ExitBook) -> None:
        self.pid = pid
        self._exits = exits

    @property
    def returncode(self) -> int | None:
        return self._exits.code(self.pid)

    def poll(self) -> int | None:
        return self.returncode

    def _signal(self, signum: int) -> None:
        if self.returncode is None:
            with suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def terminate(self) -> None:
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> int:
        code = self._exits.wait(self.pid, timeout)
        if code is None:
            raise subprocess.TimeoutExpired(f"task server {self.pid}", timeout or 0.0)
        return code


class _ExitBook:
    """Exit codes the forkserver reported, and replies to requests, keyed and waited on."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._codes: dict[int, int] = {}
        self._replies: dict[int, dict] = {}
        #: Set when the forkserver's stdout closed: every child of it is gone too.
        self.dead_code: int | None = None

    def code(self, pid: int) -> int | None:
        with self._cond:
            return self._codes.get(pid, self.dead_code)

    def wait(self, pid: int, timeout: float | None) -> int | None:
        with self._cond:
            self._cond.wait_for(lambda: pid in self._codes or self.dead_code is not None, timeout)
            return self._codes.get(pid, self.dead_code)

    def reply(self, request_id: int, timeout: float) -> dict | None:
        with self._cond:
            self._cond.wait_for(lambda: request_id in self._replies or self.dead_code is not None, timeout)
            return self._replies.pop(request_id, None)

    def record(self, message: dict) -> None:
        with self._cond:
            if "exited" in message:
                self._codes[int(message["exited"])] = int(message["code"])
            elif isinstance(message.get("id"), int):
                self._replies[message["id"]] = message
            self._cond.notify_all()

    def close(self, code: int) -> None:
        with self._cond:
            self.dead_code = code
            self._cond.notify_all()


class _Process:
    """One running forkserver: the process, its exit book and the thread reading its stdout."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
            env=env, cwd=cwd, start_new_session=True,  # Ctrl-C reaches the harness, which tears down
        )  # fmt: skip
        self.exits = _ExitBook()
        self._reader = threading.Thread(target=self._read, name="forkserver-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with suppress(ValueError):
                self.exits.record(json.loads(line))
        self.exits.close(self.process.wait())

    def alive(self) -> bool:
        return self.exits.dead_code is None and self.process.poll() is None

    def failure(self) -> str:
        self.stderr.seek(0)
        tail = self.stderr.read().decode("utf-8", errors="replace")[-_LOG_TAIL:].strip()
        return f"exit code {self.process.wait()}: {tail or 'no output'}"

    def close(self) -> None:
        """Close its stdin (it stops its children and exits); kill it if it lingers."""
        if self.process.stdin is not None:
            with suppress(OSError):
                self.process.stdin.close()
        wait_or_kill(self.process, _TERMINATE_GRACE_S)
        self._reader.join(_TERMINATE_GRACE_S)
        self.stderr.close()


class Forkserver:
    """Forks task servers from one ``python -m mcp_servers.forkserver`` (started on first use)."""

    def __init__(self, python: str, environment: Callable[[], tuple[dict[str, str], Path]], *,
                 reply_timeout_s: float, arguments: Callable[[], list[str]] = list) -> None:
        """``environment`` and ``arguments`` (the forkserver's own flags) are asked for at each start."""
        self.python = python
        self._environment = environment
        self._arguments = arguments
        self.reply_timeout_s = reply_timeout_s
        self._lock = threading.Lock()
        self._process: _Process | None = None
        self._next_id = 0

    def _running(self) -> _Process:
        if self._process is None or not self._process.alive():
            if self._process is not None:
                self._process.close()
            env, cwd = self._environment()
            try:
                self._process = _Process([self.python, "-m", "mcp_servers.forkserver", *self._arguments()], env, cwd)
            except OSError as exc:
                raise SandboxUnavailableError(f"cannot start {self.python} -m mcp_servers.forkserver: {exc}") from exc
        return self._process

    def spawn(self, argv: list[str], *, cwd: Path, home: Path, log: Path) -> ForkedServer:
        """A new server running ``python -m mcp_servers ARGV`` in ``cwd`` (blocking: waits for the fork)."""
        with self._lock:
            process = self._running()
            self._next_id += 1
            request_id = self._next_id
            line = json.dumps({"id": request_id, "argv": argv, "cwd": str(cwd), "home": str(home), "log": str(log)})
            try:
                assert process.process.stdin is not None
                process.process.stdin.write(line.encode() + b"\n")
                process.process.stdin.flush()
            except OSError:
                pass  # it died: the reply below says how
            # The first reply waits for the forkserver's imports (a cold start); later ones take ms.
            reply = process.exits.reply(request_id, self.reply_timeout_s)
        if reply is None:
            what = f"the local forkserver ({self.python} -m mcp_servers.forkserver)"
            if not process.alive():
                raise SandboxUnavailableError(f"{what} exited while starting: {process.failure()}")
            raise SandboxUnavailableError(f"{what} did not fork a server within {self.reply_timeout_s:.0f} s")
        if "error" in reply:
            raise SandboxUnavailableError(f"the local forkserver could not start a server: {reply['error']}")
        return ForkedServer(int(reply["pid"]), process.exits)

    @property
    def pid(self) -> int | None:
        return self._process.process.pid if self._process is not None else None

    def close(self) -> None:
        """Stop the forkserver and every server it forked (blocking)."""
        with self._lock:
            if self._process is not None:
                self._process.close()
                self._process = None

    def abandon(self) -> None:
        """Close the forkserver's stdin without waiting: it stops its servers and exits on its own.

        For a backend collected without ``aclose`` (its owner forgot, or is going away).
        """
        process = self._process
        if process is not None and process.process.stdin is not None:
            with suppress(OSError):
                process.process.stdin.close()
