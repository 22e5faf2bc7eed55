"""What a campaign cell needs to run on another machine, and what it brings back: all picklable.

The Ray executor (:mod:`.ray_executor`) runs cells on nodes that share no filesystem with the
machine that started the campaign. A :class:`~.sandboxed_cell.SandboxedCellRunner` holds live
things that cannot cross a process boundary (a sandbox backend, speech sources, a judge and an
observer with HTTP clients, a live view's callback), so the campaign describes it as a
:class:`CellRecipe` (its plain settings, the backend's name, the user-audio mode, and the identity it
measures, which the runner rebuilt on the node must match) and each task
directory as a :class:`TaskPackage` (its files and their dataset checksums). On the node,
:func:`run_cell_here` rebuilds the same runner from them, runs the session in a private folder with
that node's sandbox backend, and returns a :class:`CellReturn`: the record and the session's files
as bytes, or the cell's exception (:mod:`.carried_error`). The campaign writes them into the run
directory (:meth:`CellReturn.land`), whose layout is then the local executor's.

What travels is declared, not derived: the runner's plain settings are the fields of
:class:`RunnerSettings` (an allow-list), its live parts are :data:`REBUILT_ON_NODE`, and a runner
field that is neither is refused by :meth:`CellRecipe.of` — a new live field can neither break
pickling nor ship silently, and a new setting cannot be dropped silently either.

The judge verdicts a cell's grading stood on come back with it (:attr:`CellReturn.verdicts`) and
land in the campaign's one verdict store on the driver, so ``regrade`` there finds them and the
first verdict for a key wins campaign-wide.

Nothing the cell started outlives it on the node: the runner's own teardown removes the sandbox
(and agent container), the backend's warm spares are removed after every cell, and the private
folder — task copy and session files — is removed once packed. The backend itself is one per worker
process (:func:`worker_backend`): a reused Ray worker does not pile up backends, each holding its
engine thread pool alive through its exit hook. A killed node's leftovers carry the dead worker as
their owner and are swept by the next harness there (``sandbox.cleanup``).
"""

from __future__ import annotations

import asyncio
import io
import os
import pickle
import shutil
import tarfile
import threading
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, fields
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from harness.agents.registry import ModelSpec
from harness.atomic_write import atomic_write_bytes
from harness.blame.errors import HarnessBug, SessionInfraError
from harness.grading.judge import SemanticJudge
from harness.grading.judge_cache import WitnessedVerdicts
from harness.results.measurement_identity import MeasurementIdentity
from harness.results.result_record import ResultRecord
from harness.session.session_config import ToolMode
from harness.tasks.bundle import TaskBundle
from harness.tasks.checksums import ChecksumManifest
from harness.user.llm_act_observer import LlmActClassifier
from sandbox.agent_container_config import AgentContainerConfig
from sandbox.backend import SandboxBackend, get_backend
from sandbox.session_files import owned_temp_dir

from .carried_error import pack_exception, unpack_exception
from .plan import CampaignCell
from .sandboxed_cell import SandboxedCellRunner

if TYPE_CHECKING:  # audio loads on a node only for a cell that speaks
    from harness.audio.acoustics import AcousticChain
    from harness.audio.speech_bank import SpeechSource

__all__ = ["REBUILT_ON_NODE", "CellRecipe", "CellReturn", "RunnerSettings", "TaskPackage", "run_cell_here",
           "worker_backend"]

#: How often a running cell asks whether the campaign was cancelled (see :func:`run_cell_here`).
STOP_POLL_S = 0.5
#: Says whether the campaign asked the cell to stop.
StopCheck = Callable[[], Awaitable[bool]]
#: Runner fields that are live objects (or the node's own: its task copy and checksums), rebuilt
#: there, never shipped. The model travels as :attr:`CellRecipe.model`.
REBUILT_ON_NODE = frozenset({"backend", "task_dirs", "speech", "judge", "checksums", "observer", "on_session"})


