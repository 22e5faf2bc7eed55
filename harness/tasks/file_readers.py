"""Reading the files of one task package into Python values and validated models.

All parse and validation failures become :class:`TaskLoadError` naming the package-relative file,
the line (syntax errors, JSONL rows) or the field path (``a.b[0].c``) and the offending value.
YAML is read with PyYAML's safe loader on purpose: YAML 1.1 typing (dates, yes/no booleans, floats)
is part of the published format because grading compares Python values. Sizes, nesting, aliases and
duplicate keys are bounded by :mod:`.bounded_parse`; paths may not leave the package
(:mod:`.contained_paths`).
"""

from __future__ import annotations

import os
import stat
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .bounded_parse import ParseRefused, limits_for, parse_json, parse_yaml, read_bounded
from .contained_paths import ContainedRoot, PathEscape
from .errors import NO_VALUE, TaskLoadError
from .package_paths import TASK_FILE

__all__ = ["PackageReader", "format_loc"]

ModelT = TypeVar("ModelT", bound=BaseModel)


@dataclass(frozen=True)
class PackageReader:
    """Reads files of one package; every error it raises names ``task_id`` and the file."""

    task_dir: Path
    task_id: str

    @cached_property
    def root(self) -> ContainedRoot:
        """The package directory, resolved once for every file read from it."""
        return ContainedRoot.of(self.task_dir)

    def path(self, rel: str, *, key: str | None = None) -> Path:
        """The real path of ``rel``; paths that leave the package are refused.

        A path override such as ``knowledge_dir: ../other_task/grading`` would otherwise let a
        public file (shown to the agent) be read from a hidden one. A path written to leave is the
        fault of the field that wrote it (``task.yaml`` when ``key`` names an override); a symlink
        that leads out, or loops, is the fault of the symlink.
        """
        return Path(self._located(rel, key))

    def _located(self, rel: str, key: str | None = None) -> str:
        """:meth:`path` as a string, for the reads below (see :meth:`ContainedRoot.locate`)."""
        try:
            return self.root.locate(rel)
        except PathEscape as exc:
            if exc.culprit is not None:
                raise TaskLoadError(self.task_id, exc.culprit, exc.reason) from None
            raise TaskLoadError(
                self.task_id, TASK_FILE if key else rel, exc.reason, field=key, value=rel
            ) from None

    def exists(self, rel: str, *, key: str | None = None) -> bool:
        path = self._located(rel, key)
        try:
            return stat.S_ISREG(os.stat(path).st_mode)
        except (FileNotFoundError, NotADirectoryError):
            return False
        except OSError as exc:  # e.g. a folder on the way that may not be searched
            raise TaskLoadError(self.task_id, rel, f"cannot read: {exc.strerror}") from None

    def text(self, rel: str) -> str:
        """The file's text, refused above the size limit of its kind (see :mod:`.bounded_parse`)."""
        try:
            data = read_bounded(self._located(rel), limits_for(rel))
        except ParseRefused as exc:
            raise TaskLoadError(self.task_id, rel, exc.reason) from None
        except OSError as exc:
            raise TaskLoadError(self.task_id, rel, f"cannot read: {exc.strerror}") from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TaskLoadError(self.task_id, rel, f"not UTF-8 text ({exc.reason})") from None

    def yaml(self, rel: str) -> Any:
        return self._parsed(rel, parse_yaml, self.text(rel))

    def json(self, rel: str) -> Any:
        return self._parsed(rel, parse_json, self.text(rel))

    def jsonl(self, rel: str) -> list[tuple[int, Any]]:
        """``(line number, value)`` per non-blank line; a bad line names its number."""
        rows: list[tuple[int, Any]] = []
        for number, line in enumerate(self.text(rel).splitlines(), start=1):
            if line.strip():
                rows.append((number, self._parsed(rel, parse_json, line, line=number)))
        return rows

    def _parsed(self, rel: str, parse: Callable[[str], Any], text: str, *, line: int | None = None) -> Any:
        try:
            return parse(text)
        except ParseRefused as exc:
            raise TaskLoadError(self.task_id, rel, exc.reason, line=line or exc.line) from None

    def mapping(self, rel: str, data: Any, *, line: int | None = None) -> dict[str, Any]:
        """``data`` as a mapping; an empty YAML document counts as ``{}``."""
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise TaskLoadError(
                self.task_id, rel, f"must be a mapping at the top level, got {type(data).__name__}",
                line=line,
            )
        return data

    def model(self, model: type[ModelT], rel: str, data: Any, *, line: int | None = None) -> ModelT:
        """Validate ``data`` (a top-level mapping) as ``model``; report the first error only."""
        data = self.mapping(rel, data, line=line)
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise self._validation_error(model, rel, exc.errors()[0], line) from None

    def _validation_error(
        self, model: type[BaseModel], rel: str, error: Any, line: int | None
    ) -> TaskLoadError:
        loc = tuple(error["loc"])
        kind = error["type"]
        value = NO_VALUE if kind == "missing" else error.get("input", NO_VALUE)
        return TaskLoadError(
            self.task_id, rel, _reason(model, loc, error), field=format_loc(loc) or None, value=value, line=line
        )


def format_loc(loc: tuple[Any, ...]) -> str:
    """``('a', 0, 'b')`` → ``a[0].b`` (the notation of every error message and lint issue)."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _reason(model: type[BaseModel], loc: tuple[Any, ...], error: Any) -> str:
    kind = error["type"]
    if kind == "missing":
        return "required key missing"
    if kind == "extra_forbidden":
        parent = _model_at(model, loc[:-1])
        allowed = ", ".join(_keys(parent)) if parent else ""
        return f"unknown key (allowed: {allowed})" if allowed else "unknown key"
    if kind == "enum":
        expected = str(error.get("ctx", {}).get("expected", ""))
        return "not one of " + ", ".join(part.strip("'") for part in _split_choices(expected))
    return str(error["msg"])


def _split_choices(expected: str) -> list[str]:
    head, _, last = expected.rpartition(" or ")
    return [*(p.strip() for p in head.split(",") if p.strip()), last.strip()] if head else [expected]


def _keys(model: type[BaseModel]) -> list[str]:
    return [field.alias or name for name, field in model.model_fields.items()]


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class reached by following ``loc`` through fields, lists and dicts."""
    current: Any = model
    for part in loc:
        current = _unwrap_optional(current)
        if isinstance(current, type) and issubclass(current, BaseModel) and isinstance(part, str):
            field = next(
                (f for n, f in current.model_fields.items() if part in (n, f.alias)), None
            )
            if field is None:
                return None
            current = field.annotation
        elif typing.get_origin(current) in (list, dict):
            current = typing.get_args(current)[-1]
        else:
            return None
    current = _unwrap_optional(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unwrap_optional(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        return options[0] if len(options) == 1 else annotation
    return annotation
