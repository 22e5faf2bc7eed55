"""Strict models of the hidden and descriptive files of a task package.

The public files (tool spec, workspace, knowledge) are modelled in :mod:`mcp_servers.public_models`
because the environment needs them without importing the harness. Values keep the Python types
PyYAML ``safe_load`` produces (YAML 1.1: dates, booleans, floats), because grading and the judge
cache key use ``str()`` of the loaded values.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mcp_servers.public_models import LifecycleState

__all__ = [
    "Action",
    "ArtifactExpectation",
    "ArtifactFieldExpectation",
    "ArtifactOrigin",
    "ArtifactSourceManifest",
    "ArtifactSourceManifests",
    "AudioIndexRow",
    "Autonomy",
    "AutonomyLevel",
    "ClaimAtom",
    "Condition",
    "CriticalGate",
    "DelegationPattern",
    "DuplexPhenomenon",
    "EventProgram",
    "EventSpec",
    "FlowSpec",
    "FlowState",
    "FloorAction",
    "GoldSpec",
    "GradingMode",
    "KnowledgeBurden",
    "LatentWorld",
    "ObserverPattern",
    "ObserverSpec",
    "PolicyToolCall",
    "PolicyTurn",
    "PredicateSpec",
    "Precedence",
    "RealizationEntry",
    "RealizationTrack",
    "RealizationVariant",
    "ReferencePolicy",
    "RevealRule",
    "RiskTier",
    "Scoring",
    "SpeechAct",
    "TaskSpec",
    "TaxonomySpec",
    "TemporalDynamics",
    "ToolBurden",
    "Transition",
    "Trigger",
    "UserFact",
    "UserProfile",
    "UserState",
    "WorkArchetype",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------------------------------------
# Enumerations (exact published values)


class WorkArchetype(str, Enum):
    FORM_FILL = "FORM_FILL"
    INTAKE = "INTAKE"
    INTERVIEW = "INTERVIEW"
    DISCOVERY = "DISCOVERY"
    TROUBLESHOOT = "TROUBLESHOOT"
    NEGOTIATE = "NEGOTIATE"
    COORDINATE = "COORDINATE"
    FACILITATE = "FACILITATE"
    ADVISE = "ADVISE"
    INSPECT = "INSPECT"
    DOCUMENT = "DOCUMENT"
    PLAN = "PLAN"
    AUDIT = "AUDIT"
    COACH = "COACH"
    OPERATE = "OPERATE"
    HANDOFF = "HANDOFF"


class DelegationPattern(str, Enum):
    DELEGATE = "DELEGATE"
    COMPLETE = "COMPLETE"
    REVISE = "REVISE"
    FOLLOW_THROUGH = "FOLLOW_THROUGH"
    APPROVE = "APPROVE"


class ArtifactClass(str, Enum):
    STRUCTURED_FORM = "STRUCTURED_FORM"
    CASE_RECORD = "CASE_RECORD"
    EVIDENCE_MATRIX = "EVIDENCE_MATRIX"
    CRM_RECORD = "CRM_RECORD"
    TICKET = "TICKET"
    WORK_ORDER = "WORK_ORDER"
    PLAN_CHECKLIST = "PLAN_CHECKLIST"
    SCHEDULE = "SCHEDULE"
    NEGOTIATION_RECORD = "NEGOTIATION_RECORD"
    TIMELINE = "TIMELINE"
    MEMO_REPORT = "MEMO_REPORT"
    MESSAGE_EMAIL = "MESSAGE_EMAIL"
    MULTI_ARTIFACT_BUNDLE = "MULTI_ARTIFACT_BUNDLE"


class AutonomyLevel(str, Enum):
    A0_PREPARE_ONLY = "A0_PREPARE_ONLY"
    A1_DRAFT_CONFIRM = "A1_DRAFT_CONFIRM"
    A2_LOW_RISK_EXECUTE = "A2_LOW_RISK_EXECUTE"
    A3_APPROVAL_GATED_COMMIT = "A3_APPROVAL_GATED_COMMIT"
    A4_SPECIAL_REVIEW = "A4_SPECIAL_REVIEW"


class KnowledgeBurden(str, Enum):
    K0_NONE = "K0_NONE"
    K1_SUPPLIED = "K1_SUPPLIED"
    K2_SEARCH_SMALL = "K2_SEARCH_SMALL"
    K3_MULTI_DOC_POLICY = "K3_MULTI_DOC_POLICY"
    K4_DISCOVER_CAPABILITY = "K4_DISCOVER_CAPABILITY"


class ToolBurden(str, Enum):
    T0_NONE = "T0_NONE"
    T1_LIGHT = "T1_LIGHT"
    T2_MODERATE = "T2_MODERATE"
    T3_DISCOVERABLE = "T3_DISCOVERABLE"
    T4_MULTI_APP = "T4_MULTI_APP"


class DuplexPhenomenon(str, Enum):
    CLEAN_HANDOFF = "CLEAN_HANDOFF"
    BACKCHANNEL = "BACKCHANNEL"
    USER_BARGE_IN = "USER_BARGE_IN"
    AGENT_BARGE_IN = "AGENT_BARGE_IN"
    MID_SPEECH_CORRECTION = "MID_SPEECH_CORRECTION"
    CANCELLATION_REVOCATION = "CANCELLATION_REVOCATION"
    INTENT_SWITCH = "INTENT_SWITCH"
    CLARIFICATION = "CLARIFICATION"
    CONCURRENT_CRITICAL_INFO = "CONCURRENT_CRITICAL_INFO"
    DISTRACTOR_SPEECH = "DISTRACTOR_SPEECH"
    FALSE_YIELD_TRAP = "FALSE_YIELD_TRAP"
    URGENT_INTERRUPTION = "URGENT_INTERRUPTION"
    LONG_NARRATIVE = "LONG_NARRATIVE"
    DELAYED_CORRECTION = "DELAYED_CORRECTION"
    SUSPEND_RESUME = "SUSPEND_RESUME"
    MULTI_PARTY_OVERLAP = "MULTI_PARTY_OVERLAP"


class TemporalDynamics(str, Enum):
    D0_STATIC = "D0_STATIC"
    D1_MIDCALL_CHANGE = "D1_MIDCALL_CHANGE"
    D2_DELAYED_EVENT = "D2_DELAYED_EVENT"
    D3_SUSPEND_RESUME = "D3_SUSPEND_RESUME"
    D4_LONG_HORIZON = "D4_LONG_HORIZON"


class UserProfile(str, Enum):
    COOPERATIVE_STANDARD = "COOPERATIVE_STANDARD"
    NOVICE_UNCERTAIN = "NOVICE_UNCERTAIN"
    VERBOSE_NARRATIVE = "VERBOSE_NARRATIVE"
    AMBIGUOUS_UNDERSPECIFIED = "AMBIGUOUS_UNDERSPECIFIED"
    CORRECTION_PRONE = "CORRECTION_PRONE"
    DISTRACTED_TIME_PRESSURED = "DISTRACTED_TIME_PRESSURED"
    LOW_TECH_EXPERTISE = "LOW_TECH_EXPERTISE"
    DOMAIN_EXPERT = "DOMAIN_EXPERT"
    EMOTIONALLY_FRUSTRATED = "EMOTIONALLY_FRUSTRATED"
    MULTI_PARTY = "MULTI_PARTY"


class GradingMode(str, Enum):
    G_STATE = "G_STATE"
    G_SCHEMA = "G_SCHEMA"
    G_EVIDENCE = "G_EVIDENCE"
    G_SEQUENCE = "G_SEQUENCE"
    G_POLICY = "G_POLICY"
    G_JUDGE = "G_JUDGE"
    G_HYBRID = "G_HYBRID"


class RiskTier(str, Enum):
    R0_ROUTINE = "R0_ROUTINE"
    R1_SENSITIVE_DATA_SIM = "R1_SENSITIVE_DATA_SIM"
    R2_CONSEQUENTIAL_ACTION = "R2_CONSEQUENTIAL_ACTION"
    R3_SPECIAL_REVIEW = "R3_SPECIAL_REVIEW"


class ArtifactOrigin(str, Enum):
    APEX_NATIVE = "APEX_NATIVE"
    ADAPTED_OPEN_ASSET = "ADAPTED_OPEN_ASSET"
    PUBLIC_TEMPLATE_SYNTHETIC_CONTENT = "PUBLIC_TEMPLATE_SYNTHETIC_CONTENT"


class Condition(str, Enum):
    C0 = "C0"
    C1 = "C1"
    C2 = "C2"
    C3 = "C3"


class RealizationTrack(str, Enum):
    FROZEN_SYNTHETIC = "FROZEN_SYNTHETIC"
    LIVE_GENERATIVE = "LIVE_GENERATIVE"
    HUMAN_AUDIT = "HUMAN_AUDIT"


class SpeechAct(str, Enum):
    OPENING_REQUEST = "OPENING_REQUEST"
    ANSWER = "ANSWER"
    ASK = "ASK"
    CONFIRM = "CONFIRM"
    CORRECT = "CORRECT"
    APPROVE = "APPROVE"
    REVOKE = "REVOKE"
    DENY = "DENY"
    CLARIFY = "CLARIFY"
    ACKNOWLEDGE = "ACKNOWLEDGE"
    BACKCHANNEL = "BACKCHANNEL"
    INTENT_SWITCH = "INTENT_SWITCH"
    END = "END"


class FloorAction(str, Enum):
    AFTER_FLOOR_RELEASE = "AFTER_FLOOR_RELEASE"
    BARGE_IN = "BARGE_IN"
    BACKCHANNEL = "BACKCHANNEL"
    OVERLAP_WITHOUT_FLOOR_CLAIM = "OVERLAP_WITHOUT_FLOOR_CLAIM"
    URGENT_OVERRIDE = "URGENT_OVERRIDE"
    RESUME = "RESUME"


# ---------------------------------------------------------------------------------------------
# task.yaml


class Autonomy(_Strict):
    level: AutonomyLevel = AutonomyLevel.A0_PREPARE_ONLY
    approval_required_for: list[str] = Field(default_factory=list)


class Scoring(_Strict):
    primary: str = "professional_task_success"
    critical_gates: list[str] = Field(default_factory=list)


class TaskSpec(_Strict):
    id: str
    version: str = "1.0.0"
    title: str
    archetype: WorkArchetype
    profession: str = ""
    industry: str = ""
    risk_tier: RiskTier = RiskTier.R0_ROUTINE
    voice_native: bool = True
    duplex_native: bool = False
    time_budget_s: int = 720
    conditions: list[Condition] = Field(default_factory=lambda: [Condition.C0])
    # Path overrides (relative to the task directory).
    taxonomy: str = "taxonomy.yaml"
    initial_state: str = "initial_state.json"
    user_program: str = "user/flow.yaml"
    user_state: str = "user/user_state.yaml"
    reveal_graph: str = "user/reveal_graph.yaml"
    event_program: str = "user/events.yaml"
    persona: str = "user/persona.yaml"
    realization_bank: str = "user/realization_bank.jsonl"
    audio_manifest: str = "user/audio_manifest.json"
    knowledge_dir: str = "knowledge/"
    tools: str = "tools/tool_spec.yaml"
    latent_world: str = "workspace/latent_world.json"
    initial_workspace: str = "workspace/initial_workspace.json"
    artifact_schemas_dir: str = "workspace/artifact_schemas/"
    gold_dir: str = "grading/"
    knowledge_load: str = "supplied"
    tool_load: str = "light"
    autonomy: Autonomy = Field(default_factory=Autonomy)
    scoring: Scoring = Field(default_factory=Scoring)


# ---------------------------------------------------------------------------------------------
# taxonomy.yaml


class ProfessionalWork(_Strict):
    primary_archetype: WorkArchetype
    secondary_archetypes: list[WorkArchetype] = Field(default_factory=list)
    economic_function: str
    industry_setting: str


class Interaction(_Strict):
    delegation_patterns: list[DelegationPattern] = Field(default_factory=list)
    user_profile: UserProfile = UserProfile.COOPERATIVE_STANDARD
    temporal_dynamics: TemporalDynamics = TemporalDynamics.D0_STATIC
    duplex_events: list[DuplexPhenomenon] = Field(default_factory=list)


class TaxonomyWorkspace(_Strict):
    primary_artifact: ArtifactClass | None = None
    secondary_artifacts: list[ArtifactClass] = Field(default_factory=list)
    artifact_origin: ArtifactOrigin = ArtifactOrigin.APEX_NATIVE
    autonomy_level: AutonomyLevel = AutonomyLevel.A0_PREPARE_ONLY
    artifact_optional: bool = False


class TaxonomyKnowledge(_Strict):
    burden: KnowledgeBurden = KnowledgeBurden.K0_NONE
    tool_burden: ToolBurden = ToolBurden.T0_NONE


class TaxonomyGrading(_Strict):
    modes: list[GradingMode] = Field(default_factory=lambda: [GradingMode.G_STATE])
    critical_gates: list[str] = Field(default_factory=list)


class Difficulty(_Strict):
    required_fact_count: int = 0
    dependency_depth: int = 0
    number_of_valid_paths: int = 1
    ambiguity_count: int = 0
    correction_count: int = 0
    artifact_field_count: int = 0
    knowledge_doc_count: int = 0
    required_doc_count: int = 0
    tool_call_reference_count: int = 0
    consequential_commit_count: int = 0
    duplex_event_count: int = 0
    environment_change_count: int = 0
    conversation_target_minutes: float = 0.0


class PaperTags(_Strict):
    flagship: bool = False
    matched_core: bool = False
    human_audit: bool = False


class TaxonomySpec(_Strict):
    task_id: str
    professional_work: ProfessionalWork
    interaction: Interaction = Field(default_factory=Interaction)
    workspace: TaxonomyWorkspace = Field(default_factory=TaxonomyWorkspace)
    knowledge: TaxonomyKnowledge = Field(default_factory=TaxonomyKnowledge)
    grading: TaxonomyGrading = Field(default_factory=TaxonomyGrading)
    conditions: list[Condition] = Field(default_factory=lambda: [Condition.C0])
    risk_tier: RiskTier = RiskTier.R0_ROUTINE
    difficulty: Difficulty = Field(default_factory=Difficulty)
    user_realization_track: RealizationTrack = RealizationTrack.FROZEN_SYNTHETIC
    paper_tags: PaperTags = Field(default_factory=PaperTags)


# ---------------------------------------------------------------------------------------------
# workspace/latent_world.json, assets/inputs/artifact_source_manifest.yaml


class LatentWorld(_Strict):
    id: str
    seed: int = 0
    entities: dict[str, Any] = Field(default_factory=dict)
    facts: dict[str, Any] = Field(default_factory=dict)
    policies: dict[str, Any] = Field(default_factory=dict)
    authored_inconsistencies: list[str] = Field(default_factory=list)


class Renderer(_Strict):
    name: str
    version: str = "1.0"


class SourceProvenance(_Strict):
    upstream_name: str | None = None
    upstream_asset_id: str | None = None
    license: str | None = None
    transformation: str | None = None


class ArtifactSourceManifest(_Strict):
    artifact_id: str
    origin: ArtifactOrigin = ArtifactOrigin.APEX_NATIVE
    latent_world_id: str | None = None
    renderer: Renderer | None = None
    seed: int | None = None
    source_provenance: SourceProvenance | None = None
    checksum: str | None = None
    planned_origin: ArtifactOrigin | None = None


class ArtifactSourceManifests(_Strict):
    manifests: list[ArtifactSourceManifest] = Field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# grading/gold.yaml


class PredicateSpec(_Strict):
    id: str = ""
    kind: str
    args: dict[str, Any] = Field(default_factory=dict)
    description: str = ""


class CriticalGate(_Strict):
    id: str
    predicate: PredicateSpec
    must_hold: bool = True


class Precedence(_Strict):
    before: str
    after: str


class ClaimAtom(_Strict):
    id: str
    proposition: str = ""
    source_fact: str | None = None


class ArtifactFieldExpectation(_Strict):
    field: str
    expected: Any = None
    #: A name of :func:`harness.field_graders.field_graders` (checked at load: ``cross_checks``).
    grader: str = "exact"
    required: bool = False
    tolerance: float | None = None


class ArtifactExpectation(_Strict):
    artifact_id: str
    artifact_type: str = ""
    lifecycle_min: LifecycleState | None = None
    fields: list[ArtifactFieldExpectation] = Field(default_factory=list)
    required_claims: list[ClaimAtom] = Field(default_factory=list)
    forbidden_claims: list[ClaimAtom] = Field(default_factory=list)
    required_caveats: list[ClaimAtom] = Field(default_factory=list)
    must_not_be_stale: list[str] = Field(default_factory=list)


class GoldSpec(_Strict):
    terminal_state: list[PredicateSpec] = Field(default_factory=list)
    alternate_terminal_states: list[list[PredicateSpec]] = Field(default_factory=list)
    required_actions: list[PredicateSpec] = Field(default_factory=list)
    required_evidence: list[PredicateSpec] = Field(default_factory=list)
    forbidden: list[PredicateSpec] = Field(default_factory=list)
    precedence: list[Precedence] = Field(default_factory=list)
    critical_gates: list[CriticalGate] = Field(default_factory=list)
    artifact_expectations: list[ArtifactExpectation] = Field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# reference/policy.yaml


class PolicyToolCall(_Strict):
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class PolicyTurn(_Strict):
    text: str = ""
    tool_calls: list[PolicyToolCall] = Field(default_factory=list)
    end_call: bool = False


class ReferencePolicy(_Strict):
    turns: list[PolicyTurn] = Field(default_factory=list)

    @property
    def tool_call_count(self) -> int:
        return sum(len(t.tool_calls) for t in self.turns)


# ---------------------------------------------------------------------------------------------
# user/user_state.yaml


class RevealRule(_Strict):
    may_volunteer: bool = False
    agent_acts: list[str] = Field(default_factory=list)
    events: list[str] = Field(default_factory=list)
    on_state: list[str] = Field(default_factory=list)


class UserFact(_Strict):
    id: str
    value: Any = None
    source: str = "task_fixture"
    visibility: str = "private_user"
    truth_status: bool = True
    criticality: str = "required"
    supersedes: str | None = None
    reveal: RevealRule = Field(default_factory=RevealRule)


class Delegation(_Strict):
    patterns: list[DelegationPattern] = Field(default_factory=list)
    user_outcome_request: str | None = None
    procedural_steps_revealed: bool = False


class ApprovalState(_Strict):
    pending_actions: list[Any] = Field(default_factory=list)
    active_tokens: list[Any] = Field(default_factory=list)
    revoked_tokens: list[Any] = Field(default_factory=list)


class UserState(_Strict):
    schema_version: int = 1
    user_id: str
    role: str = "user"
    profile: UserProfile = UserProfile.COOPERATIVE_STANDARD
    persona: dict[str, Any] = Field(default_factory=dict)
    facts: list[UserFact] = Field(default_factory=list)
    goals_primary: str | None = None
    goals_secondary: list[str] = Field(default_factory=list)
    constraints: list[str] = Field(default_factory=list)
    delegation: Delegation = Field(default_factory=Delegation)
    approval_state: ApprovalState = Field(default_factory=ApprovalState)


# ---------------------------------------------------------------------------------------------
# user/flow.yaml


class Trigger(_Strict):
    agent_act: str | None = None
    tool_call: str | None = None
    tool_result: str | None = None
    artifact_mutation: str | None = None
    commit_attempt: str | None = None
    approval_request: str | None = None
    world_predicate: str | None = None
    external_event: str | None = None
    media_time_ms_gte: int | None = None
    agent_speech_continuous_ms_gte: int | None = None
    repetition_count_gte: int | None = None
    fact_unrevealed: str | None = None


class Action(_Strict):
    act: SpeechAct
    facts: list[str] = Field(default_factory=list)
    floor_action: FloorAction = FloorAction.AFTER_FLOOR_RELEASE
    urgency: str = "normal"
    event_id: str | None = None
    plan_id: str | None = None
    style: dict[str, Any] = Field(default_factory=dict)


class Transition(_Strict):
    when: Trigger
    do: Action | None = None
    next: str


class FlowState(_Strict):
    on_enter: Action | None = None
    transitions: list[Transition] = Field(default_factory=list)
    terminal: bool = False


class FlowSpec(_Strict):
    start: str = "START"
    states: dict[str, FlowState] = Field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# user/observer.yaml


class ObserverPattern(_Strict):
    act: str
    pattern: str
    field: str | None = None


class ObserverSpec(_Strict):
    patterns: list[ObserverPattern] = Field(default_factory=list)
    tool_act_map: dict[str, str] = Field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# user/events.yaml


class EventSpec(_Strict):
    id: str
    type: str
    criticality: str = "task_critical"
    trigger: Trigger = Field(default_factory=Trigger)
    start_window_ms: list[int] | None = None
    delivery: FloorAction = FloorAction.AFTER_FLOOR_RELEASE
    expected_floor_action: str | None = None
    max_stop_latency_ms: int | None = None
    fact_updates: dict[str, Any] = Field(default_factory=dict)
    expected_repairs: list[str] = Field(default_factory=list)
    world_updates: dict[str, Any] = Field(default_factory=dict)
    forbidden_tool_commits: list[str] = Field(default_factory=list)


class EventProgram(_Strict):
    events: list[EventSpec] = Field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# user/realization_bank.jsonl, user/audio/index.jsonl


class RealizationVariant(_Strict):
    variant_id: str
    text: str
    expressed_fact_ids: list[str] = Field(default_factory=list)
    compiler: dict[str, Any] = Field(default_factory=dict)
    checksum: str | None = None


class RealizationEntry(_Strict):
    user_plan_id: str
    speech_act: str
    variants: list[RealizationVariant] = Field(default_factory=list)


class WordTimestamp(_Strict):
    word: str
    start_ms: int
    end_ms: int


class AudioIndexRow(_Strict):
    file: str
    kind: str
    user_plan_id: str | None = None
    variant_id: str | None = None
    text: str
    voice: str = ""
    sample_rate: int = 24000
    num_samples: int
    pcm16_sha256: str
    word_timestamps: list[WordTimestamp] = Field(default_factory=list)
