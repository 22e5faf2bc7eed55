"""Text LLM agents over any OpenAI-compatible chat-completions endpoint (``--model chat:MODEL``).

The task's MCP tools become function tools, plus one harness tool, ``end_call``, with which the
model hangs up. A conversation is the usual chat history: the user's words as user messages, the
model's tool calls answered by ``tool`` messages carrying their call ids, then the model speaks.
The same :class:`ChatConversation` is the brain of the cascade voice agent.

Failures are blamed here, where the endpoint answered, by its status and error code (blame by
origin): a bad key (401/403) is :class:`ChatProviderError` ``auth`` (a :class:`ProviderError`: the
campaign stops, naming the endpoint) and another refused request (400, 404, 422) ``bad_request``;
rate limits, server errors, timeouts and network failures are retried with backoff
(``Retry-After`` honoured) and then raised as :class:`ChatTransientError` (a
:class:`ProviderTransient`: the session is retried, never scored). A 400 about the conversation
the model itself produced (``context_length_exceeded``) and an answer that is not a chat
completion are the model's own failure, :class:`AgentFailure`: the session ends there and is scored.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from typing import Any

import httpx

from harness.blame.codes import FailureCode
from harness.blame.errors import AgentFailure, ProviderError, ProviderErrorKind, ProviderTransient

from .realtime import ErrorKind
from .text_agents import AgentObservationView, AgentTurn, ToolCallRequest

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "END_CALL_TOOL",
    "ChatClient",
    "ChatConversation",
    "ChatEndpoint",
    "ChatProviderError",
    "ChatReply",
    "ChatTextAgent",
    "ChatTransientError",
    "function_tools",
]

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_ENDPOINT = "https://api.openai.com/v1"
ENDPOINT_ENV = "OPENAI_BASE_URL"
END_CALL_TOOL = "end_call"
_END_CALL_SCHEMA = {
    "type": "function",
    "function": {
        "name": END_CALL_TOOL,
        "description": "Hang up. Call it once the work is done and you have said goodbye.",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
    },
}
_STATUS_KINDS: dict[int, ProviderErrorKind] = {400: "bad_request", 401: "auth", 403: "auth", 404: "bad_request", 422: "bad_request"}
#: Error codes of a 400 that refuse the conversation the model produced, not the harness's request.
_CONVERSATION_CODES = frozenset({"context_length_exceeded", "string_above_max_length"})


class ChatProviderError(ProviderError):
    """The endpoint refused the request (bad key, unknown model, malformed request): not retryable."""


class ChatTransientError(ProviderTransient):
    """Rate limited, a server error or a network failure that outlived the retries."""

    def __init__(self, message: str, kind: ErrorKind = "transient", *, retry_after_s: float | None = None) -> None:
        super().__init__(message, retry_after_s=retry_after_s)
        self.kind = kind


@dataclass(frozen=True)
class ChatEndpoint:
    """Where the model is served; the key is read from ``api_key_env`` when the client starts."""

    model: str
    base_url: str = ""
    api_key_env: str = DEFAULT_API_KEY_ENV
    timeout_s: float = 60.0
    max_retries: int = 3
    backoff_s: float = 1.0
    temperature: float | None = 0.0

    @property
    def url(self) -> str:
        base = (self.base_url or os.environ.get(ENDPOINT_ENV, "").strip() or DEFAULT_ENDPOINT).rstrip("/")
        return base if base.endswith("/chat/completions") else f"{base}/chat/completions"

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env, "").strip() or None


@dataclass(frozen=True)
class ChatToolCall:
    call_id: str
    name: str
    arguments: str

    def parsed_arguments(self) -> Any:
        """A dict when the model wrote JSON, else its raw text (the environment refuses it with a
        message the model can act on)."""
        try:
            return json.loads(self.arguments) if self.arguments.strip() else {}
        except json.JSONDecodeError:
            return self.arguments


@dataclass(frozen=True)
class ChatReply:
    text: str
    tool_calls: list[ChatToolCall]
    end_call: bool
    #: Calls listed after ``end_call`` in the same reply (the call is over: not executed).
    after_end_call: list[ChatToolCall] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    finish_reason: str | None = None


def function_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """MCP tool listings (name, description, JSON-schema parameters) → chat function tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool.get("description") or "",
                "parameters": tool.get("parameters") or {"type": "object", "properties": {}},
            },
        }
        for tool in tools
    ]


