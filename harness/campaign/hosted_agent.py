"""Where the agent under test runs, as ``result.json`` records it, and how an out-of-tree adapter
is hosted out of the harness's process (``--model package.module:Class`` without
``--trust-adapter``).

``agent_isolation`` is ``builtin`` for the harness's own adapters (built-ins and provider clients:
our code in our process), ``container`` for an agent running in its own hardened container,
``process`` for one behind the protocol in another process (a hosted adapter's sandboxed child process; a
``ws://`` server), and ``in-process`` for an agent author's adapter loaded into the harness with
``--trust-adapter`` — where it shares the harness's memory and files (docs/security.md).

With a docker sandbox a hosted adapter runs in the ``adapter-host`` image: hardened like every
agent container (:mod:`sandbox.agent_container`), on the session's internal network, with the
adapter's top-level package bind-mounted read-only at ``/opt/adapter/<name>`` and nothing else
mounted. A package whose directory holds a task of the campaign is refused: the mount would bring
that task's files into the container. Where no OS sandbox can be made for the CLI's probe of the
adapter (:func:`~harness.agents.adapter_process.probe_adapter`), :func:`probe_hosted_in_container`
loads it in that same container, on no network at all: its code never runs on the host.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from harness.agents.adapter_process import (
    READY_TIMEOUT_S,
    AdapterLoadError,
    HostedDescription,
    check_answer,
    host_command,
)
from harness.agents.adapter_source import AdapterSourceError, hosted_source
from harness.agents.registry import ModelSpec
from sandbox.agent_container_config import AGENT_PORT, AgentContainerConfig

__all__ = ["ADAPTER_HOST_IMAGE", "agent_isolation", "hosted_container_config", "probe_hosted_in_container"]

#: The generic host image (``sandbox/image_build.py`` builds it as ``adapter-host``).
ADAPTER_HOST_IMAGE = "apex-voice/adapter-host:latest"
#: Where the adapter's package is mounted (on the image's ``PYTHONPATH``).
ADAPTER_MOUNT_ROOT = "/opt/adapter"
#: The host's options in a session: it serves the agent port.
_SERVE = ("--host", "0.0.0.0", "--port", str(AGENT_PORT))


def agent_isolation(model: ModelSpec, *, containers: bool) -> str:
    """How the agent's code is kept from the harness: ``builtin``, ``process``, ``container`` or ``in-process``.

    ``containers``: the sandbox backend runs agent containers (``SandboxBackend.runs_agent_containers``).
    """
    if model.hosted_adapter is not None:
        return "container" if containers else "process"
    if model.agent_image is not None and (containers or model.container_only):
        return "container"
    if model.agent_kind == "external_code":
        return "in-process"
    if model.agent_kind == "remote_agent":
        return "process"
    return "builtin"


def hosted_container_config(
    target: str, base: AgentContainerConfig, *, task_dirs: Iterable[Path] = (), environment: dict[str, str] | None = None,
    options: tuple[str, ...] = _SERVE,
) -> AgentContainerConfig:
    """The agent container that hosts ``target``: the adapter-host image, the adapter's package
    mounted read-only, the host's command naming it (with ``options``: serving, by default).

    Raises:
        AdapterLoadError: the package cannot be found, or it holds one of ``task_dirs``.
    """
    try:
        source = hosted_source(target, task_dirs)
    except AdapterSourceError as exc:
        raise AdapterLoadError(str(exc)) from None
    return replace(
        base, image=ADAPTER_HOST_IMAGE, command=tuple(host_command(target, *options, python="python")),
        read_only_mounts=((str(source.path), f"{ADAPTER_MOUNT_ROOT}/{source.path.name}"),),
        environment=tuple(sorted((environment or {}).items())),
    )


def probe_hosted_in_container(
    target: str, *, task_dirs: Iterable[Path] = (), environment: dict[str, str] | None = None
) -> HostedDescription:
    """Load ``target`` once in the adapter-host container, as a session's (hardened, the package
    alone mounted read-only) but with no network, and say what it is. Blocking: the CLI's probe
    under ``--sandbox docker`` where no OS sandbox can be made for it.

    Raises:
        AdapterLoadError: as :func:`~harness.agents.adapter_process.probe_adapter`.
        AgentImageError: the adapter-host image is not on the engine and cannot be built here.
        SandboxUnavailableError: the Docker engine failed.
    """
    from sandbox.agent_container import ensure_agent_image, run_to_completion  # the Docker SDK: only here

    ensure_agent_image(ADAPTER_HOST_IMAGE)  # built when missing or stale, as the sessions' would be
    config = hosted_container_config(target, AgentContainerConfig(image=ADAPTER_HOST_IMAGE), task_dirs=task_dirs,
                                     environment=environment, options=("--check",))
    try:
        exit_code, stdout, stderr = run_to_completion(config, timeout_s=READY_TIMEOUT_S)
    except TimeoutError:
        raise AdapterLoadError(f"adapter {target!r} did not load within {READY_TIMEOUT_S:.0f} s") from None
    return check_answer(target, exit_code, stdout, stderr)