@dataclass(frozen=True)
class RunnerSettings:
    """The runner's plain settings that travel to a node: the allow-list (every field picklable)."""

    max_turns: int
    seed: int
    condition: str
    acoustics: AcousticChain | None
    tool_latency_ms: int
    tool_mode: ToolMode
    mcp_public_url: str | None
    agent_limits: AgentContainerConfig | None
    adapter_env: dict[str, str]

    @classmethod
    def of(cls, runner: SandboxedCellRunner) -> RunnerSettings:
        """The runner's settings; ``TypeError`` names a runner field declared neither here nor in
        :data:`REBUILT_ON_NODE` (it would otherwise be dropped, or shipped, without anyone deciding)."""
        shipped = {f.name for f in fields(cls)}
        undeclared = sorted(f.name for f in fields(runner)
                            if f.init and f.name not in shipped | REBUILT_ON_NODE | {"model"})
        if undeclared:
            raise TypeError(f"{type(runner).__name__} field(s) {', '.join(undeclared)} are neither sent to a node "
                            "(cell_payload.RunnerSettings) nor rebuilt there (cell_payload.REBUILT_ON_NODE): "
                            "declare each in one of them")
        return cls(**{name: getattr(runner, name) for name in shipped})

    def as_kwargs(self) -> dict[str, object]:
        """The settings as the runner's keyword arguments (each value as it is: not ``asdict``'s copies)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


_worker_backends: dict[str, SandboxBackend] = {}
_worker_backends_lock = threading.Lock()


def worker_backend(name: str) -> SandboxBackend:
    """This process's one sandbox backend called ``name``, made and prepared by its first cell.

    Blocking (it may build an image). Every later cell in the worker reuses it: a backend per cell
    would leave each one alive with its engine thread pool (its exit hook holds it).
    """
    with _worker_backends_lock:
        backend = _worker_backends.get(name)
        if backend is None:
            backend = get_backend(name)
            backend.prepare()
            _worker_backends[name] = backend
        return backend


def _tar(root: Path, files: list[Path]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path in files:
            archive.add(path, arcname=path.relative_to(root).as_posix(), recursive=False)
    return buffer.getvalue()


def _regular_files(root: Path) -> list[Path]:
    """Every regular file under ``root`` (symlinks are not ours to ship), in a stable order."""
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def _untar(archive: bytes, into: Path) -> list[Path]:
    """Write an archive's regular files under ``into``, each atomically; anything else is refused."""
    written: list[Path] = []
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r") as tar:
        for member in tar:
            name = PurePosixPath(member.name)
            if not member.isfile() or name.is_absolute() or ".." in name.parts:
                raise ValueError(f"refusing archive member {member.name!r}: only relative regular files travel")
            source = tar.extractfile(member)
            assert source is not None  # a regular file always has content
            written.append(atomic_write_bytes(into.joinpath(*name.parts), source.read()))
    return written


@dataclass(frozen=True)
class TaskPackage:
    """One task directory as bytes, with the checksums its dataset publishes for its files."""

    task_id: str
    #: Where the directory sits in its dataset (``tasks/<name>``), which is where the checksums expect it.
    rel_dir: str
    archive: bytes
    #: The dataset's digests of this directory's files (empty: the dataset has none).
    digests: dict[str, str] = field(default_factory=dict)

    @classmethod
    def pack(cls, task_id: str, task_dir: Path, checksums: ChecksumManifest | None) -> TaskPackage:
        task_dir = Path(task_dir)
        if checksums is None:
            rel_dir, digests = task_dir.name, {}
        else:
            rel_dir = task_dir.resolve().relative_to(checksums.root.resolve()).as_posix()
            digests = checksums.digests_under(task_dir)
        return cls(task_id, rel_dir, _tar(task_dir, _regular_files(task_dir)), digests)

    def unpack(self, root: Path) -> tuple[Path, ChecksumManifest | None]:
        """The task directory recreated under ``root``, and the checksums to load it with."""
        task_dir = root.joinpath(*PurePosixPath(self.rel_dir).parts)
        _untar(self.archive, task_dir)
        return task_dir, (ChecksumManifest(root, dict(self.digests)) if self.digests else None)


