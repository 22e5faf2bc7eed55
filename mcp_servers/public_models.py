"""Strict models of the *public* files of a task package.

These are the files the task environment needs (tool spec, initial state, initial workspace,
knowledge base). They live here, in the lowest package, because both the MCP server (which must not
import the harness) and the harness loader use them. Field names, defaults and enum values follow
the published task format exactly; unknown keys are errors (``extra="forbid"``).
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "LIFECYCLE_ORDER",
    "ArtifactDef",
    "ArtifactSchema",
    "FieldSpec",
    "InitialWorkspace",
    "KnowledgeDocument",
    "KnowledgeManifest",
    "LatencySpec",
    "LifecycleState",
    "ParamSpec",
    "ToolClass",
    "ToolSet",
    "ToolSpec",
    "BUILTIN_HANDLERS",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LifecycleState(str, Enum):
    EMPTY = "EMPTY"
    PARTIAL = "PARTIAL"
    DRAFT = "DRAFT"
    READY_FOR_REVIEW = "READY_FOR_REVIEW"
    APPROVED = "APPROVED"
    COMMITTED = "COMMITTED"


#: Ordered lifecycle; the index is what ``artifact_lifecycle_at_least`` compares.
LIFECYCLE_ORDER: list[str] = [s.value for s in LifecycleState]


class ToolClass(str, Enum):
    read_only = "read_only"
    retrieval = "retrieval"
    state_changing = "state_changing"
    reversible_draft = "reversible_draft"
    irreversible_commit = "irreversible_commit"
    user_mediated = "user_mediated"
    discoverable = "discoverable"
    cross_application = "cross_application"


#: Handlers the runtime provides; a tool spec naming any other handler is a load error.
BUILTIN_HANDLERS = (
    "kb_search",
    "get_entity",
    "update_artifact",
    "set_lifecycle",
    "request_approval",
    "commit",
)


class FieldSpec(_Strict):
    name: str
    type: str = "string"
    #: A field grader's name, carried for the harness (which checks it at load); the server never
    #: grades, so adding a grader needs no new server image.
    grader: str = "exact"
    required: bool = False
    enum: list[Any] | None = None
    tolerance: float | None = None
    dependents: list[str] = Field(default_factory=list)


class ArtifactSchema(_Strict):
    artifact_type: str
    fields: list[FieldSpec] = Field(default_factory=list)
    # Declared by the format, not enforced by the reference; we keep it for lint only.
    lifecycle: list[LifecycleState] = Field(
        default_factory=lambda: [LifecycleState.DRAFT, LifecycleState.READY_FOR_REVIEW]
    )

    def field(self, name: str) -> FieldSpec | None:
        for spec in self.fields:
            if spec.name == name:
                return spec
        return None


class ArtifactDef(_Strict):
    artifact_type: str = "GENERIC"
    lifecycle: LifecycleState = LifecycleState.EMPTY
    fields: dict[str, Any] = Field(default_factory=dict)
    schema_: ArtifactSchema | None = Field(default=None, alias="schema")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class InitialWorkspace(_Strict):
    artifacts: dict[str, ArtifactDef] = Field(default_factory=dict)


class ParamSpec(_Strict):
    name: str
    type: str = "string"
    required: bool = True
    description: str = ""
    enum: list[Any] | None = None


class LatencySpec(_Strict):
    base_ms: int = 0
    jitter_ms: int = 0
    stress_multiplier: float = 1.0


class ToolSpec(_Strict):
    name: str
    tool_class: ToolClass = ToolClass.read_only
    description: str = ""
    params: list[ParamSpec] = Field(default_factory=list)
    returns: str = "object"
    permissions: list[Any] = Field(default_factory=list)
    latency: LatencySpec = Field(default_factory=LatencySpec)
    idempotent: bool = True
    reversible: bool = True
    commit_action_type: str | None = None
    commit_target_param: str | None = None
    required_authority: list[Any] = Field(default_factory=list)
    required_evidence: list[Any] = Field(default_factory=list)
    emits_events: list[Any] = Field(default_factory=list)
    discoverable: bool = False
    handler: str | None = None
    effect: dict[str, Any] = Field(default_factory=dict)

    @property
    def is_commit(self) -> bool:
        return self.tool_class == ToolClass.irreversible_commit or self.commit_action_type is not None


class ToolSet(_Strict):
    tools: list[ToolSpec] = Field(default_factory=list)

    def get(self, name: str) -> ToolSpec | None:
        for tool in self.tools:
            if tool.name == name:
                return tool
        return None


class KnowledgeDocument(_Strict):
    doc_id: str
    title: str | None = None
    text: str = ""
    path: str | None = None
    gold: bool = False
    distractor: bool = False


class KnowledgeManifest(_Strict):
    documents: list[KnowledgeDocument] = Field(default_factory=list)
