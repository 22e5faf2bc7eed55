"""What the protocol fakes share: a websocket server on 127.0.0.1, the scripted agent's voice,
handshake checks (path, 429 with Retry-After) and the record of what was said both ways."""

from __future__ import annotations

import json
import typing
from dataclasses import dataclass
from http import HTTPStatus
from typing import Annotated, Any, Union

from pydantic import Field, TypeAdapter
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from harness.audio import espeak
from harness.audio.clip import Clip
from harness.tasks.models import PolicyTurn

__all__ = ["RETRY_AFTER_S", "Handshake", "LoopbackFake", "discriminated"]

#: Seconds a 429 asks the client to wait.
RETRY_AFTER_S = 7
#: The scripted provider's voice: espeak, whose clips carry word timings (a response cut mid-line
#: transcribes the words its audio reached), which the harness's own agent voice does not give.
PROVIDER_VOICE = "en-us+m7"


def discriminated(union: Any) -> TypeAdapter[Any]:
    """A validator for an openai SDK event union, rebuilt as a real discriminated union: one precise
    error naming the field (the SDK's own discriminator is invisible to pydantic)."""
    members = typing.get_args(typing.get_args(union)[0])
    return TypeAdapter(Annotated[Union[members], Field(discriminator="type")])  # noqa: UP007


@dataclass
class Handshake:
    path: str
    headers: dict[str, str]


class LoopbackFake:
    """``async with Fake(turns) as fake:`` then connect to ``fake.url``; subclasses serve one socket."""

    #: Quirk names the subclass implements.
    known_quirks: frozenset[str] = frozenset()
    #: The body of the 429 refusal, in the provider's error format.
    rate_limit_body = ""

    def __init__(self, turns: list[PolicyTurn] | None, *, api_key: str | None, quirks: frozenset[str] | set[str], path: str) -> None:
        unknown = set(quirks) - self.known_quirks
        if unknown:
            raise ValueError(f"unknown quirks {sorted(unknown)}; known: {sorted(self.known_quirks)}")
        self.turns = list(turns or [])
        self.api_key = api_key
        self.quirks = frozenset(quirks)
        self.path = path
        self.clips: dict[str, Clip] = {}
        self.handshakes: list[Handshake] = []
        #: Every client message as received (after JSON decoding), valid or not.
        self.received: list[dict[str, Any]] = []
        #: Every message the fake sent.
        self.sent: list[dict[str, Any]] = []
        #: One line per client message the official types refused.
        self.invalid: list[str] = []
        #: Protocol misuse the types cannot see (an unknown call id, a continuation too early).
        self.violations: list[str] = []
        self._server: Server | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start the fake first"
        port = next(iter(self._server.sockets)).getsockname()[1]
        return f"ws://127.0.0.1:{port}{self.path}"

    async def __aenter__(self) -> Any:
        texts = sorted({t.text for t in self.turns if t.text})
        self.clips = await espeak.synthesize(texts, PROVIDER_VOICE) if texts else {}
        self._server = await serve(self._serve, "127.0.0.1", 0, process_request=self._process_request, max_size=None, compression=None)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        self.handshakes.append(Handshake(request.path, dict(request.headers.raw_items())))
        if request.path.split("?")[0] != self.path:
            return connection.respond(HTTPStatus.NOT_FOUND, f"nothing at {request.path}\n")
        if "rate_limited" in self.quirks:
            response = connection.respond(HTTPStatus.TOO_MANY_REQUESTS, self.rate_limit_body)
            response.headers["Retry-After"] = str(RETRY_AFTER_S)
            return response
        return self._authorize(connection, request)

    async def deliver(self, ws: ServerConnection, message: dict[str, Any]) -> None:
        """Send one (already validated) message and record it; a closed socket drops it."""
        self.sent.append(message)
        try:
            await ws.send(json.dumps(message))
        except ConnectionClosed:
            pass

    def _authorize(self, connection: ServerConnection, request: Request) -> Response | None:
        """Refuse the upgrade if the key is wrong (providers that check it at the handshake)."""
        return None

    async def _serve(self, connection: ServerConnection) -> None:
        raise NotImplementedError
