"""A fake OpenAI-compatible chat-completions server on loopback that plays a task's reference policy.

It speaks the real wire protocol (``POST /v1/chat/completions``, JSON bodies, bearer auth): every
request body is validated against the ``openai`` package's request type, and every answer is
built as an ``openai`` ``ChatCompletion``. Playing the policy: the conversation's turn is the
number of assistant messages that ended a turn (no tool calls) so far; for a turn with tool calls
it first answers with those calls, then, once the tool results are in, with the turn's words (and
an ``end_call`` call when the policy hangs up). ``silent`` answers every request with nothing.
A turn whose calls already ran (the user spoke before its words: an interrupted voice bot) is
answered with its words, never with its calls again. A request with ``stream: true`` (Pipecat's LLM services stream) gets the same answer as
server-sent ``chat.completion.chunk`` events: the words, then each call whole, then ``[DONE]``.
``fail_with`` queues HTTP statuses to answer before playing (429, 500, 401...), or ``(status,
body)`` pairs such as :data:`CONTEXT_LENGTH_EXCEEDED`: error bodies exactly as OpenAI sends them.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import uvicorn
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.chat.completion_create_params import (
    CompletionCreateParamsNonStreaming,
    CompletionCreateParamsStreaming,
)
from pydantic import TypeAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from harness.tasks.models import ReferencePolicy
from tests.loopback import serve_on_loopback

__all__ = ["CONTEXT_LENGTH_EXCEEDED", "INVALID_API_KEY", "FakeChatServer", "serve_fake_chat", "serve_fake_chat_in_thread"]

_REQUEST = TypeAdapter(CompletionCreateParamsNonStreaming)
_STREAMING_REQUEST = TypeAdapter(CompletionCreateParamsStreaming)
API_KEY = "sk-fake-chat"

#: OpenAI's answer to a wrong key, verbatim.
INVALID_API_KEY: tuple[int, dict[str, Any]] = (401, {"error": {
    "message": "Incorrect API key provided: sk-wrong. You can find your API key at https://platform.openai.com/account/api-keys.",
    "type": "invalid_request_error", "param": None, "code": "invalid_api_key",
}})
#: OpenAI's answer to a conversation longer than the model's context, verbatim.
CONTEXT_LENGTH_EXCEEDED: tuple[int, dict[str, Any]] = (400, {"error": {
    "message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 8423 tokens. "
    "Please reduce the length of the messages.",
    "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded",
}})


@dataclass
class FakeChatServer:
    policy: ReferencePolicy | None = None
    mode: Literal["policy", "silent"] = "policy"
    fail_with: list[int | tuple[int, dict[str, Any]]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    base_url: str = ""

    async def completions(self, request: Request) -> JSONResponse | StreamingResponse:
        if request.headers.get("authorization") != f"Bearer {API_KEY}":
            return JSONResponse(INVALID_API_KEY[1], INVALID_API_KEY[0])
        body = await request.json()
        _validate(body)  # a malformed request fails the test through a 500
        self.requests.append(body)
        if self.fail_with:
            failure = self.fail_with.pop(0)
            status, error = failure if isinstance(failure, tuple) else (failure, {"error": {"message": f"fake {failure}"}})
            return JSONResponse(error, status, headers={"retry-after": "0"})
        message = self._answer(body["messages"]) if self.mode == "policy" else {"role": "assistant", "content": ""}
        if body.get("stream"):
            return StreamingResponse(_chunks(body["model"], f"chatcmpl-{len(self.requests)}", message),
                                     media_type="text/event-stream")
        completion = ChatCompletion.model_validate(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    }
                ],
                "usage": {"prompt_tokens": len(json.dumps(body)) // 4, "completion_tokens": 8, "total_tokens": 0},
            }
        )
        return JSONResponse(completion.model_dump(mode="json", exclude_none=True))

    def _answer(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        turns = self.policy.turns if self.policy is not None else []
        index = sum(1 for m in messages if m["role"] == "assistant" and not m.get("tool_calls"))
        if index >= len(turns):
            return {"role": "assistant", "content": None, "tool_calls": [_call(f"call_{index}_end", "end_call", {})]}
        turn = turns[index]
        ended = [i for i, m in enumerate(messages) if m["role"] == "assistant" and not m.get("tool_calls")]
        called = any(m["role"] == "tool" for m in messages[(ended[-1] + 1 if ended else 0):])
        # The turn's calls ran and the user spoke before its words (a voice bot was interrupted):
        # its words are still owed, the calls are not made twice.
        if not called and turn.tool_calls:
            calls = [_call(f"call_{index}_{j}", c.name, c.args) for j, c in enumerate(turn.tool_calls)]
            return {"role": "assistant", "content": None, "tool_calls": calls}
        answer: dict[str, Any] = {"role": "assistant", "content": turn.text}
        if turn.end_call:
            answer["tool_calls"] = [_call(f"call_{index}_end", "end_call", {})]
        return answer


def _validate(body: dict[str, Any]) -> None:
    """Check ``body`` against the SDK's request type, all the way down: pydantic validates the
    SDK's ``Iterable`` fields (messages, tool calls, content parts) lazily, as they are iterated."""

    def drain(value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                drain(item)
        elif isinstance(value, list | tuple):
            for item in value:
                drain(item)
        elif hasattr(value, "__next__"):
            for item in value:
                drain(item)

    drain((_STREAMING_REQUEST if body.get("stream") else _REQUEST).validate_python(body))


def _chunks(model: str, completion_id: str, message: dict[str, Any]) -> Iterator[str]:
    """``message`` as the SSE stream of ``chat.completion.chunk`` events OpenAI sends for it."""

    def event(delta: dict[str, Any], finish: str | None = None) -> str:
        chunk = ChatCompletionChunk.model_validate({
            "id": completion_id, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        return f"data: {chunk.model_dump_json(exclude_none=True)}\n\n"

    yield event({"role": "assistant", "content": ""})
    if message.get("content"):
        yield event({"content": message["content"]})
    for index, call in enumerate(message.get("tool_calls") or []):
        yield event({"tool_calls": [{"index": index, **call}]})
    yield event({}, "tool_calls" if message.get("tool_calls") else "stop")
    yield "data: [DONE]\n\n"


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def _app(fake: FakeChatServer) -> Starlette:
    return Starlette(routes=[Route("/v1/chat/completions", fake.completions, methods=["POST"])])


def _server(fake: FakeChatServer, **config: object) -> uvicorn.Server:
    return uvicorn.Server(uvicorn.Config(_app(fake), log_level="warning", lifespan="off", **config))


@asynccontextmanager
async def serve_fake_chat(fake: FakeChatServer) -> AsyncIterator[FakeChatServer]:
    """``fake`` served by uvicorn on a free loopback port, in this event loop; ``fake.base_url`` set."""
    server = _server(fake, host="127.0.0.1", port=0)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        assert not serving.done(), "uvicorn stopped while starting"
        await asyncio.sleep(0.01)
    fake.base_url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/v1"
    try:
        yield fake
    finally:
        server.should_exit = True
        await serving


@contextmanager
def serve_fake_chat_in_thread(fake: FakeChatServer) -> Iterator[FakeChatServer]:
    """``fake`` served from its own thread (for code under test that runs its own event loop)."""
    with serve_on_loopback(_app(fake)) as base:
        fake.base_url = f"{base}/v1"
        yield fake
