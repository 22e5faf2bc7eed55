"""Native vs bridge tool calls, and session start with an agent container (docker).

Usage: python benchmarks/bench_native.py [--calls 200] [--starts 12]

Tool-call round trip, one demo task's docker sandbox, the same call (the reference policy's first)
made ``--calls`` times from where each agent's MCP client sits:

- bridge: the harness executes the call (``McpEnvironment.call_tool``: media time pushed over the
  control socket, then the MCP call), as for the oracle in ``--tool-mode bridge``;
- native, in-process: the native oracle's own MCP SDK client in the harness process;
- native, container: the same client inside the native oracle's agent container, over the
  session bridge (timed there, with ``docker exec``).

Session start-to-ready: ``--starts`` sessions one after another, each a docker sandbox (warm pool)
plus its agent container, until the agent's port accepts: the agent's own start-to-ready, and the
whole (sandbox + agent).

Measured 2026-12-01 on the 2-core helper machine (shared: other helpers' builds and tests ran):
    tool call get_enrollment_window({}) round trip   p50       p95      (200 calls each)
    bridge (harness executes)                        13.24 ms  25.85 ms
    native, in-process                               10.60 ms  17.19 ms
    native, agent container                           7.67 ms  12.56 ms
    session start-to-ready (12 starts, one at a time) p50      p95
    agent container                                   2.11 s    3.96 s
    sandbox (warm pool) + agent container             2.60 s    6.07 s
The bridge pays the control-socket media-time push before each call; inside the container the
client's process is not shared with the session loop.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from harness.agents.native_oracle import _mcp_caller
from harness.agents.registry import get_model
from harness.metrics.percentiles import percentile
from harness.session.mcp_environment import McpEnvironment
from harness.tasks.dataset import BUNDLED_DATA, resolve_data
from harness.tasks.loader import load_task
from sandbox.agent_container import AgentContainerConfig, ensure_agent_image, start_agent_container
from sandbox.docker_backend import DockerBackend

TASK_ID = "demo_benefits_enrollment_001"
IMAGE = get_model("native-oracle").agent_image or ""

#: Timed inside the agent container: the native oracle's own caller, N calls, one JSON line out.
_IN_CONTAINER = """
import asyncio, json, sys, time
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from harness.agents.native_oracle import _mcp_caller

async def main(url, headers, name, args, n):
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            call = _mcp_caller(client)
            times = []
            for _ in range(n):
                t = time.perf_counter()
                await call(name, args)
                times.append((time.perf_counter() - t) * 1000)
    print(json.dumps(times))

asyncio.run(main(sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4]), int(sys.argv[5])))
"""


def _line(label: str, values: list[float], unit: str = "ms") -> str:
    return f"{label:28s} p50 {percentile(values, 0.5):8.2f} {unit}   p95 {percentile(values, 0.95):8.2f} {unit}   (n={len(values)})"


async def _timed(n: int, call) -> list[float]:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        await call()
        times.append((time.perf_counter() - started) * 1000)
    return times


async def tool_calls(public_dir: Path, name: str, args: dict, n: int) -> None:
    import docker

    engine = docker.from_env(use_context=False)
    backend = DockerBackend()
    try:
        async with backend.start(public_dir, "bench-native", task_id=TASK_ID) as sandbox:
            async with McpEnvironment(sandbox) as env:
                await env.list_tools()
                bridge = await _timed(n, lambda: env.call_tool(name, args, 0))
            headers = sandbox.mcp_headers()
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                async with Client(streamable_http_client(sandbox.mcp_url, http_client=http)) as client:
                    call = _mcp_caller(client)
                    native = await _timed(n, lambda: call(name, args))
            async with start_agent_container(sandbox, AgentContainerConfig(image=IMAGE)) as agent:
                container = engine.containers.get(agent.container_id)
                command = ["python", "-c", _IN_CONTAINER, sandbox.mcp_url, json.dumps(headers), name, json.dumps(args), str(n)]
                result = await asyncio.to_thread(container.exec_run, command)
                if result.exit_code != 0:
                    raise RuntimeError(f"timing inside the agent container failed: {result.output.decode()[-500:]}")
                in_container = json.loads(result.output.decode().strip().splitlines()[-1])
    finally:
        await backend.aclose()
    print(f"tool call {name}({json.dumps(args)[:60]}) round trip")
    print(_line("bridge (harness executes)", bridge))
    print(_line("native, in-process", native))
    print(_line("native, agent container", in_container))


async def starts(public_dir: Path, n: int) -> None:
    backend = DockerBackend()
    agent_s: list[float] = []
    whole_s: list[float] = []
    try:
        for _ in range(n):
            started = time.monotonic()
            async with backend.start(public_dir, "bench-native-start", task_id=TASK_ID) as sandbox:
                async with start_agent_container(sandbox, AgentContainerConfig(image=IMAGE)) as agent:
                    whole_s.append(time.monotonic() - started)
                    agent_s.append(agent.timings["start_to_ready_s"])
    finally:
        await backend.aclose()
    print(f"session start-to-ready with an agent container ({n} starts, one at a time)")
    print(_line("agent container", agent_s, "s"))
    print(_line("sandbox + agent container", whole_s, "s"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--starts", type=int, default=12)
    options = parser.parse_args()
    ensure_agent_image(IMAGE)
    task_dir = next(d for d in resolve_data(BUNDLED_DATA).task_dirs if d.name == TASK_ID)
    bundle = load_task(task_dir)
    first = next(call for turn in bundle.policy.turns for call in turn.tool_calls)
    with tempfile.TemporaryDirectory(prefix="bench-native-") as root:
        public_dir = Path(root) / TASK_ID
        bundle.public_bundle().write(public_dir)
        asyncio.run(tool_calls(public_dir, first.name, first.args, options.calls))
        asyncio.run(starts(public_dir, options.starts))


if __name__ == "__main__":
    main()
