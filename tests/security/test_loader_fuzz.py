"""Property-based fuzzing of the task loader: whatever a package's YAML and JSON files hold, loading
gives a task (that the lint can check) or one ``TaskLoadError`` line, never another exception and
never a hang.

Inputs are mutations of a real demo package (copied once to a temporary folder): byte-level edits
seeded with YAML/JSON syntax that matters (anchors, aliases, merges, tags, NUL, bad UTF-8,
brackets), and value-level edits that replace, drop or duplicate one node of the parsed file with
a generated value or with a scalar taken from the package (so enum values and ids get swapped
around). The CI budget is small and fixed; ``benchmarks/bench_fuzz.py`` runs the same property
longer and reports loads per second.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.tasks.errors import TaskLoadError
from harness.tasks.lint import lint_task
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA
from tests.package_editing import editable_copy

pytestmark = pytest.mark.slow

PACKAGE = DEMO_DATA / "tasks" / "demo_hvac_inspection_001"
CI_EXAMPLES = 60
#: Far above the slowest legitimate load (about 50 ms): only a hang reaches it.
HANG_SECONDS = 20

_FILES = sorted(
    p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*") if p.suffix in (".yaml", ".json", ".jsonl")
)
_TOKENS = [
    b"&a ", b"*a", b"<<: *a", b"!!python/object/apply:os.system [id]", b"!!binary", b"\x00", b"\xff\xfe",
    b"\xed\xa0\x80", b"{", b"}", b"[", b"]", b"- ", b": ", b'"', b"'", b"\\u0000", b"\\ud800", b"../../",
    b"/etc/passwd", b"\n", b"\n  ", b"\t", b"1e999", b"NaN", b"9" * 5000, b"2026-02-30", b"? ", b"---\n", b"%YAML 1.1\n",
]  # fmt: skip


class Hang(Exception):
    """The loader ran longer than any real package needs."""


@contextmanager
def no_hang(seconds: int = HANG_SECONDS) -> Iterator[None]:
    def expire(signum: int, frame: Any) -> None:
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _parse(rel: str, data: bytes) -> Any:
    text = data.decode("utf-8")
    if rel.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text) if rel.endswith(".json") else yaml.safe_load(text)


def _dump(rel: str, value: Any) -> bytes:
    if rel.endswith(".jsonl"):
        rows = value if isinstance(value, list) else [value]
        text = "".join(json.dumps(row, default=str) + "\n" for row in rows)
    elif rel.endswith(".json"):
        text = json.dumps(value, default=str)
    else:
        text = yaml.safe_dump(value, allow_unicode=True, sort_keys=False)
    return text.encode("utf-8", "surrogatepass")


def _scalars(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        yield from value.keys()
        for child in value.values():
            yield from _scalars(child)
    elif isinstance(value, list):
        for child in value:
            yield from _scalars(child)
    else:
        yield value


ORIGINALS = {rel: (PACKAGE / rel).read_bytes() for rel in _FILES}
PARSED = {rel: _parse(rel, data) for rel, data in ORIGINALS.items()}
_PACKAGE_SCALARS = sorted({repr(s): s for v in PARSED.values() for s in _scalars(v)}.values(), key=repr)

scalars = st.one_of(
    st.sampled_from(_PACKAGE_SCALARS),
    st.none(), st.booleans(), st.integers(), st.floats(),
    st.text(alphabet=st.characters(exclude_categories=()), max_size=20),
    st.sampled_from(["../../etc/passwd", "/etc/passwd", "a\x00b", "\ud800", "", "x" * 10_000]),
)  # fmt: skip
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10) | scalars, inner, max_size=4),
    max_leaves=16,
)


@st.composite
def _byte_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        end = draw(st.integers(at, min(len(data), at + 40)))
        insert = draw(st.sampled_from(_TOKENS) if draw(st.integers(0, 3)) else st.binary(max_size=8))
        data = data[:at] + insert + (data[end:] if draw(st.booleans()) else data[at:])
    return data


@st.composite
def _value_mutation(draw: st.DrawFn, value: Any) -> Any:
    """``value`` with one node (reached by a random walk) replaced, dropped or duplicated."""
    root = {"_": json.loads(json.dumps(value, default=str))}
    parent: Any = root
    key: Any = "_"
    while isinstance(parent[key], dict | list) and parent[key] and draw(st.integers(0, 4)):  # mostly deep
        parent = parent[key]
        key = draw(st.sampled_from(sorted(parent, key=str) if isinstance(parent, dict) else range(len(parent))))
    action = draw(st.sampled_from(["replace", "drop", "nest"]))
    if action == "drop" and parent is not root:
        del parent[key]
    elif action == "nest":
        parent[key] = [parent[key], parent[key]] if draw(st.booleans()) else {"x": parent[key]}
    else:
        parent[key] = draw(values)
    return root["_"]


@st.composite
def mutated_files(draw: st.DrawFn) -> dict[str, bytes]:
    """One to three package files, each mutated at the byte or at the value level."""
    changed: dict[str, bytes] = {}
    for rel in draw(st.lists(st.sampled_from(_FILES), min_size=1, max_size=3, unique=True)):
        if draw(st.booleans()):
            changed[rel] = draw(_byte_mutation(ORIGINALS[rel]))
        else:
            changed[rel] = _dump(rel, draw(_value_mutation(PARSED[rel])))
    return changed


def check_load(task_dir: Path, changed: dict[str, bytes]) -> str:
    """Write the mutation, load, restore; returns ``"loaded"`` or the error line."""
    for rel, data in changed.items():
        (task_dir / rel).write_bytes(data)
    try:
        with no_hang():
            lint_task(load_task(task_dir))  # what validate runs next: it must not raise either
        return "loaded"
    except TaskLoadError as exc:
        message = str(exc)
        assert "\n" not in message and message.startswith("task '"), message
        return message
    finally:
        for rel in changed:
            (task_dir / rel).write_bytes(ORIGINALS[rel])


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory) -> Path:
    return editable_copy(PACKAGE, tmp_path_factory.mktemp("fuzzed"))


@settings(max_examples=CI_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(changed=mutated_files())
def test_any_mutation_loads_or_is_one_error_line(task_dir, changed):
    check_load(task_dir, changed)


def test_the_unmutated_copy_loads(task_dir):
    assert check_load(task_dir, {}) == "loaded"
