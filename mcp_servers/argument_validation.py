"""Checking untrusted JSON from the agent against declared types before any handler runs.

Tool arguments are checked by ``jsonschema`` (Draft 2020-12) against exactly the parameters schema
the model is shown (``tool_schema``), and artifact field values against the same ``fields`` schema,
so what the schema advertises is exactly what is accepted. Size and depth are checked first and
apart (:func:`arguments_problem`): the input is untrusted and a validator recurses. Messages name
the tool, the parameter or field, and the offending value, because the agent reads them and must be
able to correct itself: each ``ValidationError`` is translated into one such sentence.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator, ValidationError

from .public_models import ArtifactSchema, ToolSpec
from .tool_schema import (
    AdvertisedFields,
    ArtifactSchemaLookup,
    advertised_fields,
    bound_artifact,
    canonical_type,
    fields_schema,
    tool_schema,
)

__all__ = [
    "MAX_ARGS_BYTES",
    "MAX_ARGS_DEPTH",
    "MAX_FIELD_VALUE_BYTES",
    "ArgumentsProblem",
    "ToolArgumentsValidator",
    "arguments_problem",
    "loggable_name",
    "safe_text",
    "json_size",
    "json_type_name",
    "preview",
    "type_problem",
    "validate_field_values",
    "undeclared_args",
    "without_null_optionals",
]

#: Arguments whose JSON encoding is larger than this are refused unread.
MAX_ARGS_BYTES = 64 * 1024

#: Arguments nested deeper than this are refused unread (JSON encoders and parsers recurse).
MAX_ARGS_DEPTH = 32

#: One artifact field value, as JSON, is at most this long. Field values are what the grader and the
#: semantic judge read: an unbounded one could crowd the judge's prompt until it gives no verdict.
#: The longest gold value of the published fixtures and the demo suite is well under 1 KiB.
MAX_FIELD_VALUE_BYTES = 4 * 1024

#: Tool names are logged and echoed at most this long.
MAX_NAME_CHARS = 200


def json_type_name(value: Any) -> str:
    """What the agent sent, in JSON vocabulary."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def preview(value: Any, limit: int = 60) -> str:
    """A short rendering of a value for an error message."""
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_ARTICLES = {"integer": "an integer", "array": "an array", "object": "an object"}


def _type_mismatch(value: Any, json_type: str) -> str:
    article = _ARTICLES.get(json_type, f"a {json_type}")
    return f"must be {article}, got {json_type_name(value)} ({preview(value)})"


def type_problem(value: Any, declared: str) -> str | None:
    """``None`` when ``value`` fits the declared type, else "must be …, got …" (the validator's types)."""
    expected = canonical_type(declared)
    fits = Draft202012Validator.TYPE_CHECKER.is_type(value, expected)
    return None if fits else _type_mismatch(value, expected)


def json_size(value: Any) -> int:
    """Bytes of the UTF-8 JSON encoding (non-JSON values are rendered with ``str``; NaN is refused)."""
    return len(json.dumps(value, default=str, ensure_ascii=False, allow_nan=False).encode("utf-8"))


def safe_text(text: str) -> str:
    """``text`` with anything that is not encodable UTF-8 (lone surrogates) written as an escape."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def loggable_name(name: Any) -> str:
    """A tool name as it is logged and echoed: valid UTF-8, at most ``MAX_NAME_CHARS`` characters."""
    text = safe_text(name if isinstance(name, str) else repr(name))
    return text if len(text) <= MAX_NAME_CHARS else text[: MAX_NAME_CHARS - 3] + "..."


@dataclass(frozen=True)
class ArgumentsProblem:
    """Why a call's arguments are refused unread, and what the call log keeps in their place.

    A bridging harness that finds a problem before sending forwards this instead of the arguments
    (they may not even be encodable), so the server logs exactly the refusal the in-process
    environment would.
    """

    message: str
    logged: str | None = None


def _too_deep(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list | tuple) else ()
        for child in children:
            if isinstance(child, dict | list | tuple):
                if depth + 1 > limit:
                    return True
                stack.append((child, depth + 1))
    return False


def arguments_problem(args: Any) -> ArgumentsProblem | None:
    """``None`` when ``args`` can be used as JSON, else why not: too deep, not JSON text, too large."""
    if isinstance(args, ArgumentsProblem):
        return args
    if _too_deep(args, MAX_ARGS_DEPTH):
        return ArgumentsProblem(
            f"arguments are nested deeper than {MAX_ARGS_DEPTH} levels", "<deeply nested arguments, not kept>"
        )
    try:
        size = json_size(args)
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError (a lone surrogate) is a ValueError
        return ArgumentsProblem(f"arguments are not JSON: {safe_text(str(exc))}")
    if size > MAX_ARGS_BYTES:
        return ArgumentsProblem(
            f"arguments are {size} bytes of JSON; the limit is {MAX_ARGS_BYTES}", f"<{size} bytes of arguments, not kept>"
        )
    return None


def without_null_optionals(spec: ToolSpec, args: Any) -> Any:
    """``args`` minus optional parameters sent as ``null``, which means "not given".

    Providers' strict function-calling modes send ``null`` for every optional parameter the model
    leaves out; refusing those calls would punish the provider, not the model.
    """
    if not isinstance(args, dict):
        return args
    optional = {param.name for param in spec.params if not param.required}
    return {name: value for name, value in args.items() if not (value is None and name in optional)}


def _first_per_path(errors: Iterable[ValidationError]) -> list[ValidationError]:
    """One error per offending value, the first in schema order (a wrong type hides its enum);
    none for a missing parameter (see :class:`ToolArgumentsValidator`)."""
    seen: set[tuple[str | int, ...]] = set()
    kept = []
    for error in errors:
        path = tuple(error.absolute_path)
        if error.validator != "required" and path not in seen:
            seen.add(path)
            kept.append(error)
    return kept


def _value_problem(error: ValidationError) -> str:
    """What is wrong with the value an error is about: "must be …, got …"."""
    if error.validator == "type":
        return _type_mismatch(error.instance, str(error.validator_value))
    if error.validator == "enum":
        return f"must be one of {preview(error.validator_value, 200)}, got {preview(error.instance)}"
    return f"is not valid ({error.validator}), got {preview(error.instance)}"


@dataclass(frozen=True)
class _FieldsOf:
    """The artifact a ``fields`` object is checked for, and the messages of its errors."""

    artifact_id: str
    fields: AdvertisedFields

    def messages(self, errors: list[ValidationError], values: dict[str, Any]) -> list[str]:
        """One message per unknown key or ill-typed value in ``values``, in the agent's key order."""
        found = [problem for error in errors for problem in self._problems(error)]
        order = {key: index for index, key in enumerate(values)}
        return [message for _, message in sorted(found, key=lambda problem: order[problem[0]])]

    def _problems(self, error: ValidationError) -> list[tuple[str, str]]:
        if error.validator == "additionalProperties":
            valid = "valid field keys: " + ", ".join(name for name, _ in self.fields)
            unknown = [key for key in error.instance if key not in error.schema["properties"]]
            return [(key, f"unknown field '{key}' for {self.artifact_id}; {valid}") for key in unknown]
        key = str(error.absolute_path[-1])
        return [(key, f"field '{key}' of {self.artifact_id} {_value_problem(error)}")]


