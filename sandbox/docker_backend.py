"""The ``docker`` backend: one hardened container per session on its own internal network.

The container runs ``apex-voice/mcp-server`` hardened as every sandbox container is
(:mod:`sandbox.hardening`, shared with agent containers): a read-only root filesystem, an init process
(zombies are reaped), tmpfs ``/tmp`` and ``/state`` (size-limited, noexec), all capabilities
dropped, no-new-privileges, a non-root uid and pids/memory/CPU limits. Its only network is a
per-session ``internal`` bridge (no egress) with a planned /28 (:mod:`sandbox.subnet_plan`), and the
host guard (:mod:`sandbox.host_guard`) stops it from connecting to the host. The control and agent
tokens are mounted read-only. The state journal lives in the ``/state`` tmpfs: a hung server's is read with
``docker exec``; a killed container's is gone with it (the session is then an infrastructure error).

Before the first session the image is checked against this checkout: an image built from other
``mcp_servers`` code than the one ``local`` would run is rebuilt (from a source checkout) or refused,
so the two backends never run different server code silently.

Containers are started ahead of need (:class:`~sandbox.warm_pool.WarmPool`, ``pool_size`` spares):
network and container are created and the server boots, empty, while the previous session runs; a
session takes one and uploads its public bundle through ``POST /control/load`` (so no task files
are mounted). Each container serves exactly one session and is removed when it ends; spares are
removed by :meth:`DockerBackend.aclose`, at interpreter exit, and otherwise by the orphan sweeper.

Docker SDK calls block, so they run on a dedicated thread pool. Teardown is submitted to that pool
and waits for provisioning to finish first: a session cancelled mid-start leaves nothing behind,
even when cancelled again during teardown (the interpreter joins the pool's threads at exit).
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any, TypeVar

import docker
import docker.errors
from docker.types import IPAMConfig, IPAMPool

from .backend import SandboxBackend, SandboxEnvironment
from .cleanup import sweep
from .control_client import ControlClient
from .errors import SandboxUnavailableError
from .hardening import ContainerLimits, hardened_create_options
from .host_guard import BRIDGE_PREFIX, HostGuard
from .labels import session_labels
from .project_sources import package_digest
from .public_files import read_public_files
from .readiness import wait_until_ready
from .session_files import CONTROL_SOCKET_NAME, STATE_FILE_NAME, SessionFiles
from .subnet_plan import SubnetPlanner, subnets_in_use
from .warm_pool import WarmPool

__all__ = ["DockerBackend", "DockerSandboxConfig"]

log = logging.getLogger(__name__)

T = TypeVar("T")

SERVER_PORT = 8080
TOKEN_MOUNT = "/run/secrets/token"
AGENT_TOKEN_MOUNT = "/run/secrets/agent-token"
CONTROL_MOUNT = "/run/control"
STATE_MOUNT = "/state"
_SUBNET_ATTEMPTS = 8
#: ``apexvoice.task`` of every container and network: created before the task is known.
POOLED_TASK_LABEL = "(loaded at start)"


@dataclass(frozen=True)
class DockerSandboxConfig:
    """Image and resource limits of one session's container."""

    image: str = "apex-voice/mcp-server:latest"
    user: str = "10001:10001"
    mem_limit: str = "256m"
    pids_limit: int = 64
    nano_cpus: int = 1_000_000_000
    tmpfs_size: str = "16m"
    state_size: str = "64m"  # the /state tmpfs (counted in mem_limit)
    nofile: int = 1024
    ready_timeout_s: float = 90.0  # python + mcp import on 1 CPU, on a loaded host
    subnet_pool: str | None = None  # default: $APEX_VOICE_SANDBOX_SUBNET_POOL or 10.213.0.0/16
    max_parallel_engine_calls: int = 32
    pool_size: int = 1  # containers booted ahead of need (0: every session starts cold)
    rebuild_stale_image: bool = True  # else refuse an image built from other server code

    @property
    def limits(self) -> ContainerLimits:
        return ContainerLimits(self.user, self.mem_limit, self.pids_limit, self.nano_cpus, self.tmpfs_size, self.nofile)


