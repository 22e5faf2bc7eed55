"""One async interface for starting a task's MCP server in isolation, and the backend registry.

``async with get_backend("auto").start(public_dir, run_id, task_id=...) as env:`` gives the MCP URL,
the control client and metadata; leaving the block always tears the sandbox down (normal exit,
exception, cancellation, Ctrl-C). Backends are looked up by name in a registry, and the docker
backend is imported only when asked for, so machines without the docker SDK can still use ``local``.
"""

from __future__ import annotations

import importlib
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from .control_client import ControlClient
from .errors import SandboxUnavailableError

__all__ = [
    "BackendName",
    "SandboxBackend",
    "SandboxEnvironment",
    "SandboxUnavailableError",
    "get_backend",
]

log = logging.getLogger(__name__)

BackendName = Literal["auto", "docker", "local"]

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
    #: Why this backend serves the run, for the user (``get_backend`` sets it).
    chosen_because: str = "asked for by name"

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


#: name -> "module:class", imported on demand (the docker SDK is an optional dependency).
_REGISTRY: dict[str, str] = {
    "local": "sandbox.local:LocalBackend",
    "docker": "sandbox.docker_backend:DockerBackend",
}

#: ``auto`` tries these in order and takes the first that is available.
_AUTO_ORDER = ("docker", "local")


def _load(name: str) -> SandboxBackend:
    module_name, _, class_name = _REGISTRY[name].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SandboxUnavailableError(f"sandbox backend {name!r} cannot be imported: {exc}") from exc
    return getattr(module, class_name)()


def get_backend(name: BackendName | str = "auto") -> SandboxBackend:
    """The backend called ``name``; ``auto`` picks docker when its engine and image answer, else local."""
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
                log.info("sandbox backend %s (%s)", candidate, backend.chosen_because)
                return backend
            reasons.append(f"not {candidate}: {reason}")
        raise SandboxUnavailableError(f"no sandbox backend is available: {'; '.join(reasons)}")
    if name not in _REGISTRY:
        known = ", ".join(["auto", *_REGISTRY])
        raise ValueError(f"unknown sandbox backend {name!r} (known: {known})")
    return _load(name)
