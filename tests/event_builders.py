"""Event streams for metric tests, built as published runs store them (payloads not validated:
the metrics must read any run's ``events.jsonl``, not only the ones our bus wrote)."""

from __future__ import annotations

from harness.events import RunEvent


def events(*specs, run_id: str = "r", condition: str = "C2") -> list[RunEvent]:
    """``(type, media_time_ms, payload)`` or ``(type, actor, media_time_ms, payload)`` → events."""
    built = []
    for seq, spec in enumerate(specs):
        type_, actor, t, payload = spec if len(spec) == 4 else (spec[0], "harness", spec[1], spec[2])
        built.append(RunEvent(seq=seq, type=type_, actor=actor, media_time_ms=t, payload=payload,
                              run_id=run_id, task_version="1", condition=condition))
    return built
