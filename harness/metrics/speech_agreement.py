"""How far an agent's words and its audio agreed in one session: the ``speech_agreement`` of ``result.json``.

Read from the ``SPEECH_AGREEMENT`` rows the runner writes per response (``heard_speech.py``), so
a replayed or published run is summarized the same way. ``heard_ratio`` is the share of the
transcript's characters the simulated user heard; the verdict counts say why the rest was not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from harness.events import EventType, RunEvent

from .percentiles import rounded

__all__ = ["speech_agreement"]

_SUMMED = ("transcript_chars", "heard_chars", "unheard_chars", "played_ms", "voiced_ms")


def speech_agreement(events: Sequence[RunEvent]) -> dict[str, Any] | None:
    """The session's summary (``None`` when no response had words or audio)."""
    rows = [e.payload for e in events if e.type == EventType.SPEECH_AGREEMENT]
    if not rows:
        return None
    totals = {key: sum(int(row.get(key, 0)) for row in rows) for key in _SUMMED}
    chars = totals["transcript_chars"]
    return {
        "responses": len(rows),
        "verdicts": dict(sorted(Counter(str(row["verdict"]) for row in rows).items())),
        **totals,
        "heard_ratio": rounded(totals["heard_chars"] / chars) if chars else None,
        "speech_like_responses": sum(bool(row.get("speech_like")) for row in rows),
    }