@dataclass(frozen=True)
class CellRecipe:
    """A :class:`SandboxedCellRunner` (or subclass, e.g. the C0 text cell) without its live parts.

    It carries the runner's :class:`~harness.results.measurement_identity.MeasurementIdentity`:
    the node builds its judge and act observer from its own environment as the identity says, and
    refuses to run a cell whose rebuilt runner measures something else (a node without the
    driver's keys, another observer model, endpoint or harness version).
    """

    runner_class: type[SandboxedCellRunner]
    model: ModelSpec
    #: The backend the campaign chose (``local``, ``docker``): each node starts its own of that name.
    sandbox: str
    user_audio: str
    #: The runner's plain settings (turns, seed, condition, acoustics, tool mode, agent limits, ...).
    settings: RunnerSettings
    #: What the runner measures on the driver; the node's runner must measure the same.
    identity: MeasurementIdentity

    @classmethod
    def of(cls, runner: object, *, user_audio: str) -> CellRecipe:
        if not isinstance(runner, SandboxedCellRunner):
            raise TypeError(f"the ray executor runs the harness's sandboxed cells, not a {type(runner).__name__}")
        recipe = cls(type(runner), runner.model, runner.backend.name, user_audio, RunnerSettings.of(runner),
                     runner.identity(user_audio=user_audio))
        try:
            pickle.dumps(recipe)
        except Exception as exc:  # noqa: BLE001  # name the setting that cannot travel, whatever the reason
            raise TypeError(f"the cell runner's settings cannot be sent to a node: {exc}") from None
        return recipe

    def build(self, backend: SandboxBackend, task_dirs: dict[str, Path],
              checksums: ChecksumManifest | None) -> SandboxedCellRunner:
        """The runner on this node; :class:`SessionInfraError` when it would measure another identity.

        Its judge's verdicts are witnessed (:class:`~harness.grading.judge_cache.WitnessedVerdicts`),
        so the cell can bring back those its grading stood on.
        """
        mode = self.user_audio

        def speech(bundle: TaskBundle) -> SpeechSource:
            from harness.audio.espeak import user_voice
            from harness.audio.speech_bank import open_speech_source

            voice = user_voice(bundle.persona.get("voice_id"))
            return open_speech_source(bundle.task_dir, mode, voice=voice, task_id=bundle.task_id)

        judge = SemanticJudge.from_env() if self.identity.judge_model is not None else None
        if judge is not None and judge.cache is not None:
            judge.cache = WitnessedVerdicts(judge.cache)
        runner = self.runner_class(
            model=self.model, backend=backend, task_dirs=task_dirs, speech=speech, checksums=checksums, judge=judge,
            observer=LlmActClassifier.from_env() if self.identity.observer == "llm" else None,
            **self.settings.as_kwargs(),  # type: ignore[arg-type]  # RunnerSettings' fields are runner fields
        )
        differences = self.identity.differences(runner.identity(user_audio=mode))
        if differences:
            raise SessionInfraError(
                f"this node would measure another identity than the campaign's ({'; '.join(map(str, differences))}): "
                "give it the driver's keys, APEX_VOICE_OBSERVER_MODEL and *_REALTIME_URL, and the driver's harness version")
        return runner


