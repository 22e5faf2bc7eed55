"""Before a campaign starts: can the model under test be reached at all?

A session that cannot reach its model tells nothing, and finding out session by session is slow:
a chat endpoint nobody serves is retried by the client, then by the campaign, for every repetition
(minutes of silence), and an agent server nobody runs is scored as an agent that hung up. Two
cases are certain before any session and are said once, naming the model and its endpoint:

- a local endpoint (``localhost``, a loopback address) that refuses the connection: nothing is
  listening there, and retrying will not start it;
- a remote endpoint whose host name does not exist (the resolver says the name is not known, as
  it does for a typo or on a machine with no network): no retry will make it resolve;
- a chat-completions model on the default OpenAI endpoint with no key: it would be refused.

Remote endpoints are not connected to: a refusal there may pass, and the sessions' own retries
apply; a resolver that fails for a while (``EAI_AGAIN``) is left to them too.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from harness.agents.chat_agent import DEFAULT_ENDPOINT
from harness.agents.model_endpoint import chat_endpoint, model_endpoint
from harness.agents.registry import ModelSpec

__all__ = ["CONNECT_TIMEOUT_S", "dead_endpoint_problem", "missing_key_problem"]

#: A local server that accepts nothing within this is not taken for dead (it may be busy).
CONNECT_TIMEOUT_S = 2.0
_DEFAULT_PORTS = {"ws": 80, "http": 80, "wss": 443, "https": 443}


def _is_local(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def dead_endpoint_problem(spec: ModelSpec) -> str | None:
    """One line when the model's endpoint is local and refuses a connection, or remote and its host
    name is not known; ``None`` otherwise."""
    url = model_endpoint(spec)
    parts = urlsplit(url or "")
    host = parts.hostname
    if url is None or host is None:
        return None
    port = parts.port or _DEFAULT_PORTS.get(parts.scheme)
    if port is None:
        return None
    named = spec.key if spec.key == url else f"{spec.key} ({url})"
    if not _is_local(host):
        return _unknown_host_problem(named, host, port)
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except ConnectionRefusedError:
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        return (f"{named}: nothing is listening at {where} (connection refused); start the model's server "
                "there, or point --model/--endpoint at one that runs")
    except OSError:
        return None  # busy or filtered: the sessions will tell
    return None


def missing_key_problem(spec: ModelSpec) -> str | None:
    """One line when a chat-completions model would call the default OpenAI endpoint without a key."""
    chat = chat_endpoint(spec)
    if chat is None or chat.api_key() is not None:
        return None
    if urlsplit(chat.url).hostname != urlsplit(DEFAULT_ENDPOINT).hostname:
        return None  # a server of the user's own may need no key
    return (f"{spec.key} needs {chat.api_key_env} for {chat.url} (set it in the environment or .env, "
            "or serve the model elsewhere: --endpoint URL)")


def _unknown_host_problem(named: str, host: str, port: int) -> str | None:
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        if exc.errno == socket.EAI_NONAME:
            return (f"{named}: the host name {host} is not known (the resolver says: {exc.strerror}); check the "
                    "URL, or this machine's network and DNS")
    return None
