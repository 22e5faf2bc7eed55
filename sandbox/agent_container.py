"""The agent under test in its own container, on its session's network, hardened like the task server.

An agent that arrives as an image (``--model container:IMAGE``, or the native oracle with
``--sandbox docker``) is untrusted code, so it runs exactly as the task's MCP server does (the same
:func:`~sandbox.hardening.hardened_create_options`): read-only root, init, noexec tmpfs ``/tmp``,
all capabilities dropped, no-new-privileges, uid 10001, pids/memory/CPU limits. Its only network is
the session's ``internal`` bridge, so it reaches the task's MCP endpoint and nothing else: no
egress, no other session (each has its own bridge), no host service (the host guard drops new
connections from every sandbox bridge), no docker socket (nothing is mounted). The harness, on the
host, connects to its websocket at ``ws://ADDRESS:PORT/v1/realtime``.

``async with start_agent_container(sandbox_env, config) as agent:`` starts one container for one
session, waits until its port accepts a connection and yields where it listens; leaving the block
always removes it (exception and cancellation included: removal waits for a start in progress, so
nothing is left behind). It carries the session's :mod:`sandbox.labels`, so the orphan sweeper
(``apex-voice sandbox cleanup``) removes it if the harness dies.

:func:`run_to_completion` runs such a container once to its end with no network at all, before
the campaign (loading a hosted adapter to describe it: the untrusted code's first run is already
inside the same walls).

Docker SDK calls block, so they run on this module's thread pool.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import docker
import docker.errors
import requests.exceptions

from .agent_container_config import AGENT_PORT, REALTIME_PATH, AgentContainer, AgentContainerConfig
from .backend import SandboxEnvironment
from .errors import AgentImageError, AgentStartFailed, SandboxUnavailableError
from .hardening import hardened_create_options
from .labels import session_labels
from .readiness import wait_until_ready

__all__ = [
    "AGENT_PORT",
    "REALTIME_PATH",
    "AgentContainer",
    "AgentContainerConfig",
    "ensure_agent_image",
    "run_to_completion",
    "start_agent_container",
]

log = logging.getLogger(__name__)

_PROBE_TIMEOUT_S = 1.0

_pool = ThreadPoolExecutor(8, thread_name_prefix="apexvoice-agent")


@dataclass
class _Launch:
    """What one start created, filled in as it is created (teardown removes whatever exists)."""

    name: str
    container_id: str | None = None
    address: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    done: threading.Event = field(default_factory=threading.Event)


@cache
def _default_client() -> Any:
    return docker.from_env(use_context=False)


@asynccontextmanager
async def start_agent_container(
    sandbox: SandboxEnvironment, config: AgentContainerConfig, *, client: Any = None
) -> AsyncIterator[AgentContainer]:
    """Start ``config.image`` on ``sandbox``'s network (a docker sandbox); remove it on exit.

    Raises:
        SandboxUnavailableError: the sandbox is not a docker one, or the container could not be
            created or started.
        AgentImageError: the image is not on the engine.
        AgentStartFailed: the container exited, or never accepted a connection, once started.
    """
    network_id = sandbox.metadata.get("network_id")
    if not network_id:  # only a backend that ``runs_agent_containers`` gives one
        raise SandboxUnavailableError(
            f"an agent container needs a sandbox with a docker session network (backend {sandbox.backend!r} gave none)"
        )
    engine = client or _default_client()
    meta = sandbox.metadata
    launch = _Launch(name=f"apexvoice-agent-{meta['session_id']}")
    agent: AgentContainer | None = None
    labels = session_labels(str(meta.get("run_id", "")), str(meta["session_id"]), str(meta.get("task_id", "")))
    started = time.monotonic()
    creating: Future[None] = _pool.submit(_create_and_start, engine, launch, config, str(network_id), labels)
    try:
        await asyncio.shield(asyncio.wrap_future(creating))
        assert launch.address is not None and launch.container_id is not None
        try:
            ready_s = await wait_until_ready(
                lambda: _accepts(launch.address or "", config.port),
                timeout_s=config.ready_timeout_s,
                exit_reason=lambda: asyncio.wrap_future(_pool.submit(_exit_reason, engine, launch)),
                what=f"agent container {launch.name} ({config.image})",
            )
        except SandboxUnavailableError as exc:  # it was created and started: what it did is its own
            raise AgentStartFailed(str(exc)) from exc
        launch.timings["ready_s"] = round(ready_s, 4)
        launch.timings["start_to_ready_s"] = round(time.monotonic() - started, 4)
        agent = AgentContainer(
            url=f"ws://{launch.address}:{config.port}{config.path}",
            container_id=launch.container_id,
            name=launch.name,
            address=launch.address,
            image=config.image,
            timings=dict(launch.timings),
            mem_limit=config.mem_limit,
        )
        yield agent
    finally:
        ended = await asyncio.shield(asyncio.wrap_future(_pool.submit(_remove, engine, launch)))
        if agent is not None:
            agent.ended.update(ended)


async def _accepts(address: str, port: int) -> None:
    """One TCP connection to the agent's port (raises ``OSError`` until it listens)."""
    _, writer = await asyncio.wait_for(asyncio.open_connection(address, port), _PROBE_TIMEOUT_S)
    writer.close()
    with suppress(OSError):
        await writer.wait_closed()


