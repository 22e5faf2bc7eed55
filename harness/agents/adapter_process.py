"""An out-of-tree adapter in a child process of its own, reached over the OpenAI Realtime protocol.

``--model package.module:Class`` is an agent author's code. Imported into the harness it could
read the loaded task bundle (gold, reference policy), patch the grader, or read task files; so by
default it never is. With the ``local`` sandbox each session starts
``python -m harness.agents.realtime_server --adapter package.module:Class --port 0`` as a child
process, which loads the adapter and serves it; the harness reaches it through
:class:`~harness.agents.container_agent.ContainerAgentAdapter`, the client of agent containers (so
whatever it does is the agent's own doing). The child gets:

- a scrubbed environment (:func:`sandbox.child_env.child_environment`): no provider key, no judge
  key, only the variables the user passes explicitly (``run --adapter-env NAME``);
- as working directory and ``HOME``/``TMPDIR`` an empty private directory, removed afterwards;
- on its import path what an agent container has, laid out alike in its private directory: a copy
  of the harness code that hosts adapters (the ``adapter-host`` image's sources: no task data, no
  grader) and a link to the adapter's top-level package (:mod:`harness.agents.adapter_source`);
  never a task's path, in its arguments or anywhere else;
- its stdin as a pipe from the harness (it exits when the harness goes, even after a SIGKILL);
- a new session (Ctrl-C reaches the harness, which ends it); it is terminated, then killed, and
  always reaped when the session ends.

What a child process does **not** stop: it runs as the harness's user, so it can read whatever
that user can read, if it knows where to look: task directories on disk, the harness's own
``/proc`` entries (its command line, working directory and environment, keys included). That is why a docker sandbox hosts the adapter in a hardened agent container instead (no task file is
in it at all). :func:`probe_adapter` loads the adapter once the same way, before the campaign, so
a module that does not import is an error the user sees at once.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import ExitStack, asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.child_env import child_environment, source_root
from sandbox.errors import AgentStartFailed, SandboxUnavailableError
from sandbox.session_files import owned_temp_dir

from .adapter_source import AdapterSourceError, adapter_source
from .agent_text import safe_text

__all__ = ["AdapterLoadError", "AdapterProcess", "HostedDescription", "probe_adapter", "start_adapter_process"]

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
        return {"url": self.url, "pid": self.pid, "timings": dict(self.timings)}


def host_command(target: str, *options: str, python: str = sys.executable) -> list[str]:
    return [python, "-m", "harness.agents.realtime_server", "--adapter", target, *options]


@dataclass(frozen=True)
class _HostTree:
    """One host's private directory: its empty ``home`` and what it may import."""

    root: Path
    home: Path
    python_path: tuple[Path, ...]


def _host_tree(stack: ExitStack, target: str) -> _HostTree:
    """A private directory (swept if the harness is killed) laid out like the adapter-host image:
    ``runtime/`` the hosting sources (copied, so no path leads to the checkout's task data),
    ``adapter/<top-level>`` a link to the adapter's package, and an empty ``home/`` (blocking)."""
    try:
        source = adapter_source(target)
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
    (root / "adapter").mkdir()
    (root / "adapter" / source.path.name).symlink_to(source.path, target_is_directory=source.path.is_dir())
    (root / "home").mkdir(mode=0o700)
    return _HostTree(root, root / "home", (root / "runtime", root / "adapter"))


def probe_adapter(target: str, *, env: Mapping[str, str] | None = None, python: str = sys.executable,
                  timeout_s: float = READY_TIMEOUT_S) -> HostedDescription:
    """Load ``target`` in a child exactly as a session would, and say what it is (blocking: the
    CLI calls it before the campaign; run it off the event loop elsewhere).

    Raises:
        AdapterLoadError: it does not load, is no realtime adapter, or the host did not answer.
    """
    with ExitStack() as stack:
        tree = _host_tree(stack, target)
        try:
            done = subprocess.run(
                host_command(target, "--check", python=python),
                capture_output=True, timeout=timeout_s, cwd=tree.home, stdin=subprocess.DEVNULL,
                env=child_environment(home=tree.home, python_path=tree.python_path, extra=env),
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise AdapterLoadError(f"adapter {target!r} did not load within {timeout_s:.0f} s") from None
        if done.returncode != 0:
            lines = done.stderr.decode(errors="replace").strip().splitlines()
            reason = next((line for line in reversed(lines) if line.startswith("error: ")), lines[-1] if lines else "")
            raise AdapterLoadError(reason.removeprefix("error: ") or f"its host exited with code {done.returncode}")
        try:
            answer = json.loads(done.stdout)
            # The host announces what the adapter declares: the agent's text, made safe here.
            return HostedDescription(safe_text(str(answer["key"])), safe_text(str(answer["display_name"])),
                                     tuple(safe_text(str(mode)) for mode in answer["tool_modes"]))
        except (ValueError, KeyError, TypeError):
            raise AdapterLoadError(f"adapter {target!r}: its host answered {done.stdout[:200]!r}") from None


@asynccontextmanager
async def start_adapter_process(target: str, *, env: Mapping[str, str] | None = None, python: str = sys.executable,
                                ready_timeout_s: float = READY_TIMEOUT_S) -> AsyncIterator[AdapterProcess]:
    """Host ``target`` in a fresh child process for one session; stop and reap it on exit.

    Raises:
        AdapterLoadError: the adapter's package cannot be found.
        SandboxUnavailableError: the child could not be started (ours: infrastructure).
        AgentStartFailed: the child exited before it listened, or did not listen in time (the
            hosted adapter's doing: the agent's failure; the message carries the end of its log).
    """
    stack = ExitStack()
    started = time.monotonic()
    tree = await asyncio.to_thread(_host_tree, stack, target)
    log_path = tree.root / "adapter.log"
    process: asyncio.subprocess.Process | None = None
    try:
        try:
            with log_path.open("ab") as log:
                process = await asyncio.create_subprocess_exec(
                    *host_command(target, "--host", "127.0.0.1", "--port", "0", "--exit-with-stdin", python=python),
                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=log, cwd=tree.home,
                    env=child_environment(home=tree.home, python_path=tree.python_path, extra=env),
                    start_new_session=True,
                )  # fmt: skip
        except OSError as exc:  # only the start is ours to blame; the session inside is not wrapped
            raise SandboxUnavailableError(f"cannot start the host of adapter {target!r}: {exc}") from exc
        url = await _announced_url(process, ready_timeout_s, log_path, target)
        ready_s = round(time.monotonic() - started, 4)
        yield AdapterProcess(url=url, pid=process.pid, timings={"start_to_ready_s": ready_s})
    finally:
        try:
            if process is not None:
                await asyncio.shield(_stop(process))
        finally:
            await asyncio.shield(asyncio.to_thread(stack.close))


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


async def _stop(process: asyncio.subprocess.Process) -> None:
    """Close its stdin (it exits by itself), terminate after a grace period, then kill; always reap."""
    if process.stdin is not None:
        process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), _TERMINATE_GRACE_S)
        return
    except TimeoutError:
        pass
    with suppress(ProcessLookupError):
        process.terminate()
    try:
        await asyncio.wait_for(process.wait(), _TERMINATE_GRACE_S)
    except TimeoutError:
        with suppress(ProcessLookupError):
            process.kill()
        await process.wait()
