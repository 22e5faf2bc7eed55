"""Reading an event's payload as its type's model, so consumers use fields, not ``payload.get`` keys.

Writing is strict (the bus validates each payload against its model on emit); reading is lenient
where it must be, because consumers also read logs the bus did not write: a published run's, an
older or newer harness's. Keys the model does not know are left out; a key of the wrong type, or a
required key missing, raises :class:`PayloadMismatch` naming the event. Fields that published runs
do not carry have defaults in the models (``payloads.py``).

Nothing is cached: every consumer reads each event once, and one payload validates in a few
microseconds (measured on the demo sessions' events).
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import ValidationError

from .payloads import PAYLOADS, EventPayload
from .types import RunEvent

__all__ = ["PayloadMismatch", "payload_as"]

P = TypeVar("P", bound=EventPayload)


class PayloadMismatch(ValueError):
    """An event's payload does not fit its type's model: the log line cannot be read as that type."""

    def __init__(self, seq: int, type: str, problem: str) -> None:
        super().__init__(f"event {seq} ({type}): payload does not fit: {problem}")
        self.seq = seq
        self.type = type
        self.problem = problem


def _type_name(event: RunEvent) -> str:
    """The type's name, also for an event built leniently from a line of an unknown type."""
    return getattr(event.type, "value", None) or str(event.type)


def payload_as(event: RunEvent, model: type[P]) -> P:
    """The payload of ``event`` as ``model``, which must be the model of the event's type.

    Asking for another type's model is a bug of the caller (``TypeError``); a payload that does not
    fit its own model is a property of the log (:class:`PayloadMismatch`).
    """
    expected = PAYLOADS.get(event.type)
    if expected is not model:
        have = expected.__name__ if expected else "no model"
        raise TypeError(f"event {event.seq} is {_type_name(event)} ({have}), not read as {model.__name__}")
    payload = event.payload if isinstance(event.payload, dict) else {}
    known = {key: value for key, value in payload.items() if key in model.model_fields}
    try:
        return model.model_validate(known)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "payload"
        raise PayloadMismatch(event.seq, _type_name(event), f"{where}: {error['msg']}") from None
