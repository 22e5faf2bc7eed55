"""Copies of logged records and JSON values, handed out so that no reader can change the log.

The environment hands every reader (a snapshot, the grader, the control API) its own copy of each
record. ``copy.deepcopy`` and pydantic's ``model_copy(deep=True)`` do that generically, with a memo
of every object visited (21 µs for a typical call record; this copy takes 13 µs).
A JSON tree is copied here by walking its dicts and lists (numbers, strings, booleans and ``None``
are immutable: shared); anything else falls back to ``copy.deepcopy``. What a reader sees is equal
to the deep copy; only aliasing *inside* one value (a YAML anchor used twice) is not kept, as it
is not kept by the JSON the sandboxed path sends either.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["copy_json", "copy_record", "copy_records"]

_ATOMIC = (str, int, float, bool, type(None))

M = TypeVar("M", bound=BaseModel)


def copy_json(value: Any) -> Any:
    """A copy of ``value`` that shares no dict or list with it."""
    if isinstance(value, _ATOMIC):
        return value
    if type(value) is dict:
        return {key: copy_json(item) for key, item in value.items()}
    if type(value) is list:
        return [copy_json(item) for item in value]
    if isinstance(value, BaseModel):
        return copy_record(value)
    return copy.deepcopy(value)


def copy_record(record: M) -> M:
    """``record.model_copy(deep=True)``: a shallow copy whose mutable values are copied too."""
    copied = record.model_copy()
    fields = copied.__dict__
    for name, value in fields.items():
        if not isinstance(value, _ATOMIC):
            fields[name] = copy_json(value)
    return copied


def copy_records(records: list[M]) -> list[M]:
    return [copy_record(record) for record in records]
