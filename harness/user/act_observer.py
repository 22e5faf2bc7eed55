"""Deterministic act observer: agent words and tool calls → dialogue-act keys like ``ASK:cost_center``.

Only the agent's own words and tool calls are inspected; the keys drive the flow engine, the
reveal rules and the ``agent_act_observed`` predicates of grading.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from harness.tasks.models import ObserverSpec

__all__ = ["ActObserver", "ObservedAct", "TOOL_ACT_FIELD_KEYS"]

#: Result keys that name a tool act's field, in priority order. The reference's
#: ``request_approval`` result carries ``requested_action`` (not ``action_type``), so its act
#: field falls through to ``target_id`` — kept for compatibility.
TOOL_ACT_FIELD_KEYS: tuple[str, ...] = ("action_type", "target_id", "artifact_id")


@dataclass(frozen=True)
class ObservedAct:
    act: str
    field: str | None
    source: Literal["pattern", "tool", "classifier"]
    value: str | None = None

    @property
    def key(self) -> str:
        return f"{self.act}:{self.field}" if self.field else self.act


@dataclass(frozen=True)
class _CompiledPattern:
    act: str
    field: str | None
    regex: re.Pattern[str]


class ActObserver:
    """Maps agent text (regex patterns) and tool calls (tool→act map) to observed acts."""

    def __init__(self, spec: ObserverSpec) -> None:
        self._patterns = [_compile(p.act, p.field, p.pattern) for p in spec.patterns]
        self._tool_acts = dict(spec.tool_act_map)
        self.repetition_counts: dict[str, int] = {}
        self.log: list[dict[str, Any]] = []

    def observe_text(self, text: str) -> list[ObservedAct]:
        """Every match of every pattern (case-insensitive ``finditer``) yields one act; logged."""
        acts = self.match_text(text)
        self._record({"kind": "text", "text": text}, acts)
        return acts

    def match_text(self, text: str) -> list[ObservedAct]:
        """The acts in ``text`` without logging them (for transcripts that are still streaming)."""
        acts: list[ObservedAct] = []
        for pattern in self._patterns:
            for match in pattern.regex.finditer(text):
                groups = match.groupdict()
                acts.append(
                    ObservedAct(
                        act=pattern.act,
                        field=pattern.field or groups.get("field"),
                        source="pattern",
                        value=groups.get("value"),
                    )
                )
        return acts

    @property
    def pattern_act_keys(self) -> set[str]:
        """Keys the patterns can produce (``ACT:field``, or ``ACT`` when the field is a named group)."""
        return {f"{p.act}:{p.field}" if p.field else p.act for p in self._patterns}

    def observe_labels(self, labels: Iterable[str]) -> list[ObservedAct]:
        """Acts an LLM classifier returned; logged as ``{kind: "llm_classify", labels}`` (published)."""
        labels = list(labels)
        acts = [ObservedAct(act=act, field=field or None, source="classifier")
                for act, _, field in (label.partition(":") for label in labels)]
        self._record({"kind": "llm_classify", "labels": labels}, acts)
        return acts

    def observe_tool(self, tool_name: str, result: Any) -> list[ObservedAct]:
        """One act for a mapped tool; its field comes from the result (see ``TOOL_ACT_FIELD_KEYS``)."""
        act = self._tool_acts.get(tool_name)
        if act is None:
            return []
        acts = [ObservedAct(act=act, field=_tool_field(result), source="tool")]
        self._record({"kind": "tool", "tool": tool_name}, acts)
        return acts

    def _record(self, entry: dict[str, Any], acts: list[ObservedAct]) -> None:
        keys = [a.key for a in acts]
        self.log.append({**entry, "acts": keys})
        for key in dict.fromkeys(keys):
            self.repetition_counts[key] = self.repetition_counts.get(key, 0) + 1


def _compile(act: str, field: str | None, pattern: str) -> _CompiledPattern:
    try:
        regex = re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise ValueError(
            f"observer pattern for act '{act}' is not a valid regex: {pattern!r} ({exc})"
        ) from exc
    return _CompiledPattern(act=act, field=field, regex=regex)


def _tool_field(result: Any) -> str | None:
    if not isinstance(result, Mapping):
        return None
    for key in TOOL_ACT_FIELD_KEYS:
        value = result.get(key)
        if value is not None and value != "":
            return str(value)
    return None
