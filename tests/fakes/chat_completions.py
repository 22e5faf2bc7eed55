"""A fake OpenAI-compatible Chat Completions server on a loopback port (real HTTP, uvicorn).

``handler(body) -> str`` gives the assistant's reply text for a request body (or raises
``FakeError`` to answer with an HTTP error); every request body is recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.loopback import serve_on_loopback


class FakeError(Exception):
    def __init__(self, status: int) -> None:
        self.status = status


@dataclass
class ChatCompletionsFake:
    handler: Callable[[dict[str, Any]], str]
    requests: list[dict[str, Any]] = field(default_factory=list)
    base_url: str = ""

    async def _completions(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        try:
            reply = self.handler(body)
        except FakeError as exc:
            return JSONResponse({"error": {"message": "fake failure"}}, status_code=exc.status)
        return JSONResponse({"object": "chat.completion", "model": body.get("model"),
                             "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": reply}}]})


@contextmanager
def serve_chat_completions(handler: Callable[[dict[str, Any]], str]) -> Iterator[ChatCompletionsFake]:
    fake = ChatCompletionsFake(handler)
    app = Starlette(routes=[Route("/v1/chat/completions", fake._completions, methods=["POST"])])
    with serve_on_loopback(app) as base:
        fake.base_url = f"{base}/v1"
        yield fake
