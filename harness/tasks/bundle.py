"""The in-memory form of one loaded task package."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_servers.public_bundle import PublicBundle
from mcp_servers.public_models import InitialWorkspace, KnowledgeDocument, ToolSet

from .models import (
    ArtifactSourceManifests,
    AudioIndexRow,
    EventProgram,
    FlowSpec,
    GoldSpec,
    LatentWorld,
    ObserverSpec,
    RealizationEntry,
    ReferencePolicy,
    TaskSpec,
    TaxonomySpec,
    UserState,
)

__all__ = ["TaskBundle"]


@dataclass
class TaskBundle:
    """Every file of a task package, validated.

    ``knowledge`` holds documents with ``text`` already resolved from ``path`` where the file
    exists. ``realization_bank`` is keyed by ``user_plan_id`` (last line wins, as published).
    ``audio_index`` is ``None`` when the package has no pre-rendered speech.
    """

    task_dir: Path
    task: TaskSpec
    taxonomy: TaxonomySpec
    initial_state: dict[str, Any]
    workspace: InitialWorkspace
    tools: ToolSet
    knowledge: list[KnowledgeDocument]
    gold: GoldSpec
    user_state: UserState
    flow: FlowSpec
    observer: ObserverSpec
    events: EventProgram
    persona: dict[str, Any]
    realization_bank: dict[str, RealizationEntry]
    policy: ReferencePolicy | None = None
    latent_world: LatentWorld | None = None
    source_manifest: ArtifactSourceManifests | None = None
    audio_index: list[AudioIndexRow] | None = None
    audio_meta: dict[str, Any] | None = None
    #: Raw taxonomy YAML mapping (the analysis slices read raw keys).
    taxonomy_raw: dict[str, Any] = field(default_factory=dict)

    @property
    def task_id(self) -> str:
        return self.task.id

    @property
    def gold_doc_ids(self) -> list[str]:
        return [d.doc_id for d in self.knowledge if d.gold]

    def public_bundle(self, seed: int = 1) -> PublicBundle:
        """The part of the task the environment may see: never gold, reference or user files."""
        return PublicBundle.from_parts(
            task_id=self.task.id,
            tools=self.tools,
            initial_state=self.initial_state,
            workspace=self.workspace,
            documents=self.knowledge,
            approval_required_for=list(self.task.autonomy.approval_required_for),
            seed=seed,
        )
