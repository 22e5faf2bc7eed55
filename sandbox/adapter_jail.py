"""The OS sandbox a hosted adapter runs in without Docker: bubblewrap namespaces, nothing of ours.

A hosted adapter (``--model package.module:Class`` under ``--sandbox local``) is an agent author's
code in a child process. As a plain child it ran as the harness's user and could read what that
user reads: the harness's ``/proc/<pid>`` (working directory, memory, environment), task
directories, the private folders holding control sockets and tokens. Here it runs under Debian's
``bwrap`` instead, in its own user, mount, PID, IPC, UTS, network (and, where the kernel allows,
cgroup) namespaces, and sees:

- the Python runtime read-only (``/usr``, the interpreter's prefix, the virtualenv), with any
  installed copy of the harness's own packages hidden under an empty ``tmpfs``;
- its copy of the hosting code at ``/opt/runtime`` and its own top-level package at
  ``/opt/adapter/<name>``, read-only;
- an empty writable ``HOME`` (``/home/adapter``, removed afterwards), its own ``/tmp`` and
  ``/dev/shm`` (multiprocessing's semaphores);
- its own ``/proc`` (only its own processes), a minimal ``/dev``, no ``/sys``;
- no network but its own loopback: the harness hands it one listening socket (:func:`jail_command`
  ``listen_fd``), bound on the harness's loopback, through which the harness alone connects.

It runs as ``nobody`` (uid 65534) of its own user namespace, holds no capability, is in a new
session (no terminal to push keystrokes into), and dies with the harness (``--die-with-parent``);
killing the namespace's first process (:func:`kill_jail`) ends every process it started, daemons
and all. Where no such sandbox can be made (no ``bwrap``, user namespaces disabled),
:func:`jail_problem` says why and ``run`` refuses (:data:`WAYS_FORWARD`).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from contextlib import suppress
from pathlib import Path

from .child_env import source_root

__all__ = [
    "JAIL_ADAPTER",
    "JAIL_HOME",
    "JAIL_RUNTIME",
    "WAYS_FORWARD",
    "jail_command",
    "jail_problem",
    "kill_jail",
    "read_child_pid",
    "runtime_roots",
]

#: Where the sandbox sees its writable home, its hosting code and its adapter's package.
JAIL_HOME = "/home/adapter"
JAIL_RUNTIME = "/opt/runtime"
JAIL_ADAPTER = "/opt/adapter"
#: ``nobody``: the user the adapter runs as inside its user namespace.
JAIL_UID = 65534
#: What ``run`` tells a user whose machine cannot make the sandbox.
WAYS_FORWARD = ("host it in the adapter-host container instead (--sandbox docker), or load it into the harness's "
                "process (--trust-adapter: it can then read the tasks' gold, so its scores prove nothing)")
#: The harness's own packages: an installed (non-editable) copy in site-packages is hidden.
_OWN_PACKAGES = ("harness", "mcp_servers", "sandbox", "tui")
#: Directories of the system's runtime: bound read-only (or recreated as the host's symlinks).
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: What the dynamic loader and the time functions read from ``/etc``; nothing else of it is seen.
_ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/alternatives")
_PROBE_TIMEOUT_S = 10.0


def _bwrap() -> str | None:
    return shutil.which("bwrap")


def runtime_roots() -> tuple[Path, ...]:
    """The Python runtime outside ``/usr``: the virtualenv and the interpreter's installation."""
    candidates = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix,
                  str(Path(os.path.realpath(sys.executable)).parents[1])]
    roots: list[Path] = []
    for candidate in dict.fromkeys(Path(os.path.realpath(c)) for c in candidates):
        if candidate == Path("/") or Path("/usr") in (candidate, *candidate.parents):
            continue
        if not any(root in (candidate, *candidate.parents) for root in roots):
            roots = [r for r in roots if candidate not in r.parents] + [candidate]
    return tuple(roots)


def _system_options() -> list[str]:
    options: list[str] = []
    for directory in _SYSTEM_DIRS:
        path = Path(directory)
        if path.is_symlink():
            options += ["--symlink", os.readlink(path), directory]
        elif path.is_dir():
            options += ["--ro-bind", directory, directory]
    for name in _ETC_FILES:
        options += ["--ro-bind-try", name, name]
    return options


