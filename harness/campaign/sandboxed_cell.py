"""One campaign cell as a real session: its own sandbox, a fresh adapter, the duplex runner.

The task's public part is written to a temporary directory and served by a sandbox started for
this cell alone; leaving the cell always tears the sandbox down and removes the directory, whether
the session finished, failed or was cancelled. The task is loaded afresh for every session, so no
state leaks from one cell into another.

A model with an agent image (``container:IMAGE``; the native oracle under ``--sandbox docker``)
runs in its own container, started after the sandbox on the sandbox's network and removed with the
session (:mod:`sandbox.agent_container`); the harness reaches it through the OpenAI adapter on the
realtime clock (:class:`~harness.agents.container_agent.ContainerAgentAdapter`). An out-of-tree
adapter that is not trusted (``hosted_adapter``) is hosted the same way, per session: in an
adapter-host container with a docker sandbox, in a bubblewrap-sandboxed child process otherwise
(:mod:`harness.campaign.hosted_agent`, :mod:`harness.agents.adapter_process`). Every record says
where the agent ran (``agent_isolation``).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.agents.adapter_process import AdapterProcess, start_adapter_process
from harness.agents.model_endpoint import model_endpoint
from harness.agents.realtime import McpEndpoint, RealtimeAdapter
from harness.agents.registry import OPENAI_REALTIME_WIRE, ContainerWire, ModelSpec
from harness.blame.errors import AgentFailure
from harness.blame.origin_table import agent_start_failed
from harness.campaign.session_record import record_from_session
from harness.events import EventBus
from harness.grading.judge import SemanticJudge
from harness.results.measurement_identity import MeasurementIdentity, public_endpoint
from harness.results.result_record import ResultRecord
from harness.session.mcp_environment import McpEnvironment
from harness.session.session_config import ToolMode
from harness.tasks.bundle import TaskBundle
from harness.tasks.checksums import ChecksumManifest
from harness.tasks.loader import load_task
from sandbox.agent_container_config import AgentContainer, AgentContainerConfig
from sandbox.backend import SandboxBackend, SandboxEnvironment
from sandbox.errors import AgentImageError, AgentStartFailed
from sandbox.session_files import owned_temp_dir

from .hosted_agent import ADAPTER_HOST_IMAGE, agent_isolation, hosted_container_config
from .plan import CampaignCell

# The voice session, its audio and the Docker SDK load only where a cell uses them (a C0 campaign
# with in-tree agents on the local sandbox uses none: ~0.3 CPU-s of imports).
if TYPE_CHECKING:
    from harness.audio.acoustics import AcousticChain
    from harness.audio.speech_bank import SpeechSource
    from harness.user.llm_act_observer import LlmActClassifier

__all__ = ["SandboxedCellRunner", "SpeechFactory", "native_endpoint"]

#: Builds the simulated user's speech source for a task (from ``--user-audio``).
SpeechFactory = Callable[[TaskBundle], "SpeechSource"]


def native_endpoint(sandbox_env: SandboxEnvironment, public_url: str | None = None) -> McpEndpoint:
    """The endpoint a native agent is given: the sandbox's URL (or the public URL a tunnel serves it
    at, for a cloud provider's MCP client) and the session's agent token, which stays the guard."""
    return McpEndpoint(url=public_url or sandbox_env.mcp_url, headers=sandbox_env.mcp_headers())


@dataclass
class SandboxedCellRunner:
    """A :class:`~harness.campaign.campaign.CellRunner` that runs C2 sessions through a sandbox."""

    model: ModelSpec
    backend: SandboxBackend
    task_dirs: dict[str, Path]
    speech: SpeechFactory
    judge: SemanticJudge | None = None
    max_turns: int = 44
    seed: int = 1
    checksums: ChecksumManifest | None = None
    condition: str = "C2"
    #: C3: the degradations every user clip goes through.
    acoustics: AcousticChain | None = None
    tool_latency_ms: int = 0
    observer: LlmActClassifier | None = None
    #: ``bridge`` or ``native`` (the agent gets the sandbox's MCP endpoint and calls tools itself).
    tool_mode: ToolMode = "bridge"
    #: Native mode with a cloud provider: where the provider's MCP client reaches the sandbox
    #: (``run --mcp-public-url``: the user's tunnel or reverse proxy); ``None``: its own address.
    mcp_public_url: str | None = None
    #: Called with each session's event bus as it starts (a live view subscribes here).
    on_session: Callable[[CampaignCell, EventBus], None] | None = None
    #: Limits of agent containers (the image comes from the model).
    agent_limits: AgentContainerConfig | None = None
    #: Variables a hosted adapter is given (``run --adapter-env``); it inherits nothing else.
    adapter_env: dict[str, str] = field(default_factory=dict)
    _image_checked: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False)
    _image_ready: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        # Only a native agent (or a provider's client) calls tools on /mcp; the bridge calls them on
        # the control plane, so a bridging campaign's servers need not load the MCP SDK.
        self.backend.expects_mcp_clients = self.tool_mode == "native"

    async def __call__(self, cell: CampaignCell, rep_dir: Path) -> ResultRecord:
        try:
            task_dir = self.task_dirs[cell.task_id]
        except KeyError:
            raise KeyError(f"campaign cell {cell}: no task directory for {cell.task_id!r}") from None
        # Loading verifies checksums over megabytes of audio: off the loop, where other sessions run.
        bundle = await asyncio.to_thread(load_task, task_dir, checksums=self.checksums)
        run_id = uuid.uuid4().hex[:12]
        started = time.monotonic()
        # Owner-stamped: a SIGKILLed harness's copy is swept by the next one, like its tokens.
        with owned_temp_dir("apexvoice-public-") as public_root:
            public_dir = public_root / bundle.task_id
            await asyncio.to_thread(bundle.public_bundle(seed=self.seed).write, public_dir)
            async with (
                self.backend.start(public_dir, run_id, task_id=bundle.task_id) as sandbox_env,
                self.agent_container(sandbox_env) as agent,
                self.agent_process() as hosted,
            ):
                if isinstance(agent, AgentContainer):
                    sandbox_env.metadata["agent_container"] = agent.metadata()
                if hosted is not None and not isinstance(hosted, AgentFailure):
                    sandbox_env.metadata["agent_process"] = hosted.metadata()
                sandbox = {"backend": sandbox_env.backend, **sandbox_env.metadata}
                failed = next((a for a in (agent, hosted) if isinstance(a, AgentFailure)), None)
                async with McpEnvironment(sandbox_env) as env:
                    session = await self.run_session(cell, bundle, env, rep_dir / run_id, run_id, sandbox_env,
                                                     agent_failure=failed)
        return self.record(session, cell, wall_s=time.monotonic() - started, sandbox=sandbox)

    def identity(self, *, user_audio: str) -> MeasurementIdentity:
        """What this runner's cells measure, as the campaign records and compares it (it adds the plan).

        ``user_audio`` is the mode the speech sources were opened with (``run --user-audio``).
        """
        observer = self.observer.llm.model if self.observer is not None else None
        return MeasurementIdentity(
            model=self.model.key, provider_model=self.model.provider_model or None,
            endpoint=public_endpoint(model_endpoint(self.model)), condition=self.condition,
            acoustics=self.acoustics.identity_text() if self.acoustics is not None else "none", seed=self.seed,
            user_audio=user_audio, tool_mode=self.tool_mode, tool_latency_ms=self.tool_latency_ms,
            observer="deterministic" if observer is None else "llm", observer_model=observer,
            judge_model=self.judge.model if self.judge is not None else None, max_turns=self.max_turns,
        )

    @property
    def runs_in_container(self) -> bool:
        """The model runs from its image (its own, or the adapter host's), and the sandbox can start containers."""
        return self.agent_image is not None and self.backend.runs_agent_containers

    @property
    def agent_image(self) -> str | None:
        return ADAPTER_HOST_IMAGE if self.model.hosted_adapter is not None else self.model.agent_image

    @property
    def agent_isolation(self) -> str:
        return agent_isolation(self.model, containers=self.backend.runs_agent_containers)

    @asynccontextmanager
    async def agent_process(self) -> AsyncIterator[AdapterProcess | AgentFailure | None]:
        """The session's adapter host process (a hosted adapter, no docker sandbox), else ``None``.

        A host that exits or never listens is the hosted adapter's failure (``exited``), yielded
        for the session to grade and score, as an agent container's is.
        """
        if self.model.hosted_adapter is None or self.runs_in_container:
            yield None
            return
        async with AsyncExitStack() as stack:
            try:
                hosted: AdapterProcess | AgentFailure = await stack.enter_async_context(
                    start_adapter_process(self.model.hosted_adapter, env=self.adapter_env,
                                          task_dirs=self.task_dirs.values()))
            except AgentStartFailed as exc:
                failure = agent_start_failed(self.model.agent_kind, exc)
                if failure is None:
                    raise
                hosted = failure
            yield hosted

    @asynccontextmanager
    async def agent_container(
        self, sandbox_env: SandboxEnvironment
    ) -> AsyncIterator[AgentContainer | AgentFailure | None]:
        """The session's agent container when the model runs from its image, else ``None``.

        An agent's container that exits or never listens once started is the agent's failure
        (``exited``), yielded for the session to grade the untouched environment and score; never
        retried. The harness's own agent image (the native oracle) failing so stays the sandbox's.
        """
        if not self.runs_in_container:
            if self.model.container_only:
                raise AgentImageError(f"{self.model.key} runs only in a container: use --sandbox docker")
            yield None
            return
        from sandbox.agent_container import ensure_agent_image, start_agent_container

        image = self.agent_image
        assert image is not None
        async with self._image_checked:
            if not self._image_ready:
                await asyncio.to_thread(ensure_agent_image, image)
                self._image_ready = True
        config = replace(self.agent_limits or AgentContainerConfig(image=image), image=image, path=self._wire.path)
        if self.model.hosted_adapter is not None:
            config = hosted_container_config(self.model.hosted_adapter, config, task_dirs=self.task_dirs.values(),
                                             environment=self.adapter_env)
        elif self.model.container_only:  # the user's image: only what they passed (``run --adapter-env``)
            config = replace(config, environment=tuple(sorted(self.adapter_env.items())))
        async with AsyncExitStack() as stack:
            try:
                agent: AgentContainer | AgentFailure = await stack.enter_async_context(
                    start_agent_container(sandbox_env, config))
            except AgentStartFailed as exc:
                failure = agent_start_failed(self.model.agent_kind, exc)
                if failure is None:
                    raise
                agent = failure
            yield agent

    @property
    def _wire(self) -> ContainerWire:
        """What the agent's container or host process serves: a hosted adapter's host always speaks
        OpenAI Realtime; an image, what its model says."""
        return OPENAI_REALTIME_WIRE if self.model.hosted_adapter is not None else self.model.container_wire

    def create_adapter(self, sandbox_env: SandboxEnvironment) -> RealtimeAdapter:
        """A fresh adapter: the model's own, or the client of its agent container or host process."""
        agent = sandbox_env.metadata.get("agent_container") or sandbox_env.metadata.get("agent_process")
        if agent is None:
            return self.model.create_adapter()
        return self._wire.connect(agent["url"])

    async def run_session(
        self,
        cell: CampaignCell,
        bundle: TaskBundle,
        env: McpEnvironment,
        session_dir: Path,
        run_id: str,
        sandbox_env: SandboxEnvironment,
        *,
        agent_failure: AgentFailure | None = None,
    ) -> Any:
        """One session against the cell's sandboxed environment (voice here; C0 overrides it).

        ``agent_failure``: the agent already failed before its session could open; the session
        records it and grades the environment as it is.
        """
        from harness.session.duplex_runner import DuplexConfig, run_duplex_session

        adapter = self.create_adapter(sandbox_env)
        config = DuplexConfig(
            speech=self.speech(bundle),
            session_dir=session_dir,
            judge=self.judge,
            seed=self.seed,
            max_turns=self.max_turns,
            run_id=run_id,
            privileged=self.model.privileged,
            condition=self.condition,
            acoustics=self.acoustics,
            tool_latency_ms=self.tool_latency_ms,
            sandbox={"backend": sandbox_env.backend, **sandbox_env.metadata},
            observer=self.observer,
            tool_mode=self.tool_mode,
            mcp_endpoint=native_endpoint(sandbox_env, self.mcp_public_url) if self.tool_mode == "native" else None,
            on_bus=partial(self.on_session, cell) if self.on_session else None,
            agent_kind=self.model.agent_kind,
            agent_failure=agent_failure,
        )
        return await run_duplex_session(bundle, adapter, env, config)

    def record(self, session: Any, cell: CampaignCell, *, wall_s: float, sandbox: dict[str, Any]) -> ResultRecord:
        return record_from_session(session, rep=cell.rep, model=self.model.key, wall_s=wall_s, sandbox=sandbox,
                                   agent_isolation=self.agent_isolation)
