"""The harness side of the task server's control API (``/control/...``).

The control API has a listener of its own: a unix socket in the session's private directory
(``uds``), never the MCP endpoint's address. Every request also carries the session's bearer token.
A server that does not answer (connection
refused, reset, timeout, 5xx) raises :class:`SandboxUnavailableError` naming the route and the
cause, so the session is retried instead of being graded as the model's failure.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from .errors import ControlRequestError, SandboxUnavailableError

__all__ = ["ControlClient"]

DEFAULT_TIMEOUT_S = 10.0


class ControlClient:
    """Async client for one sandbox's control API."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        uds: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """``uds``: the control socket (``base_url`` is then ignored); named in error messages."""
        #: Where the control API is, as error messages name it.
        self.base_url = base_url.rstrip("/") if uds is None else f"unix:{uds}"
        self.uds = uds
        if uds is not None:
            # A unix socket carries no TLS: skip loading the CA bundle (tens of ms of CPU per client).
            transport = transport or httpx.AsyncHTTPTransport(uds=uds, verify=False)
            base_url = "http://control"
        self._http = httpx.AsyncClient(
            base_url=base_url,
            verify=not base_url.startswith("http://"),  # plain HTTP never uses it; https keeps it
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(timeout_s),
            transport=transport,
            trust_env=False,  # never route the control plane through a proxy
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def health(self) -> dict[str, Any]:
        return await self._request("GET", "/control/health")

    async def load(self, files: dict[str, str]) -> str:
        """Give an empty (pooled) server its task: the public bundle's files by name; returns the task id."""
        return str((await self._request("POST", "/control/load", {"files": files}))["task_id"])

    async def snapshot(self) -> dict[str, Any]:
        """The environment snapshot (``mcp_servers.records.EnvironmentSnapshot`` as JSON)."""
        return await self._request("GET", "/control/snapshot")

    async def snapshot_since(self, cursor: dict[str, int]) -> dict[str, Any]:
        """What changed after ``cursor`` (``mcp_servers.records.SnapshotDelta`` as JSON)."""
        return await self._request("POST", "/control/snapshot/since", {"cursor": cursor})

    async def grant(
        self, action_type: str, target_id: str, media_time_ms: int, source_event_id: str | None = None
    ) -> dict[str, Any]:
        """Grant an approval; returns the ``ApprovalToken`` as JSON."""
        body = {
            "action_type": action_type,
            "target_id": target_id,
            "media_time_ms": media_time_ms,
            "source_event_id": source_event_id,
        }
        return await self._request("POST", "/control/approvals/grant", body)

    async def revoke(self, action_type: str, target_id: str, media_time_ms: int) -> list[str]:
        """Revoke approvals; returns the revoked token ids."""
        body = {"action_type": action_type, "target_id": target_id, "media_time_ms": media_time_ms}
        return list((await self._request("POST", "/control/approvals/revoke", body))["revoked"])

    async def apply_event(
        self, event_id: str, *, stale_fields: list[str], world_updates: dict[str, Any], media_time_ms: int
    ) -> None:
        body = {
            "event_id": event_id,
            "stale_fields": stale_fields,
            "world_updates": world_updates,
            "media_time_ms": media_time_ms,
        }
        await self._request("POST", "/control/events/apply", body)

    async def set_media_time(self, media_time_ms: int) -> int:
        """Stamp calls that arrive without their own media time (native MCP agents); returns how
        many calls the server has recorded so far."""
        body = {"media_time_ms": media_time_ms}
        return int((await self._request("POST", "/control/media_time", body))["calls"])

    async def tools(self, *, timeout_s: float | None = None) -> list[dict[str, Any]]:
        """The task's tool schemas (``name``, ``description``, ``parameters``), as ``/mcp`` lists them."""
        return list(await self._request("GET", "/control/tools", timeout_s=timeout_s))

    async def call_tool(
        self,
        name: str,
        arguments: Any,
        media_time_ms: int,
        *,
        refused: dict[str, str | None] | None = None,
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        """Call a tool for the agent the harness bridges, at ``media_time_ms``; returns the call's
        ``ToolCallRecord`` as JSON. ``refused`` (``message``, ``logged``) replaces arguments that
        cannot be sent: the server logs the call as refused with that message."""
        body = {"name": name, "arguments": arguments, "refused": refused, "media_time_ms": media_time_ms}
        return await self._request("POST", "/control/call", body, timeout_s=timeout_s)

    async def call(self, index: int) -> dict[str, Any]:
        """One call-log record (``ToolCallRecord`` as JSON) by its index."""
        return await self._request("GET", f"/control/calls/{index}")

    async def follow(self, after: int = 0) -> AsyncIterator[dict[str, Any]]:
        """Call records from index ``after`` on, as the server publishes them (until it closes)."""
        route = "/control/stream"
        try:
            async with self._http.stream(
                "GET", route, params={"after": after}, timeout=httpx.Timeout(None, connect=5.0)
            ) as response:
                if response.status_code != 200:
                    await response.aread()
                    self._raise_for_status(route, response)
                async for line in response.aiter_lines():
                    if line.strip():
                        yield json.loads(line)
        except httpx.TransportError as exc:
            raise SandboxUnavailableError(f"control API {self.base_url}{route}: {exc!r}") from exc

    async def _request(
        self, method: str, route: str, body: dict[str, Any] | None = None, *, timeout_s: float | None = None
    ) -> Any:
        """``timeout_s`` replaces the client's timeout for this request."""
        timeout = httpx.Timeout(timeout_s) if timeout_s is not None else httpx.USE_CLIENT_DEFAULT
        try:
            response = await self._http.request(method, route, json=body, timeout=timeout)
        except httpx.TransportError as exc:
            raise SandboxUnavailableError(f"control API {self.base_url}{route}: {exc!r}") from exc
        self._raise_for_status(route, response)
        return response.json()

    def _raise_for_status(self, route: str, response: httpx.Response) -> None:
        if response.status_code < 400:
            return
        try:
            message = str(response.json().get("error", response.text))
        except (ValueError, AttributeError):
            message = response.text[:200]
        if response.status_code >= 500:
            raise SandboxUnavailableError(
                f"control API {self.base_url}{route} answered HTTP {response.status_code}: {message}"
            )
        raise ControlRequestError(route, response.status_code, message)
