"""Start a task's MCP server in isolation (docker container or local subprocess) behind one interface."""

from .backend import SandboxBackend, SandboxEnvironment, get_backend, known_backends
from .control_client import ControlClient
from .errors import ControlRequestError, SandboxUnavailableError

__all__ = [
    "ControlClient",
    "ControlRequestError",
    "SandboxBackend",
    "SandboxEnvironment",
    "SandboxUnavailableError",
    "get_backend",
    "known_backends",
]
