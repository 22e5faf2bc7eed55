"""``parse_yaml`` builds plain documents on the event stream it checks (one parse instead of two):
the value must be exactly what PyYAML's safe loader builds — same YAML 1.1 types, same order —
and anything it does not build (anchors, merges, tags, several documents) goes to the loader."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.tasks.bounded_parse import YAML_LIMITS, ParseRefused, _scan, _UniqueKeyLoader, parse_yaml
from tests.conftest import DEMO_DATA, REFERENCE_FIXTURES, require_reference_fixtures

# Plain scalars YAML 1.1 types in surprising ways, and some it leaves as strings.
TRICKY = [
    "yes", "No", "on", "OFF", "y", "n", "true", "False", "~", "null", "Null", "", "0", "-0", "012", "0o17",
    "0x1F", "0b101", "1_000", "+12", "1:20", "190:20:30", "1.5", "1e3", "1.0e+3", "-.5", ".inf", "-.Inf",
    ".nan", "6.8523015e+5", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10",
    "2002-12-14", "12:30", "abc", "a b", "hello world", "0.", "._", "1__0", "0x", "+", "=x", "<<x",
]


def expected(text: str):
    return yaml.load(text, Loader=_UniqueKeyLoader)


def same(text: str) -> None:
    scan = _scan(text, YAML_LIMITS)
    assert scan.built, text
    reference = expected(text)
    assert scan.value == reference and repr(scan.value) == repr(reference), text
    assert parse_yaml(text) == reference


def test_every_yaml_file_of_the_demo_suite_is_built_on_the_event_stream_as_the_loader_builds_it():
    files = sorted(DEMO_DATA.rglob("*.yaml"))
    assert len(files) > 100
    for path in files:
        same(path.read_text(encoding="utf-8"))


def test_the_reference_fixtures_are_built_as_the_loader_builds_them():
    require_reference_fixtures()
    for path in sorted(REFERENCE_FIXTURES.rglob("*.yaml")):
        same(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("token", TRICKY)
def test_each_plain_scalar_is_typed_as_yaml_1_1_types_it(token):
    same(f"key: {token}\nlist: [{token or 'x'}, '{token}']\n{token or 'k'}: v\n")


plain = st.sampled_from(TRICKY[:-3]).filter(bool)


def flow(depth: int) -> st.SearchStrategy[str]:
    scalar = st.one_of(plain, st.sampled_from(["'x'", '"y z"', "'yes'", '"12"']))
    if depth == 0:
        return scalar
    inner = flow(depth - 1)
    return st.one_of(
        scalar,
        st.lists(inner, max_size=4).map(lambda items: "[" + ", ".join(items) + "]"),
        st.lists(st.tuples(scalar, inner), max_size=4).map(lambda pairs: "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"),
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(plain, flow(3)), max_size=6))
def test_random_documents_build_as_the_loader_builds_them(pairs):
    text = "".join(f"{key}: {value}\n" for key, value in pairs)
    try:
        reference = expected(text)
    except (yaml.YAMLError, ParseRefused, ValueError, TypeError, OverflowError):
        with pytest.raises(ParseRefused):
            parse_yaml(text)
        return
    assert parse_yaml(text) == reference
    assert repr(parse_yaml(text)) == repr(reference)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="yYnNtTfFoO~0123456789.+-_:eE abc<=!&*x", min_size=1, max_size=8))
def test_a_plain_scalar_skips_the_resolver_only_where_it_would_say_string(token):
    # Plain scalars whose first character no implicit pattern starts with are taken as strings
    # without running the patterns: every character here starts some pattern, or none.
    text = f"k: {token}\n"
    try:
        reference = expected(text)
    except (yaml.YAMLError, ParseRefused, ValueError, TypeError, OverflowError):
        with pytest.raises(ParseRefused):
            parse_yaml(text)
        return
    assert repr(parse_yaml(text)) == repr(reference)


@settings(max_examples=150, deadline=None)
@given(st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=10),
              st.sampled_from(TRICKY), st.dates()),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
), st.sampled_from([None, False, True]))
def test_dumped_data_reads_back_as_the_loader_reads_it(data, flow_style):
    same(yaml.safe_dump({"root": data}, default_flow_style=flow_style, allow_unicode=True))


@pytest.mark.parametrize("text", [
    "a: &x 1\nb: *x\n",
    "base: &b {x: 1}\nuse: {<<: *b, y: 2}\n",
    "s: !!set {a, b}\n",
    "b: !!binary aGVsbG8=\n",
    "n: !!str 123\n",
    "o: !!omap [{a: 1}, {b: 2}]\n",
    "v: !custom 1\n",
    "? [a, b]\n: c\n",
    "a: 1\n---\nb: 2\n",
])
def test_what_the_event_stream_does_not_build_goes_to_the_loader(text):
    assert not _scan(text, YAML_LIMITS).built
    try:
        reference = expected(text)
    except (yaml.YAMLError, ParseRefused, TypeError):
        with pytest.raises(ParseRefused):
            parse_yaml(text)
        return
    assert parse_yaml(text) == reference


def test_a_duplicate_key_names_its_line_when_built_on_the_event_stream():
    with pytest.raises(ParseRefused, match="duplicate key 'b'") as info:
        parse_yaml("a: 1\nb: 2\nc:\n  d: 3\nb: 4\n")
    assert info.value.line == 5
    with pytest.raises(ParseRefused, match="duplicate key True"):
        parse_yaml("yes: 1\ntrue: 2\n")  # YAML 1.1: both keys are True


def test_an_empty_document_is_none():
    assert parse_yaml("") is None and parse_yaml("# only a comment\n") is None
