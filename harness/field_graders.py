"""The field graders: one registry of the fifteen of the published task format (reference §3.5)
and any an installed package adds.

The built-ins reproduce the reference rules exactly, including Python ``str()`` formatting of
values, because published scores and judge-cache keys depend on that formatting.

A grader is a :class:`FieldGraderDef`: its deterministic score, and whether the semantic judge may
decide a field that score fails (``judge``). Installed packages add graders under the
``apex_voice.field_graders`` entry-point group, each entry point naming a :class:`FieldGraderDef` or
a plain ``score(pred, gold, tolerance) -> float`` function (deterministic only); ``docs/plugins.md``.
The task server carries grader names as plain strings and never grades, so a new grader needs no
server image; the task loader checks every name a package uses against :func:`field_graders`, which
is why this module sits at the bottom of the harness, below the task format and grading.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from typing import Any, Literal

__all__ = [
    "BUILTIN_GRADERS",
    "ENTRY_POINT_GROUP",
    "FieldGraderDef",
    "FieldGraderFn",
    "JudgeFallback",
    "canonical_date",
    "field_graders",
    "get_grader",
    "grade_field",
    "grader_name",
]

FieldGraderFn = Callable[[Any, Any, "float | None"], float]
#: How the semantic judge may decide a field the deterministic score fails: never, as text, or as a
#: number (the judge is told the reference value and the tolerance).
JudgeFallback = Literal["never", "text", "number"]

#: Installed packages register graders here: ``name = "package.module:GRADER"``.
ENTRY_POINT_GROUP = "apex_voice.field_graders"


@dataclass(frozen=True)
class FieldGraderDef:
    """One field grader, as the gold's ``artifact_expectations[].fields[].grader`` names it."""

    name: str
    #: The deterministic tier: a score in [0, 1] of ``pred`` against ``gold`` (``tolerance`` as given).
    score: FieldGraderFn
    judge: JudgeFallback = "never"
    #: ``False``: a field of this grader is not scored on its own (``claim_atoms``: its claims are).
    scores_fields: bool = True


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


BUILTIN_GRADERS: dict[str, FieldGraderDef] = {
    grader.name: grader
    for grader in (
        FieldGraderDef("exact", _exact, judge="text"),
        FieldGraderDef("casefold_exact", _casefold_exact, judge="text"),
        FieldGraderDef("normalized_phone", _phone),
        FieldGraderDef("normalized_date", _date),
        FieldGraderDef("normalized_address", _address),
        FieldGraderDef("enum", _exact, judge="text"),
        FieldGraderDef("numeric_tolerance", _numeric, judge="number"),
        FieldGraderDef("set_exact", _set_exact),
        FieldGraderDef("set_f1", _set_f1),
        FieldGraderDef("set_precision", _set_precision),
        FieldGraderDef("set_recall", _set_recall),
        FieldGraderDef("ordered_list", _ordered_list),
        FieldGraderDef("interval_overlap", _interval),
        FieldGraderDef("semantic", _casefold_exact, judge="text"),
        FieldGraderDef("claim_atoms", _claim_atoms, scores_fields=False),
    )
}


@cache
def field_graders() -> dict[str, FieldGraderDef]:
    """Every grader by name: the built-ins in the format's order, then the installed ones.

    Raises:
        ValueError: an installed grader reuses a built-in's name or is neither a
            :class:`FieldGraderDef` nor a function (the message names its entry point).
    """
    graders = dict(BUILTIN_GRADERS)
    for point in entry_points(group=ENTRY_POINT_GROUP):
        origin = f"entry point {point.name!r} ({point.value}) of group {ENTRY_POINT_GROUP}"
        if point.name in BUILTIN_GRADERS:
            raise ValueError(f"{origin}: {point.name!r} is a built-in field grader and cannot be replaced")
        target = point.load()
        if isinstance(target, FieldGraderDef):
            graders[point.name] = FieldGraderDef(point.name, target.score, target.judge, target.scores_fields)
        elif callable(target):
            graders[point.name] = FieldGraderDef(point.name, target)
        else:
            raise ValueError(f"{origin}: {target!r} is neither a FieldGraderDef nor a function")
    return graders


def get_grader(name: str) -> FieldGraderDef:
    """The grader called ``name``; unknown names are errors that list the known ones."""
    graders = field_graders()
    if name not in graders:
        raise ValueError(f"unknown field grader {name!r}; known graders: {', '.join(sorted(graders))}")
    return graders[name]


def grader_name(grader: str) -> str:
    """``grader`` when a grader has that name; unknown names are errors that list the known ones."""
    return get_grader(str(grader)).name


def grade_field(grader: str, pred: Any, gold: Any, tolerance: float | None = None) -> float:
    """Deterministic score in [0, 1] of ``pred`` against ``gold`` under the named grader."""
    return get_grader(str(grader)).score(pred, gold, tolerance)
