"""Taxonomy lint (reference §8): the rules the published ``validate`` applies to taxonomy.yaml."""

from __future__ import annotations

from collections.abc import Iterator

from .bundle import TaskBundle
from .lint_issue import LintIssue
from .models import Condition, GradingMode

__all__ = ["ECONOMIC_FUNCTIONS", "INDUSTRY_SETTINGS", "lint_taxonomy"]

#: Normalized vocabularies; values outside them are warnings only (the released data uses others).
ECONOMIC_FUNCTIONS = frozenset({
    "recruiting", "hr_operations", "sales", "customer_success", "technical_support", "it_helpdesk",
    "claims_operations", "insurance_operations", "healthcare_operations", "legal_operations",
    "finance_operations", "procurement", "project_management", "operations", "field_service",
    "facilities", "research", "consulting", "compliance", "executive_assistance",
})
INDUSTRY_SETTINGS = frozenset({
    "horizontal_enterprise", "software_saas", "financial_services", "insurance", "healthcare_ops",
    "professional_services", "retail_ecommerce", "travel_hospitality", "logistics",
    "manufacturing_field_ops", "public_service_non_emergency", "workplace_hr",
})
_DUPLEX_CONDITIONS = {Condition.C2, Condition.C3}


def lint_taxonomy(bundle: TaskBundle) -> Iterator[LintIssue]:
    taxonomy, rel = bundle.taxonomy, bundle.task.taxonomy
    if taxonomy.workspace.primary_artifact is None and not taxonomy.workspace.artifact_optional:
        yield LintIssue(
            "error", rel, "workspace.primary_artifact",
            "is null but workspace.artifact_optional is false (name the artifact class or mark it optional)",
        )
    if _DUPLEX_CONDITIONS & set(taxonomy.conditions) and not taxonomy.interaction.duplex_events:
        yield LintIssue(
            "warning", rel, "interaction.duplex_events",
            "is empty although conditions include a full-duplex condition (C2/C3)",
        )
    if all(mode == GradingMode.G_JUDGE for mode in taxonomy.grading.modes):
        yield LintIssue(
            "error", rel, "grading.modes",
            f"{[m.value for m in taxonomy.grading.modes]} has no deterministic grading mode",
        )
    vocabularies = (
        ("professional_work.economic_function", taxonomy.professional_work.economic_function, ECONOMIC_FUNCTIONS),
        ("professional_work.industry_setting", taxonomy.professional_work.industry_setting, INDUSTRY_SETTINGS),
    )
    for field, value, vocabulary in vocabularies:
        if value not in vocabulary:
            yield LintIssue("warning", rel, field, f"{value!r} is outside the normalized vocabulary")
