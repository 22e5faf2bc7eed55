"""The Ray campaign executor: each (task, repetition) cell as a Ray task on a node of a cluster.

``apex-voice run --executor ray [--ray-address ADDR]``: the CLI injects a :class:`RayExecutor`
into :func:`~.campaign.run_campaign` (a :class:`~.plan.CellExecutor`). A cell's isolation, grading,
files and blame are the local executor's; only where its session runs changes.

**A cell on a node.** The campaign's cell runner is described as a picklable
:class:`~.cell_payload.CellRecipe`; each task directory is put once into Ray's object store as a
:class:`~.cell_payload.TaskPackage` (nodes share no filesystem with the driver). A cell's Ray task
asks for one unit of the custom resource ``apex_sandbox`` (:data:`SANDBOX_RESOURCE`) and no CPU: a
node advertises how many sandboxes it hosts (``ray start --resources '{"apex_sandbox": 8}'``), and
only such nodes get cells. There :func:`~.cell_payload.run_cell_here` rebuilds the runner, starts
the sandbox with that node's backend (its Docker engine, with the same hardening; or the local
backend) and returns the record with the session's files, which the driver writes into the run
directory atomically, and the judge verdicts the cell's grading stood on, which the driver stores in
the campaign's one verdict store (first writer wins). The run directory is written only by the driver, so ``results``, ``watch``,
the TUI (settled cells; live session views need the session's bus, which stays on the node),
``regrade`` and resume see what the local executor leaves, and a driver that dies leaves a
directory that resumes.

**Concurrency** is limited from the driver, by in-flight tasks, not by a named actor: the campaign
holds its semaphore (``min(--parallel, the provider's max_concurrent_sessions)``) for as long as a
cell's Ray task is in flight, so no more sessions run anywhere on the cluster than that. The driver
submits every cell of the campaign and sees every task end — done, failed, or lost with its node —
so a permit can never leak with a dead worker, which an actor's permits taken on the nodes could;
and it costs no round trip. It does not coordinate two campaigns sharing one provider key: give
them limits that add up, as on one machine.

**Faults.** A failure of the cluster rather than of the cell (its node died, its worker crashed,
an object was lost, ...: any ``ray.exceptions.RayError`` other than the cell's own exception) is a
:class:`~harness.blame.errors.NodeLostError`, a transient ``SessionInfraError``: the campaign
retries the cell with backoff, wherever Ray schedules it (Ray's own retries are off, so every
attempt is counted in ``infra_errors`` and bounded by ``max_attempts``), and never scores it. A lost
attempt wrote nothing into the run directory, so no cell is lost or counted twice. The cell's own
exception comes back as itself (:mod:`.carried_error`) and is blamed as the local path blames it.
A cancelled campaign tells its running cells to stop through a small actor they poll
(:class:`CellStops`), and waits until each has torn its session down and returned; ``ray.cancel``
would resolve the task at once and let the worker die with the driver's connection mid-teardown.

**Secrets.** Provider keys and the judge's and observer's settings set on the driver reach the
nodes in the job's runtime environment (:func:`forwarded_env`), which Ray keeps in its control
store: use a cluster you trust with them, or set them on the nodes instead.

Ray is an optional extra (``pip install 'apex-voice[ray]'``) and is imported only here, only when
a campaign runs with this executor.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.agents.registry import ModelSpec
from harness.blame.errors import HarnessBug, NodeLostError
from harness.grading.judge_cache import JudgeCache, VerdictStore
from harness.results.result_record import ResultRecord
from harness.tasks.checksums import ChecksumManifest

from .cell_payload import CellRecipe, CellReturn, TaskPackage, run_cell_here
from .plan import CampaignCell, CampaignSettings, CellRunner

__all__ = [
    "RAY_INSTALL_HINT",
    "SANDBOX_RESOURCE",
    "CellStops",
    "RayCellRunner",
    "RayExecutor",
    "RayExecutorError",
    "forwarded_env",
    "ray_cells",
    "ray_installed",
]

log = logging.getLogger(__name__)

#: The custom resource a node advertises: how many sessions' sandboxes it hosts at once.
SANDBOX_RESOURCE = "apex_sandbox"
RAY_INSTALL_HINT = "the ray executor needs Ray: pip install 'apex-voice[ray]'"
#: A local Ray instance (no ``--ray-address``) binds here, so nothing listens beyond this machine.
LOOPBACK = "127.0.0.1"
#: How long a cancelled campaign waits for a cell's teardown on its node.
TEARDOWN_GRACE_S = 60.0
#: The judge's and observer's settings (``harness.chat_completions``, ``harness.user.llm_act_observer``).
_LLM_ENV = ("APEX_VOICE_LLM_API_KEY", "OPENAI_API_KEY", "APEX_VOICE_LLM_BASE_URL", "OPENAI_BASE_URL")


class RayExecutorError(RuntimeError):
    """The campaign cannot use Ray: not installed, the cluster does not answer, or hosts no sandbox."""


def ray_installed() -> bool:
    return importlib.util.find_spec("ray") is not None


def forwarded_env(model: ModelSpec) -> dict[str, str]:
    """The driver's variables a session may read on a node: the model's credentials and endpoint
    overrides (``*_REALTIME_URL``), a chat model's key variable, and the judge's and observer's
    settings (``APEX_VOICE_*``, the OpenAI key and base URL); only those that are set."""
    named = {*model.required_env, *_LLM_ENV, model.options.get("api_key_env") or ""}
    return {
        name: value for name, value in os.environ.items()
        if name in named or name.startswith("APEX_VOICE_") or name.endswith("_REALTIME_URL")
    }


class CellStops:
    """The cells a cancelled campaign asked to stop (a Ray actor, one per campaign, that cells poll)."""

    def __init__(self) -> None:
        self._stopped: set[str] = set()

    def stop(self, attempt: str) -> None:
        self._stopped.add(attempt)

    def stopped(self, attempt: str) -> bool:
        return attempt in self._stopped


def _cell_on_node(recipe: CellRecipe, package: TaskPackage, cell: CampaignCell, stops: Any, attempt: str) -> CellReturn:
    """The Ray task: run the cell here, until done or asked to stop; say which node ran it."""
    import ray
    from ray.exceptions import RayError

    async def stop_requested() -> bool:
        try:
            stopped: bool = await stops.stopped.remote(attempt)  # a Ray actor handle: untyped
        except RayError:
            # The actor is gone with the driver's node: if the driver is gone too, Ray ends this job's
            # workers; if not, the campaign still waits for this cell. Neither asked it to stop.
            return False
        return stopped

    returned = run_cell_here(recipe, package, cell, stop_requested=stop_requested)
    return replace(returned, node_id=ray.get_runtime_context().get_node_id())


def _join(address: str | None, sandboxes: int, env: dict[str, str]) -> bool:
    """Connect to the cluster (a new local instance on loopback when ``address`` is ``None``);
    ``True`` when this call connected, so the campaign disconnects (and stops a local instance) at its end."""
    import ray

    if ray.is_initialized():
        return False  # the caller's own connection (the Python API): use it, leave it open
    # Ray's own INFO/WARNING lines ("Started a local Ray instance", resource hints) are not the
    # campaign's: they show with --log-level debug only.
    debug = logging.getLogger().getEffectiveLevel() <= logging.DEBUG
    options: dict[str, Any] = {"log_to_driver": False, "runtime_env": {"env_vars": env} if env else None,
                               "logging_level": logging.DEBUG if debug else logging.ERROR}
    try:
        if address is None:
            ray.init(address="local", _node_ip_address=LOOPBACK, include_dashboard=False,
                     resources={SANDBOX_RESOURCE: sandboxes}, **options)
        else:
            ray.init(address=address, **options)
    except Exception as exc:  # noqa: BLE001  # Ray raises many kinds here; each means the same to us
        where = "start a local Ray instance" if address is None else f"join the Ray cluster at {address}"
        raise RayExecutorError(f"cannot {where}: {type(exc).__name__}: {exc}") from exc
    return True


def _check_capacity(address: str | None) -> None:
    import ray

    if ray.cluster_resources().get(SANDBOX_RESOURCE, 0) < 1:
        ray.shutdown()
        raise RayExecutorError(
            f"no node of the Ray cluster at {address or 'local'} advertises the {SANDBOX_RESOURCE} resource; "
            f"start nodes with: ray start --resources '{{\"{SANDBOX_RESOURCE}\": N}}'"
        )


@dataclass(frozen=True)
class RayExecutor:
    """The :class:`~.plan.CellExecutor` that runs cells on a Ray cluster.

    ``address``: the cluster to join (``host:port``, ``ray://host:port``, ``auto``); ``None``
    starts a local instance on loopback for the campaign.
    """

    address: str | None = None

    def __call__(self, settings: CampaignSettings, run_cell: CellRunner) -> AbstractAsyncContextManager[CellRunner]:
        return ray_cells(settings, run_cell, address=self.address)


@asynccontextmanager
async def ray_cells(settings: CampaignSettings, run_cell: Any, *, address: str | None = None) -> AsyncIterator[RayCellRunner]:
    """The campaign's cells through Ray for the duration of the block; ``run_cell`` is the local
    runner they are built from (a :class:`~.sandboxed_cell.SandboxedCellRunner`)."""
    if not ray_installed():
        raise RayExecutorError(RAY_INSTALL_HINT)
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    try:
        recipe = CellRecipe.of(run_cell, user_audio=settings.measured.user_audio)
    except TypeError as exc:
        raise RayExecutorError(str(exc)) from None
    joined = await asyncio.to_thread(_join, address, settings.parallel, forwarded_env(settings.model))
    try:
        await asyncio.to_thread(_check_capacity, address)
        remote = ray.remote(_cell_on_node).options(
            num_cpus=0, resources={SANDBOX_RESOURCE: 1}, max_retries=0, retry_exceptions=False
        )
        # On the driver's node, so that losing any other node leaves it (and every cell's poll) alone.
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        stops = ray.remote(CellStops).options(num_cpus=0, scheduling_strategy=here).remote()
        judge = run_cell.judge
        yield RayCellRunner(recipe, dict(run_cell.task_dirs), run_cell.checksums, remote, stops,
                            verdicts=judge.cache if judge is not None else None)
    finally:
        if joined:
            await asyncio.to_thread(ray.shutdown)


@dataclass
class RayCellRunner:
    """A :class:`~.campaign.CellRunner` whose sessions run as Ray tasks; see the module doc."""

    recipe: CellRecipe
    task_dirs: dict[str, Path]
    checksums: ChecksumManifest | None
    #: ``_cell_on_node`` as a Ray remote function, with its resource options.
    remote: Any
    #: The campaign's :class:`CellStops` actor.
    stops: Any
    #: The campaign's verdict store (the driver's judge cache), where the verdicts a node brings
    #: back land; ``None``: the default judge cache (``$APEX_VOICE_JUDGE_CACHE``).
    verdicts: VerdictStore | None = None
    _packages: dict[str, Any] = field(default_factory=dict, init=False, repr=False)
    _packing: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False)

    async def __call__(self, cell: CampaignCell, rep_dir: Path) -> ResultRecord:
        package = await self._package(cell)
        attempt = f"{cell}#{uuid.uuid4().hex}"
        returned = await _outcome(self.remote.remote(self.recipe, package, cell, self.stops, attempt),
                                  stop=lambda: self.stops.stop.remote(attempt))
        record = await asyncio.to_thread(returned.land, rep_dir)
        await self._store_verdicts(cell, returned.verdicts)
        return record

    async def _store_verdicts(self, cell: CampaignCell, verdicts: dict[str, bool]) -> None:
        """The node's verdicts into the campaign's store, before the cell's record is written (a
        ``regrade`` that reads the record finds them). A key the store already decided otherwise
        keeps its first verdict, as anywhere; the disagreement is logged."""
        if not verdicts:
            return
        if self.verdicts is None:
            self.verdicts = JudgeCache()
        store = self.verdicts
        for key, verdict in verdicts.items():
            if await store.aput(key, verdict) != verdict:
                log.warning("%s: the node graded with judge verdict %s for key %s, but the campaign's store holds "
                            "the other one (first writer wins); `apex-voice regrade` settles it", cell, verdict, key)

    async def _package(self, cell: CampaignCell) -> Any:
        """The task's package in the object store, put there once (by the first of its cells)."""
        import ray

        async with self._packing:
            if cell.task_id not in self._packages:
                try:
                    task_dir = self.task_dirs[cell.task_id]
                except KeyError:
                    raise KeyError(f"campaign cell {cell}: no task directory for {cell.task_id!r}") from None
                package = await asyncio.to_thread(TaskPackage.pack, cell.task_id, task_dir, self.checksums)
                self._packages[cell.task_id] = await asyncio.to_thread(ray.put, package)
            return self._packages[cell.task_id]


