"""One async interface for starting a task's MCP server in isolation, and the backend registry.

``async with get_backend("auto").start(public_dir, run_id, task_id=...) as env:`` gives the MCP URL,
the control client and metadata; leaving the block always tears the sandbox down (normal exit,
exception, cancellation, Ctrl-C). Backends are looked up by name in a registry, and the docker
backend is imported only when asked for, so machines without the docker SDK can still use ``local``.

The registry is open, as the agents' is: beside the built-in ``docker`` and ``local``, a backend is
named by an installed entry point of the ``apex_voice.sandbox_backends`` group (the entry point names
a :class:`SandboxBackend` subclass) or as ``package.module:Class`` (``docs/plugins.md``). What a
backend can do beyond serving the task is a capability on its class (:attr:`SandboxBackend.
runs_agent_containers`), never a test of its name.
"""

from __future__ import annotations

import importlib
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, ClassVar

from .control_client import ControlClient
from .errors import SandboxUnavailableError, UnknownBackendError

__all__ = [
    "BUILTIN_BACKENDS",
    "ENTRY_POINT_GROUP",
    "SandboxBackend",
    "SandboxEnvironment",
    "SandboxUnavailableError",
    "UnknownBackendError",
    "get_backend",
    "known_backends",
]

log = logging.getLogger(__name__)

StateReader = Callable[[], Awaitable[bytes]]


@dataclass
class SandboxEnvironment:
    """A running task server: where the agent connects, how the harness controls it.

    ``read_persisted_state`` reads the bytes of the state journal the server appends to after every
    change, without asking the server: the snapshot of last resort when the server hangs (the
    harness folds it, see ``mcp_servers.state_file``; the sandbox does not read the format).
    ``metadata`` holds ids, addresses and timings for the run record. ``agent_token`` is the bearer
    token ``/mcp`` requires (``None``: a server started without one, e.g. an external server);
    every MCP client of the session sends :meth:`mcp_headers`.
    """

    mcp_url: str
    control: ControlClient
    backend: str
    read_persisted_state: StateReader
    metadata: dict[str, Any] = field(default_factory=dict)
    agent_token: str | None = field(default=None, repr=False)

    def mcp_headers(self) -> dict[str, str]:
        """The headers an MCP client of this session sends to :attr:`mcp_url`."""
        return {"Authorization": f"Bearer {self.agent_token}"} if self.agent_token else {}


class SandboxBackend(ABC):
    """Starts one isolated task server per session."""

    name: ClassVar[str]
    #: Its environments can host agent containers (``sandbox.agent_container``: an agent image, or
    #: an out-of-tree adapter's host, on the session's docker network, ``metadata["network_id"]``).
    #: Without it such agents run in a child process, or not at all (``container:IMAGE``).
    runs_agent_containers: ClassVar[bool] = False
    #: Why this backend serves the run, for the user (``get_backend`` sets it).
    chosen_because: str = "asked for by name"
    #: Whether an MCP client besides the harness will call the sessions' tools (a native agent, a
    #: provider's client). The harness's bridge lists and calls them through the control plane, so
    #: a campaign that only bridges sets ``False`` before its first session, and a backend may then
    #: start servers that import the MCP SDK only if ``/mcp`` is used after all (``local`` does).
    expects_mcp_clients: bool = True

    @abstractmethod
    def start(
        self, public_dir: Path, run_id: str, *, task_id: str
    ) -> AbstractAsyncContextManager[SandboxEnvironment]:
        """Serve the public bundle in ``public_dir``; the context's exit always tears down."""

    def available(self) -> str | None:
        """``None`` when this backend can start sandboxes here, else the reason it cannot."""
        return None

    def prepare(self) -> None:
        """Blocking work to do once before the first session (docker: sweep leftovers, build the
        image), so it happens visibly up front instead of inside the first session's start."""
        return None

    def describe_image(self) -> str | None:
        """What the backend will run, when that is worth telling (the docker image's state)."""
        return None

    async def aclose(self) -> None:
        """Remove what the backend keeps between sessions (warm spares); sessions keep their own."""
        return None  # a backend without spares keeps nothing


#: name -> "module:Class", imported on demand (the docker SDK is an optional dependency).
BUILTIN_BACKENDS: dict[str, str] = {
    "local": "sandbox.local:LocalBackend",
    "docker": "sandbox.docker_backend:DockerBackend",
}

#: Installed packages register backends here: ``name = "package.module:BackendClass"``.
ENTRY_POINT_GROUP = "apex_voice.sandbox_backends"

#: ``auto`` tries these in order and takes the first that is available.
_AUTO_ORDER = ("docker", "local")


def known_backends() -> list[str]:
    """Every name ``get_backend`` takes: ``auto``, the built-ins, then the installed entry points."""
    return ["auto", *BUILTIN_BACKENDS, *(p.name for p in entry_points(group=ENTRY_POINT_GROUP))]


def _construct(name: str, load: Callable[[], object]) -> SandboxBackend:
    try:
        target = load()
    except ImportError as exc:
        raise SandboxUnavailableError(f"sandbox backend {name!r} cannot be imported: {exc}") from exc
    except AttributeError as exc:
        raise UnknownBackendError(f"sandbox backend {name!r}: {exc}") from None
    if not (isinstance(target, type) and issubclass(target, SandboxBackend)):
        raise UnknownBackendError(f"sandbox backend {name!r} is {target!r}, not a SandboxBackend subclass")
    return target()


def _import_target(target: str) -> Callable[[], object]:
    module_name, _, class_name = target.partition(":")
    return lambda: getattr(importlib.import_module(module_name), class_name)


def _load(name: str) -> SandboxBackend:
    if name in BUILTIN_BACKENDS:
        return _construct(name, _import_target(BUILTIN_BACKENDS[name]))
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name == name:
            return _construct(name, point.load)
    module_name, colon, class_name = name.partition(":")
    if colon and module_name and class_name:
        return _construct(name, _import_target(name))
    raise UnknownBackendError(
        f"unknown sandbox backend {name!r} (known: {', '.join(known_backends())}, or package.module:Class)"
    )


def get_backend(name: str = "auto") -> SandboxBackend:
    """The backend called ``name``; ``auto`` picks docker when its engine and image answer, else local.

    Raises:
        UnknownBackendError: no backend has this name (the message lists the known ones), or it
            names something that is not a :class:`SandboxBackend` subclass.
        SandboxUnavailableError: its module cannot be imported here (e.g. no docker SDK), or
            ``auto`` found none available.
    """
    if name == "auto":
        reasons: list[str] = []
        for candidate in _AUTO_ORDER:
            try:
                backend = _load(candidate)
            except SandboxUnavailableError as exc:
                reasons.append(str(exc))
                continue
            reason = backend.available()
            if reason is None:
                why = [f"{candidate} can start sandboxes here", *filter(None, [backend.describe_image()])]
                backend.chosen_because = "auto: " + "; ".join([*reasons, ", ".join(why)])
                log.debug("sandbox backend %s (%s)", candidate, backend.chosen_because)  # the CLI says it
                return backend
            reasons.append(f"not {candidate}: {reason}")
        raise SandboxUnavailableError(f"no sandbox backend is available: {'; '.join(reasons)}")
    return _load(name)
