"""What a voice session hands back: its result object and the figures its last events carry."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.audio.speech_bank import SpeechSource
from harness.audio.stereo_recorder import StereoRecorder
from harness.events import EventBus
from harness.grading.report import GradeReport
from mcp_servers.records import EnvironmentSnapshot

__all__ = ["DuplexSessionResult", "FrameLateness", "speech_name", "usage_total"]


@dataclass
class DuplexSessionResult:
    run_id: str
    task_id: str
    condition: str
    pts: int | None
    outcome: str
    reason: str
    turns: int
    grade: GradeReport
    snapshot: EnvironmentSnapshot
    events: EventBus
    session_dir: Path | None
    recorder: StereoRecorder
    observed_act_keys: list[str]
    adapter_meta: dict[str, Any] = field(default_factory=dict)
    #: The agent's own error events, in order (logged as INFRA_FAILURE with actor ``agent``).
    agent_errors: list[str] = field(default_factory=list)
    usage: list[dict[str, Any]] = field(default_factory=list)
    #: How the agent failed at its boundary (``{"kind", "detail", "media_ms"}``); the run is scored.
    agent_failure: dict[str, Any] | None = None


class FrameLateness:
    """How late, on the wall, the realtime loop began each frame after its deadline (ms).

    A stalled session shows in its own ``RUN_END``. On the virtual clock media time has no wall
    deadline, so nothing is sampled and both figures are ``None``.
    """

    def __init__(self) -> None:
        self._samples: list[float] = []

    def sample(self, late_ms: float) -> None:
        self._samples.append(max(0.0, late_ms))

    def summary(self) -> dict[str, float | None]:
        if not self._samples:
            return {"frame_lateness_max_ms": None, "frame_lateness_p99_ms": None}
        samples = np.asarray(self._samples)
        return {"frame_lateness_max_ms": round(float(samples.max()), 3),
                "frame_lateness_p99_ms": round(float(np.percentile(samples, 99)), 3)}


def speech_name(speech: SpeechSource) -> str:
    if speech.bank is None:
        return "espeak"
    return "prerendered+espeak" if speech.fallback_texts else "prerendered"


def usage_total(usage: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not usage:
        return None
    total: Counter[str] = Counter()
    for row in usage:
        total.update({k: v for k, v in row.items() if isinstance(v, int)})
    return {"responses": len(usage), **total}