class ToolArgumentsValidator:
    """One tool's arguments against the parameters schema its model is shown (built once per tool).

    Missing parameters are not problems here although the schema lists them as required: as
    published, handlers fall back to the tool's ``effect`` for what is missing, and say what they
    need. Undeclared arguments are not problems either (the schema allows them; see
    :func:`undeclared_args`).
    """

    def __init__(self, tool: ToolSpec, schema_of: ArtifactSchemaLookup) -> None:
        self._validator = Draft202012Validator(tool_schema(tool, schema_of)["parameters"])
        bound = bound_artifact(tool, schema_of)
        self._fields_of = None if bound is None else _FieldsOf(bound[0], advertised_fields(bound[1]))

    @property
    def fields_artifact(self) -> str | None:
        """The artifact whose field keys and value types this checks in a ``fields`` argument."""
        return None if self._fields_of is None else self._fields_of.artifact_id

    def problems(self, args: Any) -> list[str]:
        """Why ``args`` (already through :func:`arguments_problem`) are unusable, one sentence each."""
        errors = _first_per_path(self._validator.iter_errors(args))
        field_errors = [error for error in errors if self._is_about_a_field(error)]
        problems: list[str] = []
        for error in errors:
            if field_errors and error is field_errors[0]:  # all of them here, in the agent's key order
                assert self._fields_of is not None
                problems.extend(self._fields_of.messages(field_errors, args["fields"]))
            elif error in field_errors:
                continue
            elif not error.absolute_path:
                got = f"{json_type_name(args)} ({preview(args)})"
                problems.append(f"arguments must be a JSON object, got {got}")
            else:
                problems.append(f"parameter '{error.absolute_path[0]}' {_value_problem(error)}")
        return problems

    def _is_about_a_field(self, error: ValidationError) -> bool:
        """An unknown key in, or an ill-typed value of, the bound artifact's ``fields`` parameter."""
        path = error.absolute_path
        if self._fields_of is None or not path or path[0] != "fields":
            return False
        return len(path) > 1 or error.validator == "additionalProperties"


def undeclared_args(spec: ToolSpec, args: dict[str, Any]) -> list[str]:
    """Argument names the tool does not declare (ignored, and reported back to the agent)."""
    declared = {param.name for param in spec.params}
    return [name for name in args if name not in declared]


@lru_cache(maxsize=256)
def _fields_validator(fields: AdvertisedFields) -> Draft202012Validator:
    return Draft202012Validator(fields_schema(fields))


def validate_field_values(
    artifact_id: str, schema: ArtifactSchema | None, fields: dict[str, Any]
) -> list[str]:
    """Values larger than ``MAX_FIELD_VALUE_BYTES`` (any artifact), and for a schema'd artifact unknown
    field keys and ill-typed values: the artifact's ``fields`` schema as a tool shows it, in the
    agent's key order."""
    problems = [
        f"field '{name}' of {artifact_id} is {size} bytes of JSON; the limit is {MAX_FIELD_VALUE_BYTES}: "
        "write the value itself, not a transcript or a document"
        for name, size in ((name, json_size(value)) for name, value in fields.items())
        if size > MAX_FIELD_VALUE_BYTES
    ]
    if schema is None:
        return problems
    advertised = advertised_fields(schema)
    errors = _first_per_path(_fields_validator(advertised).iter_errors(fields))
    return problems + _FieldsOf(artifact_id, advertised).messages(errors, fields)
