"""Deterministic field graders, with the examples of the published grading rules."""

from __future__ import annotations

from datetime import date

import pytest

from harness.field_graders import BUILTIN_GRADERS, canonical_date, grade_field

PUBLISHED_GRADERS = [
    "exact", "casefold_exact", "normalized_phone", "normalized_date", "normalized_address", "enum",
    "numeric_tolerance", "set_exact", "set_f1", "set_precision", "set_recall", "ordered_list",
    "interval_overlap", "semantic", "claim_atoms",
]


def test_registry_covers_every_published_grader_in_the_format_order() -> None:
    assert list(BUILTIN_GRADERS) == PUBLISHED_GRADERS


def test_which_graders_the_judge_may_overrule() -> None:
    judged = {name: g.judge for name, g in BUILTIN_GRADERS.items() if g.judge != "never"}
    assert judged == {"exact": "text", "casefold_exact": "text", "enum": "text", "semantic": "text",
                      "numeric_tolerance": "number"}
    assert [name for name, g in BUILTIN_GRADERS.items() if not g.scores_fields] == ["claim_atoms"]


@pytest.mark.parametrize("value", ["February 1, 2026", "Feb 1 2026", "2/1/2026", date(2026, 2, 1),
                                   "1st February 2026", "due 2026-2-1 please", "the 1 feb, 2026"])
def test_dates_equal_the_iso_gold(value: object) -> None:
    assert grade_field("normalized_date", value, "2026-02-01") == 1.0


def test_a_different_date_does_not_match() -> None:
    assert grade_field("normalized_date", "March 3, 2026", "2026-02-01") == 0.0


def test_date_fallback_canonicalisation() -> None:
    assert canonical_date("2026.02.01") == "2026-02-01"
    assert canonical_date("2026/02/01") == "2026-02-01"
    assert canonical_date("Tomorrow at 10am!") == "m- a  10am"
    assert grade_field("normalized_date", "2026/02/01", "2026-02-01") == 1.0


def test_exact_uses_python_str_formatting() -> None:
    assert grade_field("exact", 200.0, "200.0") == 1.0
    assert grade_field("exact", 200, "200.0") == 0.0
    assert grade_field("exact", "  E1042 ", "E1042") == 1.0
    assert grade_field("exact", "e1042", "E1042") == 0.0
    assert grade_field("enum", "submitted", "submitted") == 1.0


def test_casefold_and_semantic_fallback() -> None:
    assert grade_field("casefold_exact", "Client Onsite", "client onsite") == 1.0
    assert grade_field("semantic", "CLIENT ONSITE", "client onsite") == 1.0
    assert grade_field("semantic", "client visit", "client onsite") == 0.0


def test_phone_compares_digits_only() -> None:
    assert grade_field("normalized_phone", "(555) 010-2030", "555.010.2030") == 1.0
    assert grade_field("normalized_phone", "555 010 2031", "5550102030") == 0.0


def test_address_collapses_punctuation_and_case() -> None:
    assert grade_field("normalized_address", "12 Main St., Apt #4", "12 main st apt 4") == 1.0
    assert grade_field("normalized_address", "12 Main Street", "12 main st") == 0.0


def test_numeric_tolerance_reads_the_first_number() -> None:
    assert grade_field("numeric_tolerance", "$200.004 total", 200.0, 0.01) == 1.0
    assert grade_field("numeric_tolerance", "1,250.50", "1250.5") == 1.0
    assert grade_field("numeric_tolerance", "about 201", 200.0, 0.5) == 0.0
    assert grade_field("numeric_tolerance", "-3", -3) == 1.0
    assert grade_field("numeric_tolerance", "two hundred", 200.0, 1.0) == 0.0


def test_set_exact_is_casefolded_and_order_free() -> None:
    assert grade_field("set_exact", ["B", "a"], ["a", "b"]) == 1.0
    assert grade_field("set_exact", "A", ["a"]) == 1.0
    assert grade_field("set_exact", ["a"], ["a", "b"]) == 0.0


def test_set_precision_recall_f1() -> None:
    pred, gold = ["a", "b", "x"], ["a", "b", "c", "d"]
    assert grade_field("set_precision", pred, gold) == pytest.approx(2 / 3)
    assert grade_field("set_recall", pred, gold) == pytest.approx(0.5)
    assert grade_field("set_f1", pred, gold) == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert grade_field("set_f1", [], []) == 1.0
    assert grade_field("set_precision", [], ["a"]) == 0.0
    assert grade_field("set_f1", ["x"], ["a"]) == 0.0


def test_ordered_list_is_element_wise() -> None:
    assert grade_field("ordered_list", ["a", 1], ["a", "1"]) == 1.0
    assert grade_field("ordered_list", ["b", "a"], ["a", "b"]) == 0.0
    assert grade_field("ordered_list", "a", ["a"]) == 1.0


def test_interval_overlap_is_jaccard() -> None:
    assert grade_field("interval_overlap", [0, 10], [5, 15]) == pytest.approx(5 / 15)
    assert grade_field("interval_overlap", [0, 10], [0, 10]) == 1.0
    assert grade_field("interval_overlap", [0, 1], [2, 3]) == 0.0
    assert grade_field("interval_overlap", "0-10", [0, 10]) == 0.0
    assert grade_field("interval_overlap", ["a", "b"], [0, 10]) == 0.0


def test_claim_atoms_always_zero() -> None:
    assert grade_field("claim_atoms", "anything", "anything") == 0.0


def test_unknown_grader_names_the_value() -> None:
    with pytest.raises(ValueError, match="unknown field grader 'fuzzy'"):
        grade_field("fuzzy", "a", "a")


def test_interval_overlap_takes_endpoints_in_order_and_an_empty_union_scores_zero():
    assert grade_field("interval_overlap", [0, 10], [5, 15]) == 5 / 15
    assert grade_field("interval_overlap", [10, 0], [0, 10]) == 0.0
    assert grade_field("interval_overlap", [5, 5], [5, 5]) == 0.0
