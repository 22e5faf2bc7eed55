"""A minimal client of any OpenAI-compatible Chat Completions endpoint, for the harness's own LLM
helpers (the semantic judge, the act observer): one prompt in, the reply text out, temperature 0.

Credentials and endpoint come from ``APEX_VOICE_LLM_API_KEY`` / ``OPENAI_API_KEY`` and
``APEX_VOICE_LLM_BASE_URL`` / ``OPENAI_BASE_URL``; without a key there is no client.
"""

from __future__ import annotations

import os

import httpx

__all__ = ["DEFAULT_BASE_URL", "ChatCompletions"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class ChatCompletions:
    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.model = model
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.api_key = api_key
        self.timeout_s = timeout_s
        self._client = client

    @classmethod
    def from_env(cls, model: str, *, timeout_s: float = 30.0) -> ChatCompletions | None:
        api_key = os.environ.get("APEX_VOICE_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY")
        if not api_key:
            return None
        base_url = os.environ.get("APEX_VOICE_LLM_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
        return cls(model=model, base_url=base_url, api_key=api_key, timeout_s=timeout_s)

    async def complete(self, prompt: str, *, max_tokens: int) -> str:
        """The reply's text. Raises ``httpx.HTTPError`` (transport, status) or ``ValueError``/``KeyError``
        (a reply that is not a chat completion)."""
        body = {
            "model": self.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": 0.0,
            "max_tokens": max_tokens,
        }
        headers = {"Authorization": f"Bearer {self.api_key or ''}"}
        url = f"{self.base_url}/chat/completions"
        if self._client is not None:
            response = await self._client.post(url, json=body, headers=headers, timeout=self.timeout_s)
        else:
            async with httpx.AsyncClient(timeout=self.timeout_s) as client:
                response = await client.post(url, json=body, headers=headers)
        response.raise_for_status()
        return str(response.json()["choices"][0]["message"]["content"])