async def _outcome(ref: Any, *, stop: Callable[[], object]) -> CellReturn:
    """What the cell's task returned; a cluster failure as :class:`~harness.blame.errors.NodeLostError`, the task's own
    exception unwrapped from Ray's ``RayTaskError``. Cancelled, it stops the cell and waits
    (at most :data:`TEARDOWN_GRACE_S`) for the node to tear the session down."""
    from ray import exceptions as rx

    future = asyncio.wrap_future(ref.future())
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        stop()
        await _torn_down(future)
        raise
    except rx.RayTaskError as exc:
        cause = exc.cause
        if isinstance(exc, rx.TaskCancelledError) or isinstance(cause, rx.RayError | KeyboardInterrupt):
            # Cancelled by someone else (``ray job stop``) or failed by Ray itself, inside the task.
            raise NodeLostError(f"the cluster lost the cell: {_first_line(exc)}") from exc
        if cause is None:
            raise HarnessBug(f"the cell's task failed without an exception that crossed: {_first_line(exc)}") from exc
        raise cause from None
    except rx.RayError as exc:
        raise NodeLostError(f"the cluster lost the cell: {type(exc).__name__}: {_first_line(exc)}") from exc


async def _torn_down(future: asyncio.Future[CellReturn]) -> None:
    """Wait for a stopped cell's task to end, at most :data:`TEARDOWN_GRACE_S`, however often the
    campaign cancels us meanwhile (it cancels every cell again while it waits for them)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TEARDOWN_GRACE_S
    while not future.done() and loop.time() < deadline:
        try:
            await asyncio.wait([future], timeout=deadline - loop.time())
        except asyncio.CancelledError:
            continue
    if future.done() and not future.cancelled():
        future.exception()  # retrieved: the cell's end does not matter any more


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0]