def _hidden_own_packages(roots: Iterable[Path]) -> list[str]:
    """An empty tmpfs over each installed copy of our packages that a bound root would show."""
    shown = [Path("/usr"), *roots]
    options: list[str] = []
    for package in _OWN_PACKAGES:
        root = source_root(package)
        directory = root / package if root is not None else None
        if directory is not None and directory.is_dir() and any(r in directory.parents for r in shown):
            options += ["--tmpfs", str(directory)]
    return options


def jail_command(command: Sequence[str], *, runtime: Path, adapter: Path, home: Path,
                 info_fd: int | None = None) -> list[str]:
    """``command`` (its first word: this interpreter) wrapped in the sandbox.

    ``runtime``: the copy of the hosting code; ``adapter``: the adapter's top-level package (or
    module file), shown as ``/opt/adapter/<its name>``; ``home``: an empty directory, shown
    writable as ``/home/adapter``. ``info_fd``: where ``bwrap`` writes the namespace's first pid
    (:func:`read_child_pid`). A listening socket the command must serve on is passed by the
    caller as an inherited descriptor (``pass_fds``): the sandbox has no network of its own.

    Raises:
        OSError: ``bwrap`` is not installed (:func:`jail_problem` says so first).
    """
    bwrap = _bwrap()
    if bwrap is None:
        raise FileNotFoundError("bwrap is not installed (Debian: apt-get install bubblewrap)")
    roots = runtime_roots()
    options = [
        bwrap, "--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
        "--unshare-cgroup-try", "--uid", str(JAIL_UID), "--gid", str(JAIL_UID), "--hostname", "adapter",
        "--die-with-parent", "--new-session", "--cap-drop", "ALL",
        *_system_options(),
    ]
    # The private /tmp first: bwrap mounts in order, and a runtime root under /tmp (a checkout's
    # .venv there, as a CI clone may have) bound before it would vanish under the empty tmpfs.
    options += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/dev/shm", "--tmpfs", "/tmp"]
    for root in roots:
        options += ["--ro-bind", str(root), str(root)]
    options += _hidden_own_packages(roots)
    options += [
        "--ro-bind", str(runtime), JAIL_RUNTIME,
        "--ro-bind", str(adapter), f"{JAIL_ADAPTER}/{adapter.name}",
        "--bind", str(home), JAIL_HOME, "--chdir", JAIL_HOME,
    ]
    if info_fd is not None:
        options += ["--info-fd", str(info_fd)]
    return [*options, "--", *command]


@functools.cache
def jail_problem() -> str | None:
    """Why no sandbox can be made on this machine, or ``None`` when one can (tried once: a
    sandbox of the same namespaces runs this interpreter; blocking, cached for the process)."""
    if _bwrap() is None:
        return "bubblewrap (bwrap) is not installed (Debian: apt-get install bubblewrap)"
    try:
        with tempfile.TemporaryDirectory(prefix="apexvoice-jail-probe-") as empty:
            command = jail_command([sys.executable, "-c", "import os; print(os.getuid())"],
                                   runtime=Path(empty), adapter=Path(empty), home=Path(empty))
            done = subprocess.run(command, capture_output=True, timeout=_PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL,
                                  env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not start a sandbox: {exc}"
    if done.returncode != 0 or done.stdout.strip() != str(JAIL_UID).encode():
        reason = done.stderr.decode(errors="replace").strip().splitlines()
        return f"bwrap could not make the sandbox ({reason[-1] if reason else f'exit code {done.returncode}'})"
    return None


def read_child_pid(info: bytes) -> int | None:
    """The namespace's first process, from what ``bwrap --info-fd`` wrote (``None``: nothing yet)."""
    try:
        pid = json.loads(info)["child-pid"]
    except (ValueError, KeyError, TypeError):
        return None
    return pid if type(pid) is int and pid > 1 else None


def kill_jail(child_pid: int) -> None:
    """Kill the namespace's first process: the kernel then kills every process in the namespace."""
    with suppress(ProcessLookupError, PermissionError):
        os.kill(child_pid, signal.SIGKILL)
