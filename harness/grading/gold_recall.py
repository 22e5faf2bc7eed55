"""Knowledge-base gold recall (reference §2.9), shared by the ``kb_gold_retrieved`` predicate and results."""

from __future__ import annotations

from collections.abc import Iterable

from mcp_servers.records import SearchRecord

__all__ = ["gold_recall"]


def gold_recall(searches: Iterable[SearchRecord], gold_doc_ids: list[str]) -> float:
    """Share of gold documents that appeared in any hit list; 1.0 when the task has none."""
    gold = set(gold_doc_ids)
    if not gold:
        return 1.0
    retrieved = {doc_id for search in searches for doc_id in search.hits}
    return len(gold & retrieved) / len(gold)