@dataclass
class _Session:
    """What one session created, filled in as it is created (teardown removes whatever exists).

    ``run_id`` is the run that started the container (a spare is started by the session before the
    one it serves: labels cannot change after creation); ``task_id`` is empty until a task is loaded.
    """

    id: str
    run_id: str
    task_id: str = ""
    files: SessionFiles | None = None
    subnet: IPv4Network | None = None
    network_id: str | None = None
    container_id: str | None = None
    address: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    provisioned: threading.Event = field(default_factory=threading.Event)

    @property
    def name(self) -> str:
        return f"apexvoice-{self.id}"


@dataclass
class _Spare:
    """A container being provisioned (or provisioned) on the engine thread pool, not yet loaded."""

    session: _Session
    provisioning: Future[None]


class DockerBackend(SandboxBackend):
    name = "docker"
    runs_agent_containers = True

    def __init__(self, config: DockerSandboxConfig | None = None, *, client: Any = None) -> None:
        self.config = config or DockerSandboxConfig()
        self._client = client
        self._planner = SubnetPlanner(self.config.subnet_pool)
        self._guard = HostGuard()
        self._pool = ThreadPoolExecutor(
            self.config.max_parallel_engine_calls, thread_name_prefix="apexvoice-docker"
        )
        self._prepared = False
        self._prepare_lock = threading.Lock()
        self._spares: WarmPool[_Spare] = WarmPool(
            lambda spare: self._destroy(spare.session), size=self.config.pool_size
        )
        atexit.register(self._spares.drain)

    @property
    def client(self) -> Any:
        if self._client is None:
            try:
                self._client = docker.from_env(
                    use_context=False, max_pool_size=self.config.max_parallel_engine_calls
                )
            except docker.errors.DockerException as exc:  # the engine did not answer the version probe
                raise SandboxUnavailableError(
                    f"no Docker engine answers ({_first_line(exc)}); start it, or use the local sandbox (--sandbox local)"
                ) from None
        return self._client

    def available(self) -> str | None:
        """``None`` when the engine answers and the image is current or can be built here."""
        try:
            self.client.ping()
        except Exception as exc:  # any failure to reach the engine
            return f"no Docker engine answers ({_first_line(exc)})"
        problem = self.image_problem()
        if problem is not None and not self._can_rebuild():
            return f"{problem}, and this is no source checkout to build it from (run `apex-voice images build`)"
        return None

    def describe_image(self) -> str:
        """One phrase for the user: is the image current, or will it be built first."""
        problem = self.image_problem()
        return f"image {self.config.image} current" if problem is None else f"{problem}: built before the first session"

    def image_problem(self) -> str | None:
        """Why the image cannot serve as is (missing, or built from other ``mcp_servers`` code)."""
        from .image_build import LABEL_SOURCE_HASH

        try:
            labels = self.client.images.get(self.config.image).labels or {}
        except docker.errors.ImageNotFound:
            return f"image {self.config.image} is not built"
        built_from, checkout = labels.get(LABEL_SOURCE_HASH), package_digest("mcp_servers")
        if checkout is not None and built_from != checkout:
            return (
                f"image {self.config.image} was built from other server code "
                f"({(built_from or 'unlabelled')[:12]}) than this checkout's ({checkout[:12]})"
            )
        return None

    def _can_rebuild(self) -> bool:
        from .image_build import DEFAULT_PROJECT_ROOT

        default_image = self.config.image == DockerSandboxConfig.image
        return self.config.rebuild_stale_image and default_image and (DEFAULT_PROJECT_ROOT / "pyproject.toml").is_file()

    async def _in_pool(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    async def aclose(self) -> None:
        """Remove every spare container and its network (sessions in progress keep theirs)."""
        await self._in_pool(self._spares.drain)

    def _spawn(self, run_id: str) -> _Spare:
        """Start provisioning an empty container on the engine pool; returns at once."""
        session = _Session(id=uuid.uuid4().hex[:12], run_id=run_id)
        return _Spare(session, self._pool.submit(self._provision, session))

    @asynccontextmanager
    async def start(
        self, public_dir: Path, run_id: str, *, task_id: str
    ) -> AsyncIterator[SandboxEnvironment]:
        started = time.monotonic()
        files = read_public_files(Path(public_dir))
        spare, warm = self._spares.take(lambda: self._spawn(run_id))
        session = spare.session
        control: ControlClient | None = None
        try:
            await asyncio.shield(asyncio.wrap_future(spare.provisioning))
            assert session.files is not None
            control = ControlClient("", session.files.token, uds=str(session.files.control_socket))
            ready_s = await wait_until_ready(
                control.health,
                timeout_s=self.config.ready_timeout_s,
                exit_reason=lambda: self._in_pool(self._exit_reason, session),
                what=f"container {session.name} ({task_id})",
            )
            await control.load(files)
            session.task_id = task_id
            session.timings["ready_s"] = round(ready_s, 4)
            session.timings["start_to_ready_s"] = round(time.monotonic() - started, 4)
            self._spares.refill(lambda: self._spawn(run_id))  # boots while this session runs
            yield SandboxEnvironment(
                mcp_url=f"http://{session.address}:{SERVER_PORT}/mcp",
                control=control,
                backend=self.name,
                read_persisted_state=lambda: self._in_pool(self._read_state, session),
                agent_token=session.files.agent_token,
                metadata={
                    **self._metadata(session),
                    "run_id": run_id,
                    "labelled_run_id": session.run_id,
                    "warm": warm,
                },
            )
        finally:
            try:
                if control is not None:
                    await control.aclose()
            finally:
                teardown = asyncio.get_running_loop().run_in_executor(self._pool, self._destroy, session)
                await asyncio.shield(teardown)

    def _metadata(self, session: _Session) -> dict[str, Any]:
        return {
            "run_id": session.run_id,
            "task_id": session.task_id,
            "session_id": session.id,
            "container_id": session.container_id,
            "network_id": session.network_id,
            "subnet": str(session.subnet),
            "address": session.address,
            "private_dir": str(session.files.root) if session.files is not None else None,
            "image": self.config.image,
            "host_guard": self._guard.ensure(),
            "timings": dict(session.timings),
        }

    # ---- blocking engine work (runs on the pool) -------------------------------------------------

    def _provision(self, session: _Session) -> None:
        try:
            self._prepare_once()
            self._guard.ensure()
            t0 = time.monotonic()
            session.files = SessionFiles.create(f"apexvoice-{session.id}-", for_container=True)
            t1 = time.monotonic()
            self._create_network(session)
            t2 = time.monotonic()
            container = self._run_container(session)
            t3 = time.monotonic()
            session.timings.update(
                files_s=round(t1 - t0, 4), network_s=round(t2 - t1, 4), container_s=round(t3 - t2, 4)
            )
            container.reload()
            networks = container.attrs["NetworkSettings"]["Networks"]
            session.address = networks[session.name]["IPAddress"]
            if not session.address:
                raise SandboxUnavailableError(f"container {session.name} got no address on its network")
        except docker.errors.DockerException as exc:
            raise SandboxUnavailableError(
                f"docker sandbox {session.name} for {session.task_id}: {exc}"
            ) from exc
        finally:
            session.provisioned.set()

    def prepare(self) -> None:
        self._prepare_once()

    def _prepare_once(self) -> None:
        """Before the first container: sweep orphans, then make sure the image runs this checkout."""
        with self._prepare_lock:
            if self._prepared:
                return
            report = sweep(client=self.client)
            if report.containers or report.networks or report.folders:
                log.info(
                    "swept orphaned sandboxes: %s containers, %s networks, %s private folders",
                    len(report.containers),
                    len(report.networks),
                    len(report.folders),
                )
            problem = self.image_problem()
            if problem is not None:
                if not self._can_rebuild():
                    raise SandboxUnavailableError(f"{problem}: run `apex-voice images build`")
                from .image_build import build_images, report_to_stderr

                report_to_stderr(f"{problem}; building it now")
                build_images(["mcp-server"], client=self.client)
            self._prepared = True

    def _create_network(self, session: _Session) -> None:
        labels = session_labels(session.run_id, session.id, POOLED_TASK_LABEL)
        candidates = self._planner.reserve(subnets_in_use(self.client.api.networks()))
        for _ in range(_SUBNET_ATTEMPTS):
            subnet = next(candidates)
            ipam = IPAMConfig(
                pool_configs=[IPAMPool(subnet=str(subnet), gateway=str(subnet.network_address + 1))]
            )
            try:
                network = self.client.networks.create(
                    session.name,
                    driver="bridge",
                    internal=True,
                    ipam=ipam,
                    labels=labels,
                    options={"com.docker.network.bridge.name": f"{BRIDGE_PREFIX}{session.id}"},
                )
            except docker.errors.APIError as exc:
                self._planner.release(subnet)
                if "overlap" in str(exc).lower():
                    continue  # another process took it between our listing and our create
                raise
            session.subnet = subnet
            session.network_id = network.id
            return
        raise SandboxUnavailableError(f"no free subnet for {session.name} after {_SUBNET_ATTEMPTS} attempts")

    def _run_container(self, session: _Session) -> Any:
        assert session.files is not None
        cfg = self.config
        uid, _, gid = cfg.user.partition(":")
        container = self.client.containers.create(
            cfg.image,
            command=[
                "python",
                "-m",
                "mcp_servers",
                "--host",
                "0.0.0.0",
                "--port",
                str(SERVER_PORT),
                "--token-file",
                TOKEN_MOUNT,
                "--agent-token-file",
                AGENT_TOKEN_MOUNT,
                "--control-socket",
                f"{CONTROL_MOUNT}/{CONTROL_SOCKET_NAME}",
                "--state-file",
                f"{STATE_MOUNT}/{STATE_FILE_NAME}",
            ],  # fmt: skip
            name=session.name,
            hostname="task",
            labels=session_labels(session.run_id, session.id, POOLED_TASK_LABEL),
            network=session.name,
            **hardened_create_options(
                cfg.limits,
                extra_tmpfs={
                    STATE_MOUNT: f"rw,noexec,nosuid,nodev,size={cfg.state_size},uid={uid},gid={gid},mode=0700"
                },
            ),
            volumes={
                str(session.files.token_file): {"bind": TOKEN_MOUNT, "mode": "ro"},
                str(session.files.agent_token_file): {"bind": AGENT_TOKEN_MOUNT, "mode": "ro"},
                # The control API's only listener: a socket in the private directory, so nothing on
                # the session network (a native agent container) can route to it.
                str(session.files.control_dir): {"bind": CONTROL_MOUNT, "mode": "rw"},
            },
        )
        session.container_id = container.id
        container.start()
        return container

    def _exit_reason(self, session: _Session) -> str | None:
        try:
            container = self.client.containers.get(session.container_id)
        except docker.errors.NotFound:
            return "container is gone"
        if container.status in ("created", "running"):
            return None
        state = container.attrs.get("State", {})
        logs = container.logs(tail=20).decode(errors="replace").strip()
        return f"status {container.status}, exit code {state.get('ExitCode')}, OOM {state.get('OOMKilled')}: {logs}"

    def _read_state(self, session: _Session) -> bytes:
        """The state journal from the container's ``/state`` tmpfs, read with ``docker exec``.

        Works while the container runs (a hung server); a stopped container's tmpfs is gone.
        """
        path = f"{STATE_MOUNT}/{STATE_FILE_NAME}"
        try:
            container = self.client.containers.get(session.container_id)
            if container.status != "running":
                raise SandboxUnavailableError(
                    f"no persisted state for {session.name}: the container is {container.status} "
                    "and its /state tmpfs went with it"
                )
            result = container.exec_run(["cat", path], user=self.config.user, demux=True)
        except docker.errors.DockerException as exc:
            raise SandboxUnavailableError(f"no persisted state for {session.name}: {exc}") from exc
        stdout, stderr = result.output
        if result.exit_code != 0:
            detail = (stderr or b"").decode(errors="replace").strip()
            raise SandboxUnavailableError(f"no persisted state for {session.name}: {detail or result.exit_code}")
        return stdout or b""

    def _destroy(self, session: _Session) -> None:
        session.provisioned.wait()
        errors: list[str] = []
        if session.container_id is not None:
            with suppress(docker.errors.NotFound):
                try:
                    self.client.api.remove_container(session.container_id, force=True, v=True)
                except docker.errors.APIError as exc:
                    errors.append(f"container: {exc}")
        if session.network_id is not None:
            with suppress(docker.errors.NotFound):
                try:
                    self.client.api.remove_network(session.network_id)
                except docker.errors.APIError as exc:
                    errors.append(f"network: {exc}")
        if session.subnet is not None:
            self._planner.release(session.subnet)
        if session.files is not None:
            session.files.remove()
        if errors:
            log.warning(
                "teardown of %s incomplete (the sweeper will retry): %s", session.name, "; ".join(errors)
            )


def _first_line(error: BaseException) -> str:
    """An engine error in one line (the SDK nests the cause of a refused connection several deep)."""
    text = str(error).strip().splitlines()
    return text[0][:200] if text else type(error).__name__
