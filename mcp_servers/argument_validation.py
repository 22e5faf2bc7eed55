"""Checking untrusted JSON from the agent against declared types before any handler runs.

Tool arguments are checked against ``ToolSpec.params`` and artifact field values against the
artifact schema, with one type vocabulary (the one the model is shown, see ``tool_schema``), so what
the schema advertises is exactly what is accepted. Messages name the tool, the parameter or field,
and the offending value, because the agent reads them and must be able to correct itself.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .public_models import ArtifactSchema, ToolSpec

__all__ = [
    "MAX_ARGS_BYTES",
    "MAX_ARGS_DEPTH",
    "MAX_FIELD_VALUE_BYTES",
    "ArgumentsProblem",
    "arguments_problem",
    "loggable_name",
    "safe_text",
    "canonical_type",
    "json_size",
    "json_type_name",
    "preview",
    "type_problem",
    "validate_field_values",
    "undeclared_args",
    "validate_tool_args",
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

_TYPE_ALIASES: dict[str, str] = {
    "string": "string",
    "str": "string",
    "text": "string",
    "number": "number",
    "float": "number",
    "int": "integer",
    "integer": "integer",
    "bool": "boolean",
    "boolean": "boolean",
    "object": "object",
    "dict": "object",
    "array": "array",
}


def canonical_type(declared: str) -> str:
    """The JSON-schema type for a declared type name (case-insensitive; unknown names are strings)."""
    return _TYPE_ALIASES.get(declared.strip().lower(), "string")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_integer(value: Any) -> bool:
    return _is_number(value) and float(value).is_integer()


_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": _is_number,
    "integer": _is_integer,
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}

_ARTICLES = {"integer": "an integer", "array": "an array", "object": "an object"}


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


def type_problem(value: Any, declared: str) -> str | None:
    """``None`` when ``value`` fits the declared type, else "must be …, got …"."""
    expected = canonical_type(declared)
    if _TYPE_CHECKS[expected](value):
        return None
    article = _ARTICLES.get(expected, f"a {expected}")
    return f"must be {article}, got {json_type_name(value)} ({preview(value)})"


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


def validate_tool_args(spec: ToolSpec, args: Any) -> list[str]:
    """Problems that make ``args`` unusable for ``spec``: not an object, or a declared parameter of
    the wrong JSON type or outside its enum. Missing and undeclared parameters are not problems here:
    as published, handlers fall back to the tool's ``effect`` for what is missing, and undeclared
    arguments are ignored (see :func:`undeclared_args`)."""
    if not isinstance(args, dict):
        return [f"arguments must be a JSON object, got {json_type_name(args)} ({preview(args)})"]
    problems: list[str] = []
    for param in spec.params:
        if param.name not in args:
            continue
        value = args[param.name]
        problem = type_problem(value, param.type)
        if problem is not None:
            problems.append(f"parameter '{param.name}' {problem}")
        elif param.enum is not None and value not in param.enum:
            problems.append(
                f"parameter '{param.name}' must be one of {preview(param.enum, 200)}, got {preview(value)}"
            )
    return problems


def undeclared_args(spec: ToolSpec, args: dict[str, Any]) -> list[str]:
    """Argument names the tool does not declare (ignored, and reported back to the agent)."""
    declared = {param.name for param in spec.params}
    return [name for name in args if name not in declared]


def validate_field_values(
    artifact_id: str, schema: ArtifactSchema | None, fields: dict[str, Any]
) -> list[str]:
    """Values larger than ``MAX_FIELD_VALUE_BYTES`` (any artifact), and for a schema'd artifact unknown
    field keys and ill-typed values."""
    problems = [
        f"field '{name}' of {artifact_id} is {size} bytes of JSON; the limit is {MAX_FIELD_VALUE_BYTES}: "
        "write the value itself, not a transcript or a document"
        for name, size in ((name, json_size(value)) for name, value in fields.items())
        if size > MAX_FIELD_VALUE_BYTES
    ]
    if schema is None:
        return problems
    valid_keys = ", ".join(spec.name for spec in schema.fields)
    for name, value in fields.items():
        spec = schema.field(name)
        if spec is None:
            problems.append(f"unknown field '{name}' for {artifact_id}; valid field keys: {valid_keys}")
            continue
        problem = type_problem(value, spec.type)
        if problem is not None:
            problems.append(f"field '{name}' of {artifact_id} {problem}")
    return problems
