"""Errors raised while finding and loading task packages.

Every message is one line a task author can act on: which task, which file, which field, which
value, and why it is wrong. The CLI prints ``str(error)``; a traceback is never the user's problem.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DataNotFoundError", "NO_VALUE", "TaskLoadError", "UnknownTaskError"]


class _NoValue:
    """Marks "no offending value" (``None`` is a legitimate offending value)."""

    def __repr__(self) -> str:
        return "NO_VALUE"


NO_VALUE: Any = _NoValue()


class TaskLoadError(Exception):
    """A task package cannot be loaded: names the task, the file, the field and the value.

    ``str(e)`` looks like
    ``task 'toy_form_001': grading/gold.yaml: artifact_expectations[0].fields[1].grader = 'exactt':
    not one of exact, casefold_exact, ...``.
    """

    def __init__(
        self,
        task_id: str,
        file: str,
        reason: str,
        *,
        field: str | None = None,
        value: Any = NO_VALUE,
        line: int | None = None,
    ) -> None:
        self.task_id = task_id
        self.file = file
        self.field = field
        self.value = value
        self.line = line
        self.reason = reason
        super().__init__(self._message())

    def _message(self) -> str:
        location = self.file if self.line is None else f"{self.file} line {self.line}"
        parts = [f"task '{self.task_id}'", location]
        if self.field is not None:
            parts.append(self.field if self.value is NO_VALUE else f"{self.field} = {_short(self.value)}")
        parts.append(self.reason)
        return _printable_line(": ".join(parts))


class DataNotFoundError(Exception):
    """No task data where we looked; the message says how to point the harness at some."""


class UnknownTaskError(LookupError):
    """A requested task id is not in the data source; the message lists the known ids."""


def _printable_line(text: str) -> str:
    """One line that any terminal can print: parsers' multi-line messages joined, lone surrogates
    (from a package's JSON ``\\ud800``) escaped."""
    return " ".join(text.splitlines()).encode("utf-8", "backslashreplace").decode("utf-8")


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
