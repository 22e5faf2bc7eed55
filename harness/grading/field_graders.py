"""The fifteen deterministic field graders of the published task format (reference §3.5).

They reproduce the reference rules exactly, including Python ``str()`` formatting of values,
because published scores and judge-cache keys depend on that formatting.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import Enum
from typing import Any

from mcp_servers.public_models import FieldGrader

__all__ = ["GRADERS", "FieldGraderFn", "canonical_date", "grade_field", "grader_name"]

FieldGraderFn = Callable[[Any, Any, "float | None"], float]

_MONTHS: dict[str, int] = {}
for _number, _name in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"],
    start=1,
):
    _MONTHS[_name] = _number
    _MONTHS[_name[:3]] = _number

_MONTH_FIRST = re.compile(r"([a-z]{3,9})\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})")
_DAY_FIRST = re.compile(r"(\d{1,2})(?:st|nd|rd|th)?\s+([a-z]{3,9}),?\s+(\d{4})")
_ISO = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_US = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def _s(value: Any) -> str:
    return str(value).strip()


def _ymd(year: str, month: int, day: str) -> str:
    return f"{int(year):04d}-{month:02d}-{int(day):02d}"


def canonical_date(value: Any) -> str:
    """Canonical key of a date-like value; the first of five rules that matches wins."""
    text = _s(value).lower()
    match = _MONTH_FIRST.search(text)
    if match and match.group(1) in _MONTHS:
        return _ymd(match.group(3), _MONTHS[match.group(1)], match.group(2))
    match = _DAY_FIRST.search(text)
    if match and match.group(2) in _MONTHS:
        return _ymd(match.group(3), _MONTHS[match.group(2)], match.group(1))
    match = _ISO.search(text)
    if match:
        return _ymd(match.group(1), int(match.group(2)), match.group(3))
    match = _US.search(text)
    if match:
        return _ymd(match.group(3), int(match.group(1)), match.group(2))
    fallback = re.sub(r"[^0-9:apm ]", "-", text.replace("t", " "))
    return re.sub(r"-+", "-", fallback).strip("- ")


def _first_number(value: Any) -> float | None:
    match = _NUMBER.search(str(value))
    return float(match.group(0).replace(",", "")) if match else None


def _as_set(value: Any) -> set[str]:
    items = value if isinstance(value, list | tuple | set | frozenset) else [value]
    return {_s(item).casefold() for item in items}


def _as_list(value: Any) -> list[str]:
    items = value if isinstance(value, list | tuple) else [value]
    return [_s(item) for item in items]


def _precision_recall(pred: Any, gold: Any) -> tuple[float, float] | None:
    """``None`` when both sides are empty (every set grader then scores 1)."""
    predicted, expected = _as_set(pred), _as_set(gold)
    if not predicted and not expected:
        return None
    hits = len(predicted & expected)
    precision = hits / len(predicted) if predicted else 0.0
    recall = hits / len(expected) if expected else 0.0
    return precision, recall


def _exact(pred: Any, gold: Any, _tol: float | None) -> float:
    return float(_s(pred) == _s(gold))


def _casefold_exact(pred: Any, gold: Any, _tol: float | None) -> float:
    return float(_s(pred).casefold() == _s(gold).casefold())


def _phone(pred: Any, gold: Any, _tol: float | None) -> float:
    return float(re.sub(r"\D", "", str(pred)) == re.sub(r"\D", "", str(gold)))


def _date(pred: Any, gold: Any, _tol: float | None) -> float:
    return float(canonical_date(pred) == canonical_date(gold))


def _address_key(value: Any) -> str:
    return re.sub(r"[^a-z0-9]+", " ", str(value).lower()).strip()


def _address(pred: Any, gold: Any, _tol: float | None) -> float:
    return float(_address_key(pred) == _address_key(gold))


def _numeric(pred: Any, gold: Any, tolerance: float | None) -> float:
    predicted, expected = _first_number(pred), _first_number(gold)
    if predicted is None or expected is None:
        return 0.0
    return float(abs(predicted - expected) <= (tolerance or 0.0))


def _set_exact(pred: Any, gold: Any, _tol: float | None) -> float:
    return float(_as_set(pred) == _as_set(gold))


def _set_precision(pred: Any, gold: Any, _tol: float | None) -> float:
    pr = _precision_recall(pred, gold)
    return 1.0 if pr is None else pr[0]


def _set_recall(pred: Any, gold: Any, _tol: float | None) -> float:
    pr = _precision_recall(pred, gold)
    return 1.0 if pr is None else pr[1]


def _set_f1(pred: Any, gold: Any, _tol: float | None) -> float:
    pr = _precision_recall(pred, gold)
    if pr is None:
        return 1.0
    precision, recall = pr
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def _ordered_list(pred: Any, gold: Any, _tol: float | None) -> float:
    return float(_as_list(pred) == _as_list(gold))


def _interval(pred: Any, gold: Any, _tol: float | None) -> float:
    """Jaccard of two ``[start, end]`` intervals; anything unparsable scores 0."""
    if not isinstance(pred, list | tuple) or not isinstance(gold, list | tuple):
        return 0.0
    try:
        p_start, p_end = (float(x) for x in pred)
        g_start, g_end = (float(x) for x in gold)
    except (TypeError, ValueError):
        return 0.0
    # As published: endpoints taken in the given order, and an empty union (a division by zero
    # there) scores 0 — a reversed or zero-length interval is not a valid answer.
    overlap = max(0.0, min(p_end, g_end) - max(p_start, g_start))
    union = (p_end - p_start) + (g_end - g_start) - overlap
    return overlap / union if union > 0 else 0.0


def _claim_atoms(_pred: Any, _gold: Any, _tol: float | None) -> float:
    return 0.0


GRADERS: dict[str, FieldGraderFn] = {
    FieldGrader.exact.value: _exact,
    FieldGrader.casefold_exact.value: _casefold_exact,
    FieldGrader.enum.value: _exact,
    FieldGrader.normalized_phone.value: _phone,
    FieldGrader.normalized_date.value: _date,
    FieldGrader.normalized_address.value: _address,
    FieldGrader.numeric_tolerance.value: _numeric,
    FieldGrader.set_exact.value: _set_exact,
    FieldGrader.set_f1.value: _set_f1,
    FieldGrader.set_precision.value: _set_precision,
    FieldGrader.set_recall.value: _set_recall,
    FieldGrader.ordered_list.value: _ordered_list,
    FieldGrader.interval_overlap.value: _interval,
    FieldGrader.semantic.value: _casefold_exact,
    FieldGrader.claim_atoms.value: _claim_atoms,
}


def grader_name(grader: str | FieldGrader) -> str:
    """The registry name of a grader given as a string or enum member; unknown names are errors."""
    name = grader.value if isinstance(grader, Enum) else str(grader)
    if name not in GRADERS:
        raise ValueError(f"unknown field grader {name!r}; known graders: {', '.join(sorted(GRADERS))}")
    return name


def grade_field(grader: str | FieldGrader, pred: Any, gold: Any, tolerance: float | None = None) -> float:
    """Deterministic score in [0, 1] of ``pred`` against ``gold`` under the named grader."""
    return GRADERS[grader_name(grader)](pred, gold, tolerance)
