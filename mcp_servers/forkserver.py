"""``python -m mcp_servers.forkserver [--lazy-mcp]``: fork task servers from one process that has imported them.

Booting a task server is mostly Python and ``import mcp`` (about a CPU-second on the 2-core
machine); a session then uses it for a few seconds. The local backend therefore starts this process
once: it imports the server modules, then forks one child per request, which runs
``python -m mcp_servers``'s ``main`` with the given arguments — a separate process with its own
private directory, as before, ready in milliseconds and costing little CPU (the pages it imported
are shared copy-on-write). With ``--lazy-mcp`` it leaves the MCP SDK out (its children are
started with ``--lazy-mcp`` too: their tools are called through the control plane only, and a
child imports the SDK itself if ``/mcp`` is used after all).

Protocol, one JSON object per line (lines stay under ``PIPE_BUF``, so each write is whole):

- stdin, a request: ``{"id": N, "argv": [...], "cwd": DIR, "home": DIR, "log": FILE}``
- stdout, its reply: ``{"id": N, "pid": PID}`` or ``{"id": N, "error": "..."}``
- stdout, a notice when a child exits: ``{"exited": PID, "code": CODE}`` (``subprocess``'s
  convention: a negative code is the signal that ended it)

Nothing is forked before the first request is read, and this process never starts a thread or an
event loop, so a child inherits no lock held by another thread. At end of file on stdin (the
harness closed the pipe, or died) every child gets SIGTERM, then SIGKILL after a grace period, and
the forkserver exits; each child also asks the kernel for SIGTERM when the forkserver dies
(``PR_SET_PDEATHSIG``), so even a SIGKILLed forkserver leaves no server behind.
"""

from __future__ import annotations

import ctypes
import json
import os
import selectors
import signal
import sys
import time
import traceback

_TERMINATE_GRACE_S = 3.0
_PR_SET_PDEATHSIG = 1


def _emit(message: dict) -> None:
    os.write(1, (json.dumps(message) + "\n").encode())


def _die_with(parent: int) -> None:
    """Ask for SIGTERM when the forkserver dies; exit now if it already has (the race prctl leaves)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        os._exit(1)


def _run_child(request: dict, parent: int, keep: set[int]) -> None:
    """In the forked child: become the server and never return."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, signal.SIG_DFL)
        os.setsid()
        _die_with(parent)
        devnull = os.open(os.devnull, os.O_RDWR)
        log = os.open(request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.dup2(log, 2)
        for fd in keep | {devnull, log}:
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.update(HOME=request["home"], TMPDIR=request["home"])
        import tempfile

        tempfile.tempdir = None  # chosen afresh from TMPDIR
        from mcp_servers.__main__ import main

        code = main(list(request["argv"]))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stderr.flush()
        os._exit(code)


def _reap(children: set[int]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            children.clear()
            return
        if pid == 0:
            return
        children.discard(pid)
        _emit({"exited": pid, "code": os.waitstatus_to_exitcode(status)})


def _stop_all(children: set[int]) -> None:
    for pid in list(children):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + _TERMINATE_GRACE_S
    while children and time.monotonic() < deadline:
        _reap(children)
        time.sleep(0.02)
    for pid in list(children):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    while children:
        try:
            pid, _ = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        children.discard(pid)


def main(argv: list[str]) -> int:
    import mcp_servers.__main__  # noqa: F401  the point: every child finds the server imported

    if "--lazy-mcp" not in argv:
        import mcp_servers.mcp_app  # noqa: F401  and the MCP SDK, for the agents that connect to /mcp

    children: set[int] = set()
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the harness ends us by closing stdin
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ)
    selector.register(wake_read, selectors.EVENT_READ)
    pending = b""
    me = os.getpid()
    while True:
        for key, _ in selector.select():
            if key.fd == wake_read:
                while True:
                    try:
                        if not os.read(wake_read, 4096):
                            break
                    except BlockingIOError:
                        break
                continue
            chunk = os.read(0, 65536)
            if not chunk:
                _stop_all(children)
                return 0
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if not line.strip():
                    continue
                try:
                    request = json.loads(line)
                    pid = os.fork()
                except ValueError as exc:
                    _emit({"id": None, "error": f"unreadable request: {exc}"})
                    continue
                except OSError as exc:
                    _emit({"id": request.get("id"), "error": f"fork failed: {exc}"})
                    continue
                if pid == 0:
                    selector.close()
                    _run_child(request, me, {wake_read, wake_write})
                children.add(pid)
                _emit({"id": request.get("id"), "pid": pid})
        _reap(children)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
