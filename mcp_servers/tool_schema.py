"""The function-tool schemas shown to the model (realtime form of the published format).

Shape follows the reference so prompts stay comparable, including the special ``fields`` parameter
that lists the artifact's exact field keys. Improvements: parameter descriptions and enums are kept
(they help the model) and every array gets ``items: {}`` (some providers reject arrays without it).
``argument_validation`` checks every call against exactly these schemas, so what they advertise is
what is accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .public_models import ArtifactSchema, InitialWorkspace, ParamSpec, ToolSet, ToolSpec

__all__ = [
    "ADVERTISED_EXCLUDED_FIELDS",
    "ArtifactSchemaLookup",
    "AdvertisedFields",
    "advertised_fields",
    "bound_artifact",
    "canonical_type",
    "fields_schema",
    "realtime_tool_schemas",
    "tool_schema",
]

#: Field names never advertised in a ``fields`` parameter (published behaviour).
ADVERTISED_EXCLUDED_FIELDS = frozenset({"status"})

#: An artifact's schema by artifact id (``None``: no such artifact, or one without a schema).
ArtifactSchemaLookup = Callable[[str], ArtifactSchema | None]

#: ``(field name, JSON-schema type)`` of each advertised field, in schema order (hashable, so a
#: validator can be cached per shape).
AdvertisedFields = tuple[tuple[str, str], ...]

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


def _typed(json_type: str) -> dict[str, Any]:
    return {"type": json_type, "items": {}} if json_type == "array" else {"type": json_type}


def _param_property(param: ParamSpec) -> dict[str, Any]:
    prop = _typed(canonical_type(param.type))
    if param.description:
        prop["description"] = param.description
    if param.enum is not None:
        prop["enum"] = list(param.enum)
    return prop


def advertised_fields(schema: ArtifactSchema) -> AdvertisedFields:
    """The fields a ``fields`` parameter lists for ``schema``: all but ``ADVERTISED_EXCLUDED_FIELDS``."""
    return tuple(
        (spec.name, canonical_type(spec.type))
        for spec in schema.fields
        if spec.name not in ADVERTISED_EXCLUDED_FIELDS
    )


def fields_schema(fields: AdvertisedFields) -> dict[str, Any]:
    """The ``fields`` parameter for an artifact with these advertised fields."""
    keys = ", ".join(name for name, _ in fields)
    return {
        "type": "object",
        "properties": {name: _typed(json_type) for name, json_type in fields},
        "additionalProperties": False,
        "description": f"Record one or more of these fields using these EXACT key names: {keys}",
    }


def _is_fields_param(param: ParamSpec) -> bool:
    return param.name == "fields" and canonical_type(param.type) == "object"


def bound_artifact(tool: ToolSpec, schema_of: ArtifactSchemaLookup) -> tuple[str, ArtifactSchema] | None:
    """The artifact whose field keys the tool's ``fields`` parameter lists, with its schema: the
    tool's ``effect.artifact_id``, when that artifact has schema fields and the tool an object ``fields``."""
    artifact_id = tool.effect.get("artifact_id")
    if not isinstance(artifact_id, str):
        return None
    schema = schema_of(artifact_id)
    if schema is None or not schema.fields:
        return None
    return (artifact_id, schema) if any(_is_fields_param(param) for param in tool.params) else None


def tool_schema(tool: ToolSpec, schema_of: ArtifactSchemaLookup) -> dict[str, Any]:
    """The schema the model is shown for ``tool``; its ``parameters`` are what calls are checked against."""
    description = tool.description
    properties: dict[str, Any] = {}
    bound = bound_artifact(tool, schema_of)
    for param in tool.params:
        if _is_fields_param(param) and bound is not None:
            artifact_id, schema = bound
            fields = advertised_fields(schema)
            properties[param.name] = fields_schema(fields)
            keys = ", ".join(name for name, _ in fields)
            description = f"{description} Valid field keys for {artifact_id}: {keys}."
        else:
            properties[param.name] = _param_property(param)
    return {
        "name": tool.name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": [param.name for param in tool.params if param.required],
        },
    }


def realtime_tool_schemas(tools: ToolSet, workspace: InitialWorkspace) -> list[dict[str, Any]]:
    """One schema per non-discoverable tool, in spec order."""

    def schema_of(artifact_id: str) -> ArtifactSchema | None:
        definition = workspace.artifacts.get(artifact_id)
        return None if definition is None else definition.schema_

    return [tool_schema(tool, schema_of) for tool in tools.tools if not tool.discoverable]
