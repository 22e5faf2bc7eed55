"""An out-of-tree adapter in a sandboxed process of its own, reached over the OpenAI Realtime protocol.

``--model package.module:Class`` is an agent author's code. Imported into the harness it could
read the loaded task bundle (gold, reference policy), patch the grader, or read task files; so by
default it never is. With the ``local`` sandbox each session starts
``python -m harness.agents.realtime_server --adapter package.module:Class --listen-fd N`` in an OS
sandbox (:mod:`sandbox.adapter_jail`: bubblewrap user, mount, PID, IPC, UTS and network
namespaces), which loads the adapter and serves it; the harness reaches it through
:class:`~harness.agents.container_agent.ContainerAgentAdapter`, the client of agent containers (so
whatever it does is the agent's own doing). The host gets:

- a scrubbed environment (:func:`sandbox.child_env.child_environment`): no provider key, no judge
  key, only the variables the user passes explicitly (``run --adapter-env NAME``);
- a filesystem of the Python runtime, read-only, a copy of the harness code that hosts adapters
  (the ``adapter-host`` image's sources: no task data, no grader) at ``/opt/runtime`` and the
  adapter's top-level package at ``/opt/adapter/<name>`` (:mod:`harness.agents.adapter_source`),
  both read-only, and an empty writable ``/home/adapter``, removed afterwards: no task directory,
  no private folder of the harness (control sockets, tokens), no home of the user's;
- its own ``/proc`` (it sees its own processes only) and no network: the harness makes the
  listening socket on its loopback and hands it over, and only the harness connects to it;
- its stdin as a pipe from the harness (it exits when the harness goes, even after a SIGKILL);
- a new session (Ctrl-C reaches the harness, which ends it). When the session ends its stdin is
  closed; a host still running after a grace period has its PID namespace killed, which kills
  every process it started (daemons in their own sessions too), and is always reaped.

Where the sandbox cannot be made (no ``bwrap``, user namespaces disabled) no host starts
(:func:`~sandbox.adapter_jail.jail_problem`: ``run`` refuses before the campaign).
:func:`probe_adapter` loads the adapter once the same way, before the campaign, so a module that
does not import is an error the user sees at once (under ``--sandbox docker`` on a machine without
that sandbox, the adapter-host container loads it instead: :mod:`harness.campaign.hosted_agent`);
:func:`check_answer` reads what either says.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import ExitStack, asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.adapter_jail import (
    JAIL_ADAPTER,
    JAIL_HOME,
    JAIL_RUNTIME,
    jail_command,
    jail_problem,
    kill_jail,
    read_child_pid,
)
from sandbox.child_env import child_environment, source_root
from sandbox.errors import AgentStartFailed, SandboxUnavailableError
from sandbox.session_files import owned_temp_dir

from .adapter_source import AdapterSourceError, hosted_source
from .agent_text import safe_text

__all__ = [
    "AdapterLoadError",
    "AdapterProcess",
    "HostedDescription",
    "check_answer",
    "host_command",
    "probe_adapter",
    "start_adapter_process",
]

#: How long a child may take to load its adapter and listen (python, numpy, the adapter's imports).
READY_TIMEOUT_S = 60.0
_TERMINATE_GRACE_S = 3.0
_LOG_TAIL_CHARS = 2000


class AdapterLoadError(Exception):
    """The hosted adapter does not load (its module, its class, or its imports); the message says why."""


@dataclass(frozen=True)
class HostedDescription:
    """What the host reports of an adapter it loaded (``realtime_server --check``)."""

    key: str
    display_name: str
    tool_modes: tuple[str, ...]


@dataclass(frozen=True)
class AdapterProcess:
    """A running host: where the harness connects, and what ``result.json`` records of it."""

    url: str
    pid: int
    timings: dict[str, float] = field(default_factory=dict)

    def metadata(self) -> dict[str, Any]:
        return {"url": self.url, "pid": self.pid, "jail": "bwrap", "timings": dict(self.timings)}


def host_command(target: str, *options: str, python: str = sys.executable) -> list[str]:
    return [python, "-m", "harness.agents.realtime_server", "--adapter", target, *options]


@dataclass(frozen=True)
class _HostTree:
    """One host's private directory: the hosting sources, its empty ``home``, the adapter's package."""

    root: Path
    runtime: Path
    home: Path
    adapter: Path

    def command(self, command: list[str], *, info_fd: int | None = None) -> list[str]:
        return jail_command(command, runtime=self.runtime, adapter=self.adapter, home=self.home, info_fd=info_fd)

    def environment(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        return child_environment(home=Path(JAIL_HOME), python_path=(JAIL_RUNTIME, JAIL_ADAPTER), extra=extra)


def _host_tree(stack: ExitStack, target: str, task_dirs: Iterable[Path] = ()) -> _HostTree:
    """A private directory (swept if the harness is killed) holding what the sandbox is shown:
    ``runtime/`` the hosting sources (copied, so no path leads to the checkout's task data) and an
    empty ``home/`` (blocking). The adapter's package is shown where it is, unless it holds a task."""
    problem = jail_problem()
    if problem is not None:
        raise SandboxUnavailableError(f"cannot sandbox the host of adapter {target!r}: {problem}")
    try:
        source = hosted_source(target, task_dirs)
    except AdapterSourceError as exc:
        raise AdapterLoadError(str(exc)) from None
    harness_root = source_root("harness")
    if harness_root is None:
        raise AdapterLoadError("the harness's own sources are not on the import path")
    # Imported here: the image builder brings the Docker SDK, which no in-tree agent needs.
    from sandbox.image_build import ADAPTER_HOST_SOURCES
    from sandbox.project_sources import snapshot_paths

    root = stack.enter_context(owned_temp_dir("apexvoice-adapter-"))
    snapshot_paths(harness_root, ADAPTER_HOST_SOURCES).write_to(root / "runtime")
    (root / "home").mkdir(mode=0o700)
    return _HostTree(root, root / "runtime", root / "home", source.path)


def probe_adapter(target: str, *, env: Mapping[str, str] | None = None, python: str = sys.executable,
                  timeout_s: float = READY_TIMEOUT_S, task_dirs: Iterable[Path] = ()) -> HostedDescription:
    """Load ``target`` in a sandboxed child exactly as a session would, and say what it is
    (blocking: the CLI calls it before the campaign; run it off the event loop elsewhere).

    Raises:
        AdapterLoadError: it does not load, is no realtime adapter, the host did not answer, or its
            package holds one of ``task_dirs``.
        SandboxUnavailableError: no sandbox can be made here (the message says why).
    """
    with ExitStack() as stack:
        tree = _host_tree(stack, target, task_dirs)
        try:
            done = subprocess.run(
                tree.command(host_command(target, "--check", python=python)),
                capture_output=True, timeout=timeout_s, stdin=subprocess.DEVNULL, env=tree.environment(env),
                cwd=tree.home,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise AdapterLoadError(f"adapter {target!r} did not load within {timeout_s:.0f} s") from None
        return check_answer(target, done.returncode, done.stdout, done.stderr)


def check_answer(target: str, exit_code: int, stdout: bytes, stderr: bytes) -> HostedDescription:
    """What a host's ``--check`` said of ``target`` (wherever it ran: a sandboxed child, a container).

    Raises:
        AdapterLoadError: it exited with an error (the reason is its last ``error:`` line), or its
            answer is not the adapter's description.
    """
    if exit_code != 0:
        lines = stderr.decode(errors="replace").strip().splitlines()
        reason = next((line for line in reversed(lines) if line.startswith("error: ")), lines[-1] if lines else "")
        raise AdapterLoadError(reason.removeprefix("error: ") or f"its host exited with code {exit_code}")
    try:
        answer = json.loads(stdout)
        # The host announces what the adapter declares: the agent's text, made safe here.
        return HostedDescription(safe_text(str(answer["key"])), safe_text(str(answer["display_name"])),
                                 tuple(safe_text(str(mode)) for mode in answer["tool_modes"]))
    except (ValueError, KeyError, TypeError):
        raise AdapterLoadError(f"adapter {target!r}: its host answered {stdout[:200]!r}") from None


@asynccontextmanager
async def start_adapter_process(target: str, *, env: Mapping[str, str] | None = None, python: str = sys.executable,
                                ready_timeout_s: float = READY_TIMEOUT_S,
                                task_dirs: Iterable[Path] = ()) -> AsyncIterator[AdapterProcess]:
    """Host ``target`` in a fresh sandboxed process for one session; on exit, end it and
    everything it started, and reap it.

    Raises:
        AdapterLoadError: the adapter's package cannot be found, or holds one of ``task_dirs``.
        SandboxUnavailableError: the sandbox could not be made or started (ours: infrastructure).
        AgentStartFailed: the host exited before it listened, or did not listen in time (the
            hosted adapter's doing: the agent's failure; the message carries the end of its log).
    """
    stack = ExitStack()
    started = time.monotonic()
    tree = await asyncio.to_thread(_host_tree, stack, target, task_dirs)
    log_path = tree.root / "adapter.log"
    process: asyncio.subprocess.Process | None = None
    child_pid: asyncio.Future[int | None] | None = None
    try:
        # The host has no network: it serves on this socket, made here on the harness's loopback.
        listener = stack.enter_context(socket.create_server(("127.0.0.1", 0), backlog=16))
        info_read, info_write = os.pipe()
        try:
            command = host_command(target, "--listen-fd", str(listener.fileno()), "--exit-with-stdin", python=python)
            with log_path.open("ab") as log:
                process = await asyncio.create_subprocess_exec(
                    *tree.command(command, info_fd=info_write),
                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=log,
                    env=tree.environment(env), start_new_session=True,
                    pass_fds=(listener.fileno(), info_write),
                )  # fmt: skip
        except OSError as exc:  # only the start is ours to blame; the session inside is not wrapped
            os.close(info_read)
            raise SandboxUnavailableError(f"cannot start the host of adapter {target!r}: {exc}") from exc
        finally:
            os.close(info_write)
            listener.close()  # the host holds it now
        child_pid = asyncio.ensure_future(asyncio.to_thread(_read_info, info_read))
        url = await _announced_url(process, ready_timeout_s, log_path, target)
        ready_s = round(time.monotonic() - started, 4)
        yield AdapterProcess(url=url, pid=process.pid, timings={"start_to_ready_s": ready_s})
    finally:
        try:
            if process is not None:
                await asyncio.shield(_stop(process, child_pid))
        finally:
            await asyncio.shield(asyncio.to_thread(stack.close))


def _read_info(fd: int) -> int | None:
    """The sandbox's first pid, from ``bwrap --info-fd`` (blocking until bwrap closes it)."""
    with os.fdopen(fd, "rb") as info:
        return read_child_pid(info.read())


async def _announced_url(process: asyncio.subprocess.Process, timeout_s: float, log_path: Path, target: str) -> str:
    """The URL the child prints once it listens (one JSON line on its stdout, nothing else is)."""
    assert process.stdout is not None
    try:
        line = await asyncio.wait_for(process.stdout.readline(), timeout_s)
    except TimeoutError:
        raise AgentStartFailed(f"the host of adapter {target!r} did not listen within {timeout_s:.0f} s: "
                                      f"{await _log_tail(log_path)}") from None
    try:
        return str(json.loads(line)["url"])
    except (ValueError, KeyError, TypeError):
        code = await process.wait() if not line else None
        raise AgentStartFailed(f"the host of adapter {target!r} exited while starting (exit code {code}): "
                                      f"{await _log_tail(log_path)}") from None


async def _log_tail(log_path: Path) -> str:
    text = await asyncio.to_thread(log_path.read_text, encoding="utf-8", errors="replace")
    return text[-_LOG_TAIL_CHARS:].strip() or "no output"


async def _stop(process: asyncio.subprocess.Process, child_pid: asyncio.Future[int | None] | None) -> None:
    """Close its stdin (it exits by itself, and its namespace with it); after a grace period kill
    the namespace (every process in it dies), then ``bwrap`` itself; always reap."""
    if process.stdin is not None:
        process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), _TERMINATE_GRACE_S)
        return
    except TimeoutError:
        pass
    pid = await child_pid if child_pid is not None and child_pid.done() else None
    if pid is not None and process.returncode is None:
        kill_jail(pid)  # bwrap reaps its child, then exits
        with suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), _TERMINATE_GRACE_S)
    if process.returncode is None:
        with suppress(ProcessLookupError):
            process.kill()
        await process.wait()
