"""Parsing untrusted YAML and JSON within limits: size, nesting, aliases, expanded size, duplicates.

A task package is input from strangers. Without limits one YAML "billion laughs" (nine levels of ten
aliases) expands to 10⁹ nodes as soon as anything walks it (validation, a JSON dump for the
sandbox), a 200 MB ``initial_state.json`` is copied into every sandbox, and a document nested
100,000 levels deep overflows the stack. Every limit here is checked *before* the value is built:
YAML is scanned as a flat event stream (libyaml's parser is not recursive) that counts nesting,
alias uses and the node count after expanding every alias, and stops at the first excess; JSON
nesting is bounded by the decoder's own recursion guard and then measured without recursion.

Duplicate keys are errors in both formats (the published loaders would silently keep the last one,
so a reviewer reading the first would be misled). The module depends on the standard library and
PyYAML only, so the sandboxed MCP server can use the same reader for the bundle it is handed.
"""

from __future__ import annotations

import json
import os
import posixpath
import stat
from dataclasses import dataclass
from typing import Any

import yaml

__all__ = [
    "JSON_LIMITS",
    "JSONL_LIMITS",
    "ParseRefused",
    "ReadLimits",
    "TEXT_LIMITS",
    "YAML_LIMITS",
    "limits_for",
    "parse_json",
    "parse_yaml",
    "read_bounded",
]

_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"
_MIB = 1 << 20


@dataclass(frozen=True)
class ReadLimits:
    """What one file of a kind may hold. ``max_aliases`` and ``max_nodes`` apply per YAML document."""

    kind: str
    max_bytes: int
    max_depth: int = 64
    max_aliases: int = 100
    max_nodes: int = 200_000


# The largest files of the ten demo tasks and the reference fixtures are 7.4 KB (YAML), 2.6 KB
# (JSON), 65 KB (JSONL) and 1.5 KB (knowledge documents), nest 8 levels and use no alias at all:
# the limits below leave two orders of magnitude of room for real tasks.
YAML_LIMITS = ReadLimits("YAML", max_bytes=1 * _MIB)
JSON_LIMITS = ReadLimits("JSON", max_bytes=8 * _MIB)
JSONL_LIMITS = ReadLimits("JSONL", max_bytes=8 * _MIB)
TEXT_LIMITS = ReadLimits("text", max_bytes=4 * _MIB)

_BY_SUFFIX = {".yaml": YAML_LIMITS, ".yml": YAML_LIMITS, ".json": JSON_LIMITS, ".jsonl": JSONL_LIMITS}


def limits_for(name: str) -> ReadLimits:
    """The limits of a file, by its suffix (knowledge documents and anything else: text)."""
    return _BY_SUFFIX.get(posixpath.splitext(name)[1].lower(), TEXT_LIMITS)


