"""The function-tool schemas shown to the model (realtime form of the published format).

Shape follows the reference so prompts stay comparable, including the special ``fields`` parameter
that lists the artifact's exact field keys. Improvements: parameter descriptions and enums are kept
(they help the model) and every array gets ``items: {}`` (some providers reject arrays without it).
The types advertised here are the ones ``argument_validation`` enforces.
"""

from __future__ import annotations

from typing import Any

from .argument_validation import canonical_type
from .public_models import ArtifactSchema, InitialWorkspace, ParamSpec, ToolSet, ToolSpec

__all__ = ["ADVERTISED_EXCLUDED_FIELDS", "realtime_tool_schemas"]

#: Field names never advertised in a ``fields`` parameter (published behaviour).
ADVERTISED_EXCLUDED_FIELDS = frozenset({"status"})


def _typed(declared: str) -> dict[str, Any]:
    json_type = canonical_type(declared)
    return {"type": json_type, "items": {}} if json_type == "array" else {"type": json_type}


def _param_property(param: ParamSpec) -> dict[str, Any]:
    prop = _typed(param.type)
    if param.description:
        prop["description"] = param.description
    if param.enum is not None:
        prop["enum"] = list(param.enum)
    return prop


def _fields_property(schema: ArtifactSchema) -> tuple[dict[str, Any], str]:
    """The ``fields`` parameter for a schema'd artifact and the comma list of its keys."""
    advertised = [spec for spec in schema.fields if spec.name not in ADVERTISED_EXCLUDED_FIELDS]
    keys = ", ".join(spec.name for spec in advertised)
    prop = {
        "type": "object",
        "properties": {spec.name: _typed(spec.type) for spec in advertised},
        "additionalProperties": False,
        "description": f"Record one or more of these fields using these EXACT key names: {keys}",
    }
    return prop, keys


def _artifact_schema(tool: ToolSpec, workspace: InitialWorkspace) -> tuple[str, ArtifactSchema] | None:
    artifact_id = tool.effect.get("artifact_id")
    if not isinstance(artifact_id, str):
        return None
    definition = workspace.artifacts.get(artifact_id)
    if definition is None or definition.schema_ is None or not definition.schema_.fields:
        return None
    return artifact_id, definition.schema_


def _tool_schema(tool: ToolSpec, workspace: InitialWorkspace) -> dict[str, Any]:
    description = tool.description
    properties: dict[str, Any] = {}
    bound = _artifact_schema(tool, workspace)
    for param in tool.params:
        if param.name == "fields" and canonical_type(param.type) == "object" and bound is not None:
            artifact_id, schema = bound
            properties[param.name], keys = _fields_property(schema)
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
    return [_tool_schema(tool, workspace) for tool in tools.tools if not tool.discoverable]
