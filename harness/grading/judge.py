"""The semantic field judge: an LLM asked, as a last resort, whether two field values agree.

Any OpenAI-compatible Chat Completions endpoint works. Verdicts are cached by
:func:`judge_cache_key`, and one judge asks about a key once at a time: sessions that want the same
verdict together share one request. A request that gets no verdict (endpoint down, a timeout, HTTP
408/429/5xx, a reply without a verdict) is tried again, ``JUDGE_ATTEMPTS`` times in all with
backoff; one that still has none (or an HTTP error retrying cannot fix, a 401) raises
:class:`~harness.blame.errors.JudgeUnavailable`: the field is left ``pending``, counted in ``errors`` and
not cached, so ``apex-voice regrade`` can fill it once the judge answers. A pending cell counts as a
failure in the campaign's figures until then (:mod:`harness.results.denominator`), so an agent
gains nothing by leaving the judge without a verdict.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

import httpx
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

from harness.blame.errors import JudgeUnavailable
from harness.chat_completions import DEFAULT_BASE_URL, ChatCompletions

from .judge_cache import JudgeCache, VerdictStore, judge_cache_key
from .judge_prompt import JUDGE_VERSION, build_judge_prompt, parse_verdict

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "JUDGE_ATTEMPTS",
    "JUDGE_VERSION",
    "CachedVerdicts",
    "FieldJudge",
    "SemanticJudge",
]

DEFAULT_MODEL = "gpt-4o-mini"
_TIMEOUT_S = 45.0
_MAX_TOKENS = 120
#: Requests per verdict before the field is left pending, and the first backoff (doubling, at most 8 s).
JUDGE_ATTEMPTS = 3
_RETRY_WAIT_S = 1.0
_NO_VERDICT = (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError)


def _worth_retrying(exc: BaseException) -> bool:
    """Another request may give a verdict: not after a refusal no retry changes (401, 403, 404, 400)."""
    if isinstance(exc, httpx.HTTPStatusError):
        status = exc.response.status_code
        return status in (408, 409, 429) or status >= 500
    return isinstance(exc, _NO_VERDICT)


class FieldJudge(Protocol):
    """Anything that can rule on one field value; :class:`SemanticJudge` is the real one.

    Raises :class:`~harness.blame.errors.JudgeUnavailable` when it cannot rule now.
    """

    async def __call__(self, field: str, pred: Any, gold: Any, context: str) -> bool: ...


def _is_blank(pred: Any) -> bool:
    return pred is None or not str(pred).strip()


class CachedVerdicts:
    """A judge that only knows the verdicts already cached: without an API key nothing new is decided.

    A value not in the cache stays pending rather than failing, so re-grading without a key never
    turns a pending verdict into a FAIL.
    """

    def __init__(self, cache: VerdictStore) -> None:
        self.cache = cache
        self.cache_hits = 0
        #: Values asked about that the cache has no verdict for (reported as ``errors``).
        self.errors = 0

    async def __call__(self, field: str, pred: Any, gold: Any, context: str) -> bool:
        if _is_blank(pred):
            return False
        verdict = await self.cache.aget(judge_cache_key(field, pred, gold))
        if verdict is None:
            self.errors += 1
            raise JudgeUnavailable(f"no judge configured and no cached verdict for field {field!r}")
        self.cache_hits += 1
        return verdict


class SemanticJudge:
    """Judge backed by a chat-completions model at temperature 0 (prompt ``JUDGE_VERSION``)."""

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str = DEFAULT_MODEL,
        cache: VerdictStore | None = None,
        client: httpx.AsyncClient | None = None,
        attempts: int = JUDGE_ATTEMPTS,
        retry_wait_s: float = _RETRY_WAIT_S,
    ) -> None:
        self._attempts = max(1, attempts)
        self._retry_wait_s = retry_wait_s
        self._llm = ChatCompletions(model=model, base_url=base_url, api_key=api_key, timeout_s=_TIMEOUT_S,
                                    client=client)
        self.base_url = self._llm.base_url
        self.api_key = api_key
        self.model = model
        self.cache = cache
        self.errors = 0
        self.calls = 0
        #: Requests sent, retries included (``calls`` counts the verdicts asked for).
        self.requests = 0
        self.cache_hits = 0
        #: Requests under way, by key: a second asker awaits the first one's answer.
        self._in_flight: dict[str, asyncio.Task[bool]] = {}

    @classmethod
    def from_env(cls) -> SemanticJudge | None:
        """A judge configured from the environment, or ``None`` when no API key is set."""
        llm = ChatCompletions.from_env(DEFAULT_MODEL)
        if llm is None:
            return None
        return cls(base_url=llm.base_url, api_key=llm.api_key, cache=JudgeCache())

    async def __call__(self, field: str, pred: Any, gold: Any, context: str) -> bool:
        """PASS/FAIL for ``pred`` against ``gold``; cache first, blank values fail without a call.

        Raises :class:`JudgeUnavailable` when the endpoint gives no verdict; every session waiting
        on that request gets it too (the field stays pending for each of them).
        """
        if _is_blank(pred):
            return False
        key = judge_cache_key(field, pred, gold)
        request = self._in_flight.get(key)
        if request is None:
            request = asyncio.create_task(self._decide(key, field, pred, gold, context))
            self._in_flight[key] = request
            request.add_done_callback(lambda done: self._request_done(key, done))
        # Shielded: one asker giving up (its session cancelled) does not cancel the others' answer.
        return await asyncio.shield(request)

    async def _decide(self, key: str, field: str, pred: Any, gold: Any, context: str) -> bool:
        if self.cache is not None:
            cached = await self.cache.aget(key)
            if cached is not None:
                self.cache_hits += 1
                return cached
        self.calls += 1
        prompt = build_judge_prompt(field, pred, gold, context)
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self._attempts),
            wait=wait_exponential(multiplier=self._retry_wait_s, max=8.0),
            retry=retry_if_exception(_worth_retrying),
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    self.requests += 1
                    verdict = parse_verdict(await self._complete(prompt))
        except _NO_VERDICT as exc:
            self.errors += 1
            tries = retrying.statistics.get("attempt_number", 1)
            reason = " ".join(str(exc).split())  # one line: it is listed beside the pending field
            raise JudgeUnavailable(
                f"judge {self.model} at {self.base_url}: {type(exc).__name__}: {reason} (after {tries} request(s))"
            ) from exc
        if self.cache is not None:
            verdict = await self.cache.aput(key, verdict)  # another process's verdict may have come first
        return verdict

    def _request_done(self, key: str, request: asyncio.Task[bool]) -> None:
        if self._in_flight.get(key) is request:
            del self._in_flight[key]
        if not request.cancelled():
            request.exception()  # retrieved here too, in case every asker was cancelled meanwhile

    async def _complete(self, prompt: str) -> str:
        return await self._llm.complete(prompt, max_tokens=_MAX_TOKENS)