# ---- blocking engine work (runs on the pool) -------------------------------------------------


def _create_and_start(
    client: Any, launch: _Launch, config: AgentContainerConfig, network_id: str, labels: dict[str, str]
) -> None:
    try:
        t0 = time.monotonic()
        try:
            container = client.containers.create(
                config.image,
                name=launch.name,
                hostname="agent",
                labels=labels,
                network=network_id,
                **_hosting_options(config),
                **hardened_create_options(config.limits),
            )
        except docker.errors.ImageNotFound as exc:
            raise AgentImageError(f"agent image {config.image} is not on this Docker engine: {exc}") from exc
        launch.container_id = container.id
        t1 = time.monotonic()
        container.start()
        container.reload()
        t2 = time.monotonic()
        launch.timings.update(create_s=round(t1 - t0, 4), start_s=round(t2 - t1, 4))
        if container.status not in ("created", "running"):  # it died at once (before it had an address)
            raise AgentStartFailed(f"agent container {launch.name} ({config.image}) exited while starting: "
                                       f"{_exit_reason(client, launch)}")
        networks = container.attrs["NetworkSettings"]["Networks"]
        if len(networks) != 1:
            raise SandboxUnavailableError(f"agent container {launch.name} is on {sorted(networks)}, not its session network alone")
        launch.address = next(iter(networks.values()))["IPAddress"] or None
        if launch.address is None:
            raise SandboxUnavailableError(f"agent container {launch.name} got no address on its network")
    except docker.errors.DockerException as exc:
        raise SandboxUnavailableError(f"agent container {launch.name} ({config.image}): {exc}") from exc
    finally:
        launch.done.set()


def _hosting_options(config: AgentContainerConfig) -> dict[str, Any]:
    """What a hosted adapter's container adds to the image's defaults (nothing for an agent image)."""
    options: dict[str, Any] = {}
    if config.command is not None:
        options["command"] = list(config.command)
    if config.read_only_mounts:
        options["volumes"] = {host: {"bind": inside, "mode": "ro"} for host, inside in config.read_only_mounts}
    if config.environment:
        options["environment"] = dict(config.environment)
    return options


def _exit_reason(client: Any, launch: _Launch) -> str | None:
    try:
        container = client.containers.get(launch.container_id)
    except docker.errors.NotFound:
        return "container is gone"
    if container.status in ("created", "running"):
        return None
    state = container.attrs.get("State", {})
    logs = container.logs(tail=20).decode(errors="replace").strip()
    return f"status {container.status}, exit code {state.get('ExitCode')}, OOM {state.get('OOMKilled')}: {logs}"


def _remove(client: Any, launch: _Launch) -> dict[str, Any]:
    """Remove the container, saying first how it was found (a bot killed by its memory limit only
    closes its socket: this is where the record learns why)."""
    launch.done.wait()
    ended: dict[str, Any] = {}
    if launch.container_id is not None:
        with suppress(docker.errors.DockerException, requests.exceptions.RequestException):
            state = client.api.inspect_container(launch.container_id).get("State", {})
            ended = {"status": state.get("Status"), "exit_code": state.get("ExitCode"),
                     "oom_killed": bool(state.get("OOMKilled"))}
    _force_remove(client, launch.container_id, launch.name)
    return ended