class ParseRefused(ValueError):
    """A file exceeds a limit, holds a duplicate key or is not valid YAML/JSON; ``line`` when known."""

    def __init__(self, reason: str, *, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


def read_bounded(path: str | os.PathLike[str], limits: ReadLimits) -> bytes:
    """The bytes of the regular file ``path``, refused above ``limits.max_bytes`` before reading."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block the loader
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ParseRefused("not a regular file")
        if info.st_size > limits.max_bytes:
            raise ParseRefused(_too_big(info.st_size, limits))
        data = handle.read(limits.max_bytes + 1)  # the file may grow after fstat
    if len(data) > limits.max_bytes:
        raise ParseRefused(_too_big(len(data), limits))
    return data


def _too_big(size: int, limits: ReadLimits) -> str:
    return f"file is {size / _MIB:.1f} MiB, the limit for {limits.kind} files is {limits.max_bytes // _MIB} MiB"


# --- JSON ---------------------------------------------------------------------------------------


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)  # this hook sees every object of a file: the loop only runs on a duplicate
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


def _no_constant(name: str) -> Any:
    raise ParseRefused(f"invalid JSON: {name} is not a JSON number")  # Python's json accepts it


def parse_json(text: str, limits: ReadLimits = JSON_LIMITS) -> Any:
    """Strict JSON: no duplicate keys, no ``NaN``/``Infinity``, at most ``limits.max_depth`` deep."""
    try:
        value = json.loads(text, object_pairs_hook=_unique_object, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ParseRefused(f"invalid JSON: {exc.msg}", line=exc.lineno) from None
    except _DuplicateKey as exc:
        raise ParseRefused(f"duplicate key {exc.key!r}") from None
    except RecursionError:
        raise ParseRefused(f"nested deeper than {limits.max_depth} levels") from None
    except ParseRefused:
        raise
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise ParseRefused(f"invalid JSON: {_first_clause(exc)}") from None
    # Each level opens with a bracket, so a text with few brackets cannot nest deep (most JSONL lines).
    if text.count("[") + text.count("{") > limits.max_depth and _depth(value) > limits.max_depth:
        raise ParseRefused(f"nested deeper than {limits.max_depth} levels")
    return value


def _depth(value: Any) -> int:
    """Nesting depth of lists and objects, measured level by level (no recursion)."""
    deepest, level = 0, [value] if isinstance(value, (dict, list)) else []
    while level:
        deepest += 1
        below: list[Any] = []
        for item in level:
            below.extend(c for c in (item.values() if isinstance(item, dict) else item) if isinstance(c, (dict, list)))
        level = below
    return deepest


# --- YAML ---------------------------------------------------------------------------------------


class _UniqueKeyLoader(_SAFE_LOADER):  # type: ignore[misc, valid-type]
    """The safe loader (same YAML 1.1 typing) that refuses a key repeated within one mapping.

    Keys brought in by a merge (``<<: *base``) may be overridden: that is what merging is for.
    """

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = self.construct_object(key_node, deep=deep)
                try:
                    duplicate = key in seen
                    seen.add(key)
                except TypeError:  # unhashable: the base constructor reports it
                    continue
                if duplicate:
                    raise ParseRefused(f"duplicate key {key!r}", line=key_node.start_mark.line + 1)
        return super().construct_mapping(node, deep=deep)


def parse_yaml(text: str, limits: ReadLimits = YAML_LIMITS) -> Any:
    """One YAML document with the safe loader's types, within ``limits``; no duplicate keys.

    The limits are checked on the event stream, which also builds the value when the document is
    plain data (untagged scalars, mappings and sequences: every file of the demo suite and the
    reference fixtures); anything else (anchors, aliases, merges, explicit tags, more than one
    document) is built by the safe loader in a second pass.
    """
    try:
        scan = _scan(text, limits)
        return scan.value if scan.built else yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.reader.ReaderError as exc:  # a character YAML forbids (NUL, other controls)
        raise ParseRefused(f"invalid YAML: {str(exc).splitlines()[0]}", line=text.count("\n", 0, exc.position) + 1) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ParseRefused(f"invalid YAML: {problem}", line=mark.line + 1 if mark is not None else None) from None
    except ParseRefused:
        raise
    except (ValueError, TypeError, OverflowError) as exc:  # a constructor refused a scalar
        raise ParseRefused(f"invalid YAML value: {_first_clause(exc)}") from None


def _first_clause(exc: Exception) -> str:
    """The message up to its first colon: Python's long explanations are not an author's concern."""
    return str(exc).split(":")[0]


_NO_KEY = object()
_RESOLVER = yaml.resolver.Resolver()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
#: The implicit scalar types built on the event stream, with the safe loader's own constructors.
_SCALAR_TYPES = {
    tag: yaml.constructor.SafeConstructor.yaml_constructors[tag]
    for tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool",
                "tag:yaml.org,2002:null", "tag:yaml.org,2002:timestamp")
}
_STR_TAG = "tag:yaml.org,2002:str"
#: First characters of a plain scalar that the resolver may type as something other than a string;
#: any other plain scalar is a string without running its patterns (most keys and prose).
_TYPED_FIRST_CHARS = frozenset(char for char in yaml.resolver.Resolver.yaml_implicit_resolvers if char)


@dataclass
class _Open:
    """A collection being scanned: its anchor, the expanded node count when it opened, and while
    the document is still being built, the list or dict and a mapping's key awaiting its value."""

    anchor: str | None
    nodes_before: int
    value: Any = None
    key: Any = _NO_KEY


@dataclass
class _Scan:
    built: bool = True  # False once something the event stream does not build was seen
    value: Any = None


def _scan(text: str, limits: ReadLimits) -> _Scan:
    """Walk the event stream once; refuse excess nesting, alias uses, expanded size, recursive aliases
    and (in what it builds) duplicate keys."""
    scan = _Scan()
    sizes: dict[str, int] = {}  # expanded node count of each finished anchored node
    stack: list[_Open] = []
    aliases = nodes = documents = 0
    for event in yaml.parse(text, Loader=_SAFE_LOADER):
        kind = type(event)  # by exact type, most frequent first: this loop sees every node
        if kind is yaml.ScalarEvent:
            nodes += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
            if scan.built:
                _scalar(scan, stack, event)
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            opened = _Open(event.anchor, nodes)
            stack.append(opened)
            nodes += 1
            if len(stack) > limits.max_depth:
                raise ParseRefused(f"nested deeper than {limits.max_depth} levels", line=_line(event))
            if scan.built and (event.anchor is not None or event.tag is not None):
                scan.built = False
            if scan.built:
                opened.value = {} if kind is yaml.MappingStartEvent else []
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            closed = stack.pop()
            if closed.anchor is not None:
                sizes[closed.anchor] = nodes - closed.nodes_before
            if scan.built:
                _add(scan, stack, closed.value, event)
        elif kind is yaml.AliasEvent:
            scan.built = False
            aliases += 1
            if aliases > limits.max_aliases:
                raise ParseRefused(f"more than {limits.max_aliases} aliases in one document", line=_line(event))
            if any(item.anchor == event.anchor for item in stack):
                raise ParseRefused(f"alias *{event.anchor} refers to a node that contains it", line=_line(event))
            nodes += sizes.get(event.anchor, 1)  # an undefined alias is the loader's error
        elif kind is yaml.DocumentStartEvent:
            documents += 1
            scan.built = scan.built and documents == 1  # the loader says what is wrong with two
            sizes, aliases, nodes = {}, 0, 0
        if nodes > limits.max_nodes:
            raise ParseRefused(f"more than {limits.max_nodes} nodes once aliases are expanded", line=_line(event))
    return scan


def _scalar(scan: _Scan, stack: list[_Open], event: Any) -> None:
    """Build an untagged scalar as the safe loader types it (YAML 1.1: ``yes`` is True)."""
    if event.anchor is not None or event.tag is not None:
        scan.built = False
        return
    text = event.value
    if not event.implicit[0] or (text and text[0] not in _TYPED_FIRST_CHARS):
        tag = _STR_TAG  # quoted, or plain with no pattern that could match (the resolver's answer)
    else:
        tag = _RESOLVER.resolve(yaml.ScalarNode, text, event.implicit)
    if tag == _STR_TAG:
        value = event.value
    elif tag in _SCALAR_TYPES:
        value = _SCALAR_TYPES[tag](_CONSTRUCTOR, yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark))
    else:  # ``<<`` (merge) or ``=`` (value): the loader's rules
        scan.built = False
        return
    _add(scan, stack, value, event)


def _add(scan: _Scan, stack: list[_Open], value: Any, event: Any) -> None:
    """Put a finished value where it belongs: the document, a list, or a mapping's key or value."""
    if not stack:
        scan.value = value
        return
    parent = stack[-1]
    if isinstance(parent.value, list):
        parent.value.append(value)
    elif parent.key is not _NO_KEY:
        parent.value[parent.key] = value
        parent.key = _NO_KEY
    elif isinstance(value, (dict, list)):  # a complex key: the loader refuses it as unhashable
        scan.built = False
    elif value in parent.value:
        raise ParseRefused(f"duplicate key {value!r}", line=_line(event))
    else:
        parent.key = value


def _line(event: Any) -> int | None:
    return event.start_mark.line + 1 if event.start_mark is not None else None