@dataclass(frozen=True)
class CellReturn:
    """What a node sends back for one cell: its record and files, or the exception it raised."""

    record: ResultRecord | None = None
    #: The cell's folder (its session directory) as a tar of regular files.
    files: bytes = b""
    failure: bytes | None = None
    #: The campaign asked the cell to stop, and it did: its session was cancelled and torn down.
    stopped: bool = False
    #: Which node ran it (set by the executor), recorded in the record's ``sandbox`` metadata.
    node_id: str | None = None
    #: The judge verdicts its grading stood on (key → verdict), for the campaign's own store.
    verdicts: dict[str, bool] = field(default_factory=dict)

    def land(self, rep_dir: Path) -> ResultRecord:
        """Write the cell's files into ``rep_dir`` and return its record; raise the cell's own
        exception if it failed.

        The files are written, each atomically, into a staging folder beside them that is then
        renamed into place, so a reader (``watch``, resume) sees a session directory whole or not at all.
        """
        if self.failure is not None:
            raise unpack_exception(self.failure)
        if self.stopped:
            raise HarnessBug("the cell stopped on its node without the campaign asking it to")
        assert self.record is not None
        staging = rep_dir / f".incoming-{uuid.uuid4().hex[:8]}"
        try:
            _untar(self.files, staging)
            for entry in sorted(staging.iterdir()) if staging.is_dir() else []:
                os.replace(entry, rep_dir / entry.name)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        if self.node_id is None:
            return self.record
        return self.record.model_copy(update={"sandbox": {**self.record.sandbox, "node_id": self.node_id}})


def run_cell_here(
    recipe: CellRecipe, package: TaskPackage, cell: CampaignCell, *, stop_requested: StopCheck | None = None
) -> CellReturn:
    """Run one cell on this machine (a Ray worker) from what the campaign sent; see the module doc.

    ``stop_requested`` is asked every :data:`STOP_POLL_S` whether the campaign was cancelled; once
    it says so, the session is cancelled, its teardown removes its sandbox, and the cell returns
    ``stopped`` — only then, so whoever waits for the cell knows its node is clean. (Not
    ``ray.cancel``: it resolves the task as cancelled at once, and the worker is killed with the
    campaign's connection while its teardown may still be running.)
    """

    async def main() -> CellReturn:
        session = asyncio.ensure_future(_run_cell_here(recipe, package, cell))
        watch = asyncio.ensure_future(_stop_when_asked(stop_requested, session)) if stop_requested else None
        try:
            return await session
        except asyncio.CancelledError:
            if watch is None or not watch.done():
                raise
            return CellReturn(stopped=True)
        finally:
            if watch is not None:
                watch.cancel()

    return asyncio.run(main())


async def _stop_when_asked(stop_requested: StopCheck, session: asyncio.Future[CellReturn]) -> None:
    while not await stop_requested():
        await asyncio.sleep(STOP_POLL_S)
    session.cancel()


async def _run_cell_here(recipe: CellRecipe, package: TaskPackage, cell: CampaignCell) -> CellReturn:
    try:
        with owned_temp_dir("apexvoice-cell-") as root:
            task_dir, checksums = await asyncio.to_thread(package.unpack, root / "dataset")
            rep_dir = cell.rep_dir(root / "out")
            backend = await asyncio.to_thread(worker_backend, recipe.sandbox)
            try:
                runner = recipe.build(backend, {cell.task_id: task_dir}, checksums)
                record = await runner(cell, rep_dir)
            finally:
                await backend.aclose()  # its warm spares: the next cell here may be hours away
            files = await asyncio.to_thread(lambda: _tar(rep_dir, _regular_files(rep_dir)))
        witnessed = runner.judge.cache if runner.judge is not None else None
        verdicts = dict(witnessed.verdicts) if isinstance(witnessed, WitnessedVerdicts) else {}
        return CellReturn(record=record, files=files, verdicts=verdicts)
    except BaseException as exc:
        task = asyncio.current_task()
        if isinstance(exc, asyncio.CancelledError) and task is not None and task.cancelling() > 0:
            raise  # the campaign asked the cell to stop: its teardown ran above
        return CellReturn(failure=pack_exception(exc, where=f"on the node that ran {cell}"))
