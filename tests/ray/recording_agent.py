"""Test doubles the Ray tests run on cluster nodes (imported there by name, like any adapter).

``RecordingOracle`` is the oracle that writes, into a folder every node of the local test cluster
shares, when each of its sessions opened and closed and on which node: the tests read the
intervals back to count sessions that ran at once anywhere on the cluster. ``hold_s`` keeps each
session open that much longer (wall time, before the virtual-clock session starts), so a limit
that did not hold would show, and a node can be removed while a session is on it.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from harness.agents.oracle_voice import OracleVoiceAgent
from harness.agents.realtime import SessionConfig
from harness.agents.registry import ModelSpec

__all__ = ["FailingAgent", "RecordingOracle", "SessionSpan", "failing_model", "max_overlap", "read_spans", "recording_model"]


def _node_id() -> str:
    """The Ray node this session runs on; ``local`` outside a Ray worker (Ray is not imported there)."""
    import sys

    ray = sys.modules.get("ray")
    return ray.get_runtime_context().get_node_id() if ray is not None and ray.is_initialized() else "local"


class RecordingOracle(OracleVoiceAgent):
    def __init__(self, log_dir: str, hold_s: float = 0.0) -> None:
        super().__init__()
        self._log = Path(log_dir) / f"{uuid.uuid4().hex}.json"
        self._hold_s = hold_s
        self._span: dict[str, object] = {}

    async def connect(self, config: SessionConfig) -> None:
        self._span = {"node": _node_id(), "pid": os.getpid(), "opened": time.time()}
        self._write()
        await asyncio.sleep(self._hold_s)
        await super().connect(config)

    async def close(self) -> None:
        self._span["closed"] = time.time()
        self._write()
        await super().close()

    def _write(self) -> None:
        tmp = self._log.with_suffix(".tmp")
        tmp.write_text(json.dumps(self._span), encoding="utf-8")
        os.replace(tmp, self._log)


def recording_model(log_dir: Path, *, limit: int | None = None, hold_s: float = 0.0) -> ModelSpec:
    return ModelSpec(
        key="recording-oracle", display_name="Recording oracle", provider="tests",
        adapter="tests.ray.recording_agent:RecordingOracle", clock="virtual", privileged=True,
        agent_kind="builtin", max_concurrent_sessions=limit, options={"log_dir": str(log_dir), "hold_s": hold_s},
    )


@dataclass(frozen=True)
class SessionSpan:
    node: str
    opened: float
    closed: float | None


def read_spans(log_dir: Path) -> list[SessionSpan]:
    spans = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(Path(log_dir).glob("*.json"))]
    return [SessionSpan(s["node"], s["opened"], s.get("closed")) for s in spans]


def max_overlap(spans: list[SessionSpan]) -> int:
    """The most sessions open at one instant (a close at the same instant as an open counts first)."""
    edges = sorted([(s.opened, 1) for s in spans] + [(s.closed, -1) for s in spans if s.closed is not None],
                   key=lambda edge: (edge[0], edge[1]))
    best = open_now = 0
    for _, step in edges:
        open_now += step
        best = max(best, open_now)
    return best


class FailingAgent(OracleVoiceAgent):
    """An agent whose session fails as it opens: ``provider`` raises what a provider adapter says of
    a dropped connection (infrastructure, retried), ``bug`` a plain error of the harness's own agent."""

    def __init__(self, failure: str) -> None:
        super().__init__()
        self._failure = failure

    async def connect(self, config: SessionConfig) -> None:
        from harness.blame.errors import ProviderTransient

        if self._failure == "provider":
            raise ProviderTransient("server disconnected (1006)", retry_after_s=0.0)
        raise RuntimeError("the built-in agent broke")


def failing_model(failure: str) -> ModelSpec:
    return ModelSpec(
        key=f"failing-{failure}", display_name="Failing agent", provider="tests",
        adapter="tests.ray.recording_agent:FailingAgent", clock="virtual", privileged=True,
        agent_kind="provider" if failure == "provider" else "builtin", options={"failure": failure},
    )
