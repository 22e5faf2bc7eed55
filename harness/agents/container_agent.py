"""The harness's side of an agent container: the OpenAI Realtime client, with the container's blame.

An agent that runs as an image (``--model container:IMAGE``, or the native oracle under
``--sandbox docker``) is reached at ``ws://ADDRESS:8765/v1/realtime`` on its session's network and
spoken to exactly like any OpenAI-Realtime server, with no key (docs/agent-containers.md). It runs
on the realtime clock: a process behind a socket cannot be lock-stepped.

What differs from a provider is whose fault a failure is. A provider's dropped socket or ``error``
event is infrastructure (retried, never scored) or a refusal of the harness (the campaign stops).
An agent container *is* the model under test, so whatever it does is its own doing: dying,
dropping or closing its socket, sending malformed or error events, refusing or never acknowledging
the session. Each of these ends the call there (``CallEnded``, after a logged ``AdapterError``
of kind ``provider`` with code ``agent_failed``), and the session is graded with what the
environment holds, never retried; nothing it sends can stop the campaign. A close with code 1000
is the agent hanging up. A task server that dies meanwhile is still infrastructure: grading
reads the environment, and a dead one fails as the sandbox's fault.

Privileged built-in entries (the native oracle) are also sent the task's reference policy, in the
``apex_voice.reference_policy`` extension of ``session.update`` (see
:mod:`harness.agents.realtime_server`); any other agent is never sent it.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from harness.blame.codes import AdapterErrorCode
from harness.blame.errors import ProviderError, ProviderTransient

from .providers.openai_realtime import OpenAIRealtimeAdapter
from .providers.ws_adapter import WebsocketAdapter
from .realtime import AdapterError, CallEnded, SessionConfig

__all__ = ["AgentEndsCall", "ContainerAgentAdapter"]

#: Close code with which an agent hangs up (RFC 6455 normal closure).
HANG_UP_CLOSE_CODE = 1000


class _SessionUpdateWithPolicy(BaseModel):
    """``session.update`` plus the ``apex_voice`` extension, for privileged entries only."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["session.update"] = "session.update"
    session: dict[str, Any]
    apex_voice: dict[str, Any]


class AgentEndsCall(WebsocketAdapter):
    """A socket to the agent under test itself: once its session is open, whatever the socket
    does is the agent's doing. A close with 1000 is its hang-up; anything else ends the call as its
    failure (``agent_failed``, or ``over_limit`` for a message past the bound), never retried."""

    #: Who failed, in the message (``"the agent container"``, ``"the media-stream bot"``).
    agent_label: ClassVar[str] = "the agent container"

    def _fail(self, error: AdapterError) -> None:
        opening = self._ready is not None and not self._ready.done()
        if opening or self._failed:
            super()._fail(error)  # connect() turns it into the agent's failure
            return
        self._failed = True
        received = self._ws.protocol.close_rcvd if self._ws is not None else None  # the agent's own close frame
        if received is not None and received.code == HANG_UP_CLOSE_CODE:
            self._emit(CallEnded())
            return
        # A message over the size limit keeps its own code, so the session records it as over_limit.
        over_limit = error.code == AdapterErrorCode.OVER_LIMIT
        self._agent_failed(error.message, code=AdapterErrorCode.OVER_LIMIT if over_limit else AdapterErrorCode.AGENT_FAILED)

    def _agent_failed(self, detail: str, *, code: AdapterErrorCode = AdapterErrorCode.AGENT_FAILED) -> None:
        self._emit(AdapterError(f"{self.agent_label} failed ({detail}): the model's failure, graded with what the "
                                "environment holds", kind="provider", code=code))
        self._emit(CallEnded())


class ContainerAgentAdapter(AgentEndsCall, OpenAIRealtimeAdapter):
    model_id: ClassVar[str] = "container-agent"
    provider: ClassVar[str] = "agent container"
    api_key_env: ClassVar[tuple[str, ...]] = ()
    endpoint_env: ClassVar[str | None] = None
    default_endpoint: ClassVar[str] = ""
    default_model: ClassVar[str | None] = None
    #: A container that has only just started (and may synthesize its speech first) gets longer.
    open_timeout_s: ClassVar[float] = 60.0
    #: The MCP client that calls the task's tools is the agent's own, in its container.
    mcp_client: ClassVar[Literal["agent", "provider"]] = "agent"

    def __init__(self, *, endpoint: str | None = None, model: str | None = None, require_key: bool = False) -> None:
        super().__init__(endpoint=endpoint, model=model or "", require_key=False)

    def _url(self) -> str:
        return self.endpoint  # no model query: the image is the model

    def _session(self, config: SessionConfig) -> BaseModel:
        update = super()._session(config)
        if config.reference_policy is None:
            return update
        session = update.model_dump(mode="json", exclude_none=True)["session"]
        policy = config.reference_policy.model_dump(mode="json")
        return _SessionUpdateWithPolicy(session=session, apex_voice={"reference_policy": policy})

    async def connect(self, config: SessionConfig) -> None:
        """Open the session; an agent that refuses it or never acknowledges it ends the call at once."""
        try:
            await super().connect(config)
        except (ProviderError, ProviderTransient) as exc:
            self._failed = True
            self._agent_failed(f"it did not open its session: {exc}")
