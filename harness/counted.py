"""A count with its noun in the right number, for every line the harness prints ("1 run", "2 runs")."""

from __future__ import annotations

__all__ = ["counted"]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``"1 run"``, ``"0 runs"``; ``plural`` for nouns that do not just take an ``s``."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"
