"""How far an agent's words and its audio agreed in one session: the ``speech_agreement`` of ``result.json``.

Read from the ``SPEECH_AGREEMENT`` rows the runner writes per response (``heard_speech.py``), so
a replayed or published run is summarized the same way. ``heard_ratio`` is the share of the
transcript's characters the simulated user heard; the verdict counts say why the rest was not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from harness.events import EventType, RunEvent, payload_as
from harness.events.payloads import SpeechAgreement

from .percentiles import rounded

__all__ = ["speech_agreement"]

def speech_agreement(events: Sequence[RunEvent]) -> dict[str, Any] | None:
    """The session's summary (``None`` when no response had words or audio)."""
    rows = [payload_as(e, SpeechAgreement) for e in events if e.type == EventType.SPEECH_AGREEMENT]
    if not rows:
        return None
    totals = {
        "transcript_chars": sum(row.transcript_chars for row in rows),
        "heard_chars": sum(row.heard_chars for row in rows),
        "unheard_chars": sum(row.unheard_chars for row in rows),
        "played_ms": sum(row.played_ms for row in rows),
        "voiced_ms": sum(row.voiced_ms for row in rows),
    }
    chars = totals["transcript_chars"]
    return {
        "responses": len(rows),
        "verdicts": dict(sorted(Counter(row.verdict for row in rows).items())),
        **totals,
        "heard_ratio": rounded(totals["heard_chars"] / chars) if chars else None,
        "speech_like_responses": sum(row.speech_like for row in rows),
        # Responses whose played words ASR of their audio does not carry (``hearing: asr`` only).
        "mismatched_responses": sum(row.verdict == "mismatch" for row in rows),
        "mismatched_chars": sum(row.mismatched_chars or 0 for row in rows),
    }