class ChatClient:
    """One ``POST /chat/completions`` per step, over a shared ``httpx.AsyncClient``."""

    def __init__(self, endpoint: ChatEndpoint, http: httpx.AsyncClient | None = None) -> None:
        self.endpoint = endpoint
        self._http = http
        self._owns_http = http is None
        self.requests = 0

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        body: dict[str, Any] = {"model": self.endpoint.model, "messages": messages}
        if tools:
            body["tools"] = tools
        if self.endpoint.temperature is not None:
            body["temperature"] = self.endpoint.temperature
        data = await self._post(body)
        try:
            choice = data["choices"][0]
            message = choice["message"]
            calls = [
                ChatToolCall(str(call["id"]), str(call["function"]["name"]), str(call["function"].get("arguments") or ""))
                for call in message.get("tool_calls") or []
            ]
            ended = next((i for i, c in enumerate(calls) if c.name == END_CALL_TOOL), len(calls))
            return ChatReply(
                text=str(message.get("content") or "").strip(),
                # Calls after end_call come after the hang-up: never executed, only reported.
                tool_calls=calls[:ended],
                end_call=ended < len(calls),
                after_end_call=[c for c in calls[ended + 1:] if c.name != END_CALL_TOOL],
                usage=data.get("usage") or {},
                finish_reason=choice.get("finish_reason"),
            )
        except (KeyError, IndexError, TypeError, AttributeError):
            raise AgentFailure(
                FailureCode.MALFORMED_EVENT, f"{self.endpoint.url}: the answer is not a chat completion: {str(data)[:200]}"
            ) from None

    async def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=self.endpoint.timeout_s)
        headers = {"Authorization": f"Bearer {key}"} if (key := self.endpoint.api_key()) else {}
        url = self.endpoint.url
        failure, wait = "", None
        kind: ErrorKind = "transient"
        for attempt in range(self.endpoint.max_retries + 1):
            delay = self.endpoint.backoff_s * 2**attempt
            self.requests += 1
            try:
                response = await self._http.post(url, json=body, headers=headers)
            except httpx.HTTPError as exc:  # timeouts, refused or reset connections
                failure, kind, wait = f"{url}: {type(exc).__name__}: {exc}", "transient", None
            else:
                if response.status_code < 300:
                    return _json_answer(url, response)
                if response.status_code in _STATUS_KINDS:
                    raise _refusal(url, response)
                kind = "rate_limited" if response.status_code == 429 else "transient"
                failure, wait = f"{url}: HTTP {response.status_code}: {response.text[:300]}", _retry_after(response)
            if attempt < self.endpoint.max_retries:
                await asyncio.sleep(wait or delay)
        raise ChatTransientError(f"{failure} (after {self.endpoint.max_retries + 1} attempts)", kind, retry_after_s=wait)

    async def aclose(self) -> None:
        if self._owns_http and self._http is not None:
            await self._http.aclose()
        self._http = None


def _json_answer(url: str, response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        raise AgentFailure(FailureCode.MALFORMED_EVENT, f"{url}: the answer is not JSON: {response.text[:200]!r}") from None


def _error_code(response: httpx.Response) -> str | None:
    """``error.code`` of an OpenAI error body, if the body is one."""
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None


def _refusal(url: str, response: httpx.Response) -> ChatProviderError | AgentFailure:
    """A 4xx the endpoint will answer again: a refusal of the harness, or of the model's conversation."""
    status, code = response.status_code, _error_code(response)
    detail = f"{url} refused the request ({status}{', ' + code if code else ''}): {response.text[:300]}"
    if status == 400 and code in _CONVERSATION_CODES:
        return AgentFailure(FailureCode.REFUSED, detail)
    return ChatProviderError(detail, kind=_STATUS_KINDS[status])


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return float(response.headers.get("retry-after", ""))
    except ValueError:
        return None


class ChatConversation:
    """The chat history of one session and the step that extends it."""

    def __init__(self, client: ChatClient, instructions: str, tools: list[dict[str, Any]]) -> None:
        self.client = client
        self.tools = [*function_tools(tools), _END_CALL_SCHEMA]
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": instructions}]

    def add_user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    def add_tool_result(self, call_id: str, output: Any, is_error: bool = False) -> None:
        content = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)
        if is_error:
            content = f"ERROR: {content}"
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": content})

    async def step(self) -> ChatReply:
        reply = await self.client.complete(self.messages, self.tools)
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        calls = reply.tool_calls  # end_call is answered by hanging up, so it stays out of the history
        if calls:
            message["tool_calls"] = [
                {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in calls
            ]
        if message["content"] is None and not calls:
            message["content"] = ""
        self.messages.append(message)
        return reply


class ChatTextAgent:
    """A C0 text agent: one chat step per observation; tool results come back with their call ids."""

    continues_after_tools = True

    def __init__(self, model: str, endpoint: str = "", api_key_env: str = DEFAULT_API_KEY_ENV,
                 client: ChatClient | None = None) -> None:
        self.model_id = f"chat:{model}"
        self.client = client or ChatClient(ChatEndpoint(model, endpoint, api_key_env))
        self.conversation: ChatConversation | None = None
        self.usage: list[dict[str, Any]] = []

    async def reset(self, system_prompt: str, tools: list[dict[str, Any]]) -> None:
        self.conversation = ChatConversation(self.client, system_prompt, tools)

    async def act(self, view: AgentObservationView) -> AgentTurn:
        if self.conversation is None:
            raise RuntimeError("ChatTextAgent.act before reset")
        for result in view.tool_results:
            if result.get("call_id"):
                self.conversation.add_tool_result(result["call_id"], result.get("result"), not result.get("ok", True))
        if view.user_text:
            self.conversation.add_user(view.user_text)
        reply = await self.conversation.step()
        self.usage.append(reply.usage)
        return AgentTurn(
            text=reply.text,
            tool_calls=[ToolCallRequest(c.name, c.parsed_arguments(), c.call_id) for c in reply.tool_calls],
            end_call=reply.end_call,
            after_end_call=[ToolCallRequest(c.name, None, c.call_id) for c in reply.after_end_call],
        )

    def metadata(self) -> dict[str, Any]:
        tokens = {
            key: sum(int(usage.get(key) or 0) for usage in self.usage) for key in ("prompt_tokens", "completion_tokens")
        }
        return {
            "model": self.client.endpoint.model,
            "endpoint": self.client.endpoint.url,
            "requests": self.client.requests,
            "usage": tokens,
        }

    async def aclose(self) -> None:
        await self.client.aclose()

