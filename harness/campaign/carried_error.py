"""Carry a cell's exception from the node that ran it to the campaign, unchanged, so blame is the same.

The campaign decides what a failure means by the exception's class and attributes
(:func:`harness.blame.origin_table.classify`): a ``SessionInfraError``'s ``transient``, a ``ProviderTransient``'s
``retry_after_s``, an ``OSError``'s ``errno``, every member of an exception group. Plain pickling
loses some of them: it re-creates an exception by calling its class with ``exc.args``, which fails
for classes whose constructor takes other arguments than the message it builds (``AgentFailure(kind,
detail)``, ``ControlRequestError(route, status, message)``) — and Ray would then report a
serialization failure instead of the cell's own error. Here every exception is rebuilt without its
constructor: ``cls.__new__(cls, *args)`` (which also restores an ``OSError``'s errno and an exception
group's members), then its attributes. The traceback does not travel; the node's is kept as a note
(PEP 678), which ``traceback.format_exception`` prints, so ``harness_error.txt`` still shows where
on the node the cell failed.
"""

from __future__ import annotations

import io
import pickle
import traceback
from typing import Any

from harness.blame.errors import HarnessBug
from harness.results.result_record import error_text

__all__ = ["pack_exception", "unpack_exception"]


def _rebuild(cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any]) -> BaseException:
    exc = cls.__new__(cls, *args)
    exc.args = args
    exc.__dict__.update(state)
    return exc


class _ExceptionPickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, BaseException):
            return _rebuild, (type(obj), obj.args, dict(obj.__dict__))
        return NotImplemented


def _dumps(exc: BaseException) -> bytes:
    buffer = io.BytesIO()
    _ExceptionPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(exc)
    return buffer.getvalue()


def pack_exception(exc: BaseException, *, where: str) -> bytes:
    """``exc`` as bytes, with its traceback (and ``where`` it was raised) as a note.

    An exception that cannot be rebuilt (a class defined inside a function, an attribute that does
    not pickle) is carried as a :class:`HarnessBug` with its text: what the campaign would call an
    exception of a class it does not know.
    """
    exc.add_note(f"raised {where}:\n{''.join(traceback.format_exception(exc)).rstrip()}")
    try:
        data = _dumps(exc)
        pickle.loads(data)
    except Exception as problem:  # noqa: BLE001  # whatever stops it from crossing, say so
        substitute = HarnessBug(f"{error_text(exc)} (its exception cannot cross from the node: {error_text(problem)})")
        substitute.__dict__["__notes__"] = list(getattr(exc, "__notes__", []))
        data = _dumps(substitute)
    return data


def unpack_exception(data: bytes) -> BaseException:
    exc = pickle.loads(data)
    if not isinstance(exc, BaseException):
        raise HarnessBug(f"a carried cell failure holds a {type(exc).__name__}, not an exception")
    return exc
