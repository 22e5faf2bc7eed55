"""Start a task's MCP server in isolation (docker container or local subprocess) behind one interface."""

from .backend import BackendName, SandboxBackend, SandboxEnvironment, get_backend
from .control_client import ControlClient
from .errors import ControlRequestError, SandboxUnavailableError

__all__ = [
    "BackendName",
    "ControlClient",
    "ControlRequestError",
    "SandboxBackend",
    "SandboxEnvironment",
    "SandboxUnavailableError",
    "get_backend",
]
