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

Nothing the cell started outlives it on the node: the runner's own teardown removes the sandbox
(and agent container), the backend is closed with its warm spares, and the private folder — task
copy and session files — is removed once packed. A killed node's leftovers carry the dead worker as
their owner and are swept by the next harness there (``sandbox.cleanup``).
"""

from __future__ import annotations

import asyncio
import io
import os
import pickle
import shutil
import tarfile
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, fields
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from harness.agents.registry import ModelSpec
from harness.atomic_write import atomic_write_bytes
from harness.errors import HarnessBug, SessionInfraError
from harness.grading.judge import SemanticJudge
from harness.results.measurement_identity import MeasurementIdentity
from harness.results.result_record import ResultRecord
from harness.tasks.bundle import TaskBundle
from harness.tasks.checksums import ChecksumManifest
from harness.user.llm_act_observer import LlmActClassifier
from sandbox.backend import SandboxBackend, get_backend
from sandbox.session_files import owned_temp_dir

from .campaign import CampaignCell
from .carried_error import pack_exception, unpack_exception
from .sandboxed_cell import SandboxedCellRunner

if TYPE_CHECKING:  # audio loads on a node only for a cell that speaks
    from harness.audio.speech_bank import SpeechSource

__all__ = ["CellRecipe", "CellReturn", "TaskPackage", "run_cell_here"]

#: How often a running cell asks whether the campaign was cancelled (see :func:`run_cell_here`).
STOP_POLL_S = 0.5
#: Says whether the campaign asked the cell to stop.
StopCheck = Callable[[], Awaitable[bool]]
#: Runner fields that are live objects: rebuilt on the node, never shipped.
_REBUILT_ON_NODE = frozenset({"model", "backend", "task_dirs", "speech", "judge", "checksums", "observer", "on_session"})


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
    settings: dict[str, Any]
    #: What the runner measures on the driver; the node's runner must measure the same.
    identity: MeasurementIdentity

    @classmethod
    def of(cls, runner: Any, *, user_audio: str) -> CellRecipe:
        if not isinstance(runner, SandboxedCellRunner):
            raise TypeError(f"the ray executor runs the harness's sandboxed cells, not a {type(runner).__name__}")
        settings = {f.name: getattr(runner, f.name) for f in fields(runner) if f.init and f.name not in _REBUILT_ON_NODE}
        recipe = cls(type(runner), runner.model, runner.backend.name, user_audio, settings,
                     runner.identity(user_audio=user_audio))
        try:
            pickle.dumps(recipe)
        except Exception as exc:  # noqa: BLE001  # name the setting that cannot travel, whatever the reason
            raise TypeError(f"the cell runner's settings cannot be sent to a node: {exc}") from None
        return recipe

    def build(self, backend: SandboxBackend, task_dirs: dict[str, Path],
              checksums: ChecksumManifest | None) -> SandboxedCellRunner:
        """The runner on this node; :class:`SessionInfraError` when it would measure another identity."""
        mode = self.user_audio

        def speech(bundle: TaskBundle) -> SpeechSource:
            from harness.audio.espeak import user_voice
            from harness.audio.speech_bank import open_speech_source

            voice = user_voice(bundle.persona.get("voice_id"))
            return open_speech_source(bundle.task_dir, mode, voice=voice, task_id=bundle.task_id)

        runner = self.runner_class(
            model=self.model, backend=backend, task_dirs=task_dirs, speech=speech, checksums=checksums,
            judge=SemanticJudge.from_env() if self.identity.judge_model is not None else None,
            observer=LlmActClassifier.from_env() if self.identity.observer == "llm" else None,
            **self.settings,
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
            backend = get_backend(recipe.sandbox)
            try:
                await asyncio.to_thread(backend.prepare)
                runner = recipe.build(backend, {cell.task_id: task_dir}, checksums)
                record = await runner(cell, rep_dir)
            finally:
                await backend.aclose()
            files = await asyncio.to_thread(lambda: _tar(rep_dir, _regular_files(rep_dir)))
        return CellReturn(record=record, files=files)
    except BaseException as exc:
        task = asyncio.current_task()
        if isinstance(exc, asyncio.CancelledError) and task is not None and task.cancelling() > 0:
            raise  # the campaign asked the cell to stop: its teardown ran above
        return CellReturn(failure=pack_exception(exc, where=f"on the node that ran {cell}"))
