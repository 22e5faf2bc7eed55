"""The semantic judge's prompt and verdict parsing, versioned together.

``JUDGE_VERSION`` is part of every judge-cache key: a prompt edit without a version bump would
silently reuse verdicts given to the old prompt. ``tests/test_grading_judge.py`` pins a digest of
the template so such an edit fails loudly.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "JUDGE_PROMPT_MAX_CHARS",
    "JUDGE_PROMPT_TEMPLATE",
    "JUDGE_VERSION",
    "build_judge_prompt",
    "clipped",
    "parse_verdict",
]

JUDGE_VERSION = "artifact-aware-3"

JUDGE_PROMPT_TEMPLATE = """\
You are reviewing ONE field of a professional artifact (a form, record or report) that a voice \
agent filled in from a spoken conversation. Compare what the agent wrote with the reference \
value the way a sensible human reviewer would: judge the substance, and forgive surface form that \
comes from dictation.

Answer PASS when the agent's value states the same fact, decision or entity as the reference, even \
if it is shorter, leaves out secondary detail, adds detail that agrees with the reference, is \
reworded, abbreviated or spelled out, gives an approximation of the same number, uses an \
affirmative or status phrasing for the same outcome ("Yes" for "filed"), or describes the same \
action in other words.

Identifiers: ignore letter case, separators (hyphen, underscore, space, dot), leading zeros and an \
added or dropped type prefix. These all PASS: CC4419 vs CC-4419; cc_4419 vs CC-4419; HVAC-007 vs \
HVAC-7; 2201 vs JOB-2201; E-1042 vs E1042; INV 0042 vs INV-42; po.7781 vs PO-7781; \
case 00318 vs CASE-318.

Answer FAIL only when the agent wrote a different specific value, number, name, date, amount or \
decision, or a different identifier (CC4419 vs CC5500; a refund to the card vs store credit), when \
the core meaning of the reference is missing, or when the value is empty.

Use the other fields of the artifact only to resolve ambiguity. When the two values are plausibly \
equivalent, PASS.

Field: {field}
Context: {context}
Reference (gold): {gold}
Agent wrote: {pred}

Reply with strict JSON only: {{"pass": true|false, "why": "<short reason>"}}"""


#: Each part of the prompt the agent can size is cut to a bound, so the whole prompt is bounded:
#: the field name, each value (the agent's and the gold, as ``repr``), and the context (the task's
#: note plus the artifact's other fields, which the agent wrote). An agent cannot overflow the
#: judge's context to leave a field without a verdict. Values within the tool's field bound
#: (``MAX_FIELD_VALUE_BYTES``, 4 KiB) are never cut.
_FIELD_CHARS = 200
_VALUE_CHARS = 8_000
_CONTEXT_CHARS = 8_000
JUDGE_PROMPT_MAX_CHARS = len(JUDGE_PROMPT_TEMPLATE) + _FIELD_CHARS + 2 * _VALUE_CHARS + _CONTEXT_CHARS


def clipped(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    note = f" …[{len(text) - limit} more characters not shown]"
    return text[: max(0, limit - len(note))] + note


def build_judge_prompt(field: str, pred: Any, gold: Any, context: str) -> str:
    """The single user message sent to the judge model (at most ``JUDGE_PROMPT_MAX_CHARS`` long)."""
    return JUDGE_PROMPT_TEMPLATE.format(
        field=clipped(field, _FIELD_CHARS),
        context=clipped(context, _CONTEXT_CHARS),
        gold=clipped(repr(gold), _VALUE_CHARS),
        pred=clipped(repr(pred), _VALUE_CHARS),
    )


def parse_verdict(reply: str) -> bool:
    """Truthiness of ``"pass"`` in the JSON object spanning the first ``{`` to the last ``}``.

    A reply without a JSON object raises ``ValueError`` (the judge then counts an error and does
    not cache), unlike the reference, which caches such a reply as a FAIL.
    """
    start, end = reply.find("{"), reply.rfind("}")
    if start < 0 or end < start:
        raise ValueError(f"judge reply has no JSON object: {reply[:200]!r}")
    payload = json.loads(reply[start : end + 1])
    if not isinstance(payload, dict):
        raise ValueError(f"judge reply JSON is not an object: {payload!r}")
    return bool(payload.get("pass"))