def _force_remove(client: Any, container_id: str | None, name: str) -> None:
    """Kill and remove the container (a create that failed half-way may still have named one)."""
    with suppress(docker.errors.NotFound):
        try:
            client.api.remove_container(container_id or name, force=True, v=True)
        except docker.errors.APIError as exc:
            log.warning("removing agent container %s failed (the sweeper will retry): %s", name, exc)


def run_to_completion(config: AgentContainerConfig, *, timeout_s: float, client: Any = None) -> tuple[int, bytes, bytes]:
    """Run ``config`` once, hardened as a session's agent container but on no network at all, and
    return its exit code, stdout and stderr. The container is always removed (killed first when it
    outlives ``timeout_s``). Blocking: for the CLI before the campaign, never a session's loop.

    Raises:
        AgentImageError: the image is not on the engine.
        TimeoutError: it did not exit within ``timeout_s``.
        SandboxUnavailableError: the engine failed.
    """
    name = f"apexvoice-agent-run-{uuid.uuid4().hex[:12]}"
    try:
        engine = client or _default_client()
    except docker.errors.DockerException as exc:
        raise SandboxUnavailableError(f"no Docker engine to run {config.image}: {exc}") from exc
    container = None
    try:
        try:
            container = engine.containers.create(
                config.image,
                name=name,
                hostname="agent",
                labels=session_labels("", name, ""),  # found by the orphan sweeper if the harness dies
                network_mode="none",
                **_hosting_options(config),
                **hardened_create_options(config.limits),
            )
        except docker.errors.ImageNotFound as exc:
            raise AgentImageError(f"agent image {config.image} is not on this Docker engine "
                                  f"(run `apex-voice images build`): {exc}") from exc
        container.start()
        try:
            status = container.wait(timeout=timeout_s)
        except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
            raise TimeoutError(f"container {name} ({config.image}) did not exit within {timeout_s:.0f} s") from None
        return (int(status["StatusCode"]), container.logs(stdout=True, stderr=False),
                container.logs(stdout=False, stderr=True))
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise SandboxUnavailableError(f"container {name} ({config.image}): {exc}") from exc
    finally:
        with suppress(requests.exceptions.RequestException):  # an engine gone: the sweeper removes it
            _force_remove(engine, container.id if container is not None else None, name)


def ensure_agent_image(image: str, *, client: Any = None) -> str:
    """Make sure ``image`` can run: one of ours (``apex-voice/<spec>``) is built when missing or built
    from other sources than this checkout; any other must already be on the engine.

    Returns one phrase for the user. Blocking (run it off the event loop).

    Raises:
        AgentImageError: the image is not on the engine and is not one this checkout builds.
    """
    from .image_build import (
        DEFAULT_PROJECT_ROOT,
        IMAGE_SPECS,
        LABEL_SOURCE_HASH,
        build_images,
        report_to_stderr,
    )
    from .project_sources import snapshot_paths

    engine = client or _default_client()
    repository, _, _tag = image.partition(":")
    spec = next((s for s in IMAGE_SPECS.values() if s.repository == repository), None)
    try:
        labels = engine.images.get(image).labels or {}
    except docker.errors.ImageNotFound:
        labels = None
    if spec is None:
        if labels is None:
            raise AgentImageError(
                f"agent image {image} is not on this Docker engine (there is no registry here: "
                "`docker build` or `docker load` it first)"
            )
        return f"agent image {image} present"
    checkout = (
        snapshot_paths(DEFAULT_PROJECT_ROOT, spec.source_packages).digest()
        if (DEFAULT_PROJECT_ROOT / "pyproject.toml").is_file()
        else None
    )
    if labels is not None and (checkout is None or labels.get(LABEL_SOURCE_HASH) == checkout):
        return f"agent image {image} current"
    if checkout is None:
        raise AgentImageError(f"agent image {image} is not built and this is no source checkout (run `apex-voice images build`)")
    report_to_stderr(f"agent image {image} is {'stale' if labels is not None else 'not built'}; building it now")
    build_images([spec.name], client=engine)
    return f"agent image {image} built"
