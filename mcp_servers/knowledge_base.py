"""Keyword search over the task's documents, with a log of every search for the grader.

Scoring is the published one (distinct query tokens present in title + text), so gold-recall numbers
stay comparable. The environment only ever holds documents whose gold/distractor flags have been
stripped; hits expose id, title, score and text, nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .public_models import KnowledgeDocument
from .record_copy import copy_records
from .records import SearchRecord

__all__ = ["KnowledgeBase", "SearchHit", "tokenize"]

_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> set[str]:
    """Distinct maximal lower-case alphanumeric runs."""
    return set(_TOKEN.findall(text.lower()))


@dataclass(frozen=True)
class SearchHit:
    doc_id: str
    title: str
    score: int
    text: str

    def as_dict(self) -> dict[str, object]:
        return {"doc_id": self.doc_id, "title": self.title, "score": self.score, "text": self.text}


@dataclass(frozen=True)
class _IndexedDocument:
    doc_id: str
    title: str
    text: str
    tokens: frozenset[str]


def _index(doc: KnowledgeDocument) -> _IndexedDocument:
    title = doc.title if doc.title is not None else doc.doc_id
    return _IndexedDocument(doc.doc_id, title, doc.text, frozenset(tokenize(f"{title} {doc.text}")))


class KnowledgeBase:
    def __init__(self, documents: list[KnowledgeDocument]) -> None:
        self._documents = [_index(doc) for doc in documents]
        self._log: list[SearchRecord] = []

    def search(self, query: str, top_k: int, media_time_ms: int = 0) -> list[SearchHit]:
        """Documents sharing at least one token with ``query``, best first, ties by ``doc_id``."""
        query_tokens = tokenize(query)
        scored = [(len(query_tokens & doc.tokens), doc) for doc in self._documents]
        ranked = sorted(((s, d) for s, d in scored if s > 0), key=lambda pair: (-pair[0], pair[1].doc_id))
        hits = [SearchHit(d.doc_id, d.title, s, d.text) for s, d in ranked[: max(0, top_k)]]
        self._log.append(
            SearchRecord(query=query, top_k=top_k, hits=[h.doc_id for h in hits], media_time_ms=media_time_ms)
        )
        return hits

    def records_since(self, start: int) -> list[SearchRecord]:
        return copy_records(self._log[start:])

    @property
    def log(self) -> list[SearchRecord]:
        return copy_records(self._log)
