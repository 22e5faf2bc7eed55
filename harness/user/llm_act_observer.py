"""The act observer's second stage in C2/C3: an LLM labels what the deterministic patterns missed.

Real models phrase their questions their own way; a regex written for the reference policy does
not hear them, and the simulated user would then not understand. As in the reference, the
deterministic patterns run first; the acts they did not find are offered to an LLM as a closed
list, and the labels it returns (only from that list) become acts with source ``classifier``.
Unlike the reference, every answer is **cached** (key: prompt version, remaining candidates,
utterance), so a rerun hears exactly the same user and makes no LLM call.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import httpx

from harness.chat_completions import ChatCompletions
from harness.first_writer_store import FirstWriterStore

__all__ = ["OBSERVER_CACHE_ENV", "OBSERVER_PROMPT_VERSION", "LlmActClassifier", "observer_prompt"]

OBSERVER_PROMPT_VERSION = "act-observer-1"
OBSERVER_CACHE_ENV = "APEX_VOICE_OBSERVER_CACHE"
DEFAULT_MODEL = "gpt-4o-mini"
_MAX_UTTERANCE = 600
_MAX_TOKENS = 120
_ARRAY = re.compile(r"\[.*?\]", re.DOTALL)


def observer_prompt(candidates: list[str], utterance: str) -> str:
    return (
        "Label the utterance of a professional voice agent with the semantic acts it performs. "
        "Choose only from this closed list and return a JSON array of exact strings, or [] if none apply.\n"
        f"Acts: {json.dumps(candidates)}\n"
        f"Utterance: {utterance[:_MAX_UTTERANCE]}\n"
        "Return only the JSON array."
    )


def _cache_key(candidates: list[str], utterance: str) -> str:
    text = f"{OBSERVER_PROMPT_VERSION}|{json.dumps(candidates)}|{utterance[:_MAX_UTTERANCE]}"
    return hashlib.md5(text.encode()).hexdigest()


def _labels(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def default_cache_path() -> Path:
    configured = os.environ.get(OBSERVER_CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "apex_voice" / "observer_cache.sqlite3"


class LlmActClassifier:
    """Closed-list act labelling through a chat-completions model, cached on disk."""

    def __init__(self, llm: ChatCompletions, cache: FirstWriterStore | None = None) -> None:
        self.llm = llm
        # One row per answer (O(1) writes; the first answer a session used never changes).
        self.cache = cache if cache is not None else FirstWriterStore(default_cache_path())
        self.calls = 0
        self.cache_hits = 0
        self.errors = 0

    @classmethod
    def from_env(cls) -> LlmActClassifier | None:
        llm = ChatCompletions.from_env(os.environ.get("APEX_VOICE_OBSERVER_MODEL", DEFAULT_MODEL))
        return cls(llm) if llm is not None else None

    @property
    def name(self) -> str:
        return f"llm:{self.llm.model}"

    async def classify(self, utterance: str, candidates: list[str]) -> list[str]:
        """The candidates the utterance performs (a subset of ``candidates``); ``[]`` on any error."""
        remaining = sorted(set(candidates))
        if not utterance.strip() or not remaining:
            return []
        key = _cache_key(remaining, utterance)
        cached = await self.cache.aget(key)
        if _labels(cached):
            self.cache_hits += 1
            return [label for label in cached if label in remaining]
        self.calls += 1
        try:
            reply = await self.llm.complete(observer_prompt(remaining, utterance), max_tokens=_MAX_TOKENS)
            match = _ARRAY.search(reply)
            parsed = json.loads(match.group(0)) if match else []
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError):
            self.errors += 1  # an outage is not cached: a later run asks again
            return []
        labels = [label for label in parsed if isinstance(label, str) and label in remaining]
        stored = await self.cache.aput(key, labels)  # another process may have answered first: its labels win
        return [label for label in stored if label in remaining] if _labels(stored) else labels
