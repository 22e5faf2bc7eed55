"""Where a model's adapter will connect: one answer for the preflight check and the campaign identity.

Constructors do no I/O, so building an adapter to ask it is free; the harness's own agents reach no
server (and their voice forms load the audio stack), so they are never built here.
"""

from __future__ import annotations

from harness.agents.chat_agent import ChatClient, ChatEndpoint
from harness.agents.registry import ModelSpec

__all__ = ["chat_endpoint", "model_endpoint"]


def chat_endpoint(spec: ModelSpec) -> ChatEndpoint | None:
    """The chat-completions endpoint of a ``chat:`` or ``cascade:`` model (``None`` for others)."""
    if spec.agent_kind == "builtin":
        return None
    adapter = spec.create_adapter()
    client = getattr(adapter, "client", None)
    return client.endpoint if isinstance(client, ChatClient) else None


def model_endpoint(spec: ModelSpec) -> str | None:
    """The URL the model's adapter will connect to, when it connects to one."""
    chat = chat_endpoint(spec)
    if chat is not None:
        return chat.url
    if spec.agent_kind == "builtin":
        return None
    endpoint = getattr(spec.create_adapter(), "endpoint", None)
    return endpoint if isinstance(endpoint, str) and "://" in endpoint else None
