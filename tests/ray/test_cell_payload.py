"""What a cell takes to a node and brings back, without a cluster: exceptions that keep their blame,
task packages that keep their checksums, session files landed whole, a cell run from its recipe
that leaves nothing behind, and the CLI's usage errors. (Fast: no Ray needed, so no ray mark.)"""

from __future__ import annotations

import asyncio
import errno
import io
import shutil
import tarfile
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.agents.registry import get_model
from harness.blame.errors import (
    AgentFailure,
    HarnessBug,
    JudgeUnavailable,
    ProviderError,
    ProviderTransient,
    SessionInfraError,
)
from harness.blame.origin_table import classify
from harness.campaign.campaign import CampaignCell
from harness.campaign.carried_error import pack_exception, unpack_exception
from harness.campaign.cell_payload import CellRecipe, CellReturn, TaskPackage, run_cell_here
from harness.cli import campaign_request
from harness.cli.main import app
from harness.results.result_record import ResultRecord
from harness.tasks.dataset import resolve_data
from harness.tasks.errors import TaskLoadError
from harness.tasks.loader import load_task
from sandbox.errors import AgentImageError, ControlRequestError, SandboxUnavailableError
from tests.conftest import DEMO_DATA
from tests.ray.campaigns import TASKS, cell_runner
from tests.ray.cluster import leftovers
from tests.ray.recording_agent import read_spans, recording_model

FAILURES = [
    SessionInfraError("socket dropped", transient=False),
    ProviderTransient("429", retry_after_s=7.5),
    ProviderError("bad key", kind="auth"),
    AgentFailure("raised", "connect: boom"),  # its constructor takes two arguments: plain pickle fails
    ControlRequestError("/control/load", 500, "refused"),
    JudgeUnavailable("judge down"),
    AgentImageError("no image"),
    SandboxUnavailableError("container died"),
    HarnessBug("ours"),
    OSError(errno.ENOSPC, "No space left on device"),
    ValueError("plain bug"),
    ExceptionGroup("session", [ProviderTransient("slow"), SandboxUnavailableError("gone")]),
]


@pytest.mark.parametrize("exc", FAILURES, ids=lambda exc: type(exc).__name__)
def test_a_carried_exception_keeps_its_class_attributes_and_blame(exc):
    blame = classify(exc)
    try:
        raise exc
    except BaseException as raised:
        carried = unpack_exception(pack_exception(raised, where="on node n1"))
    assert type(carried) is type(exc) and str(carried) == str(exc)
    assert classify(carried) == blame
    assert {k: v for k, v in vars(carried).items() if k != "__notes__"} == \
        {k: v for k, v in vars(exc).items() if k != "__notes__"}
    assert "raised on node n1:" in carried.__notes__[-1] and "Traceback" in carried.__notes__[-1]


def test_an_exception_that_cannot_cross_becomes_a_harness_bug_with_its_text():
    class Local(SandboxUnavailableError):  # defined in a function: not importable on the other side
        pass

    carried = unpack_exception(pack_exception(Local("gone"), where="there"))
    assert isinstance(carried, HarnessBug) and "Local: gone" in str(carried)
    assert classify(carried).kind == "harness_bug"


def test_a_task_package_is_loaded_on_the_other_side_with_its_dataset_checksums(tmp_path):
    source = resolve_data(DEMO_DATA)
    task_dir = next(d for d in source.task_dirs if d.name == TASKS[1])
    package = TaskPackage.pack(TASKS[1], task_dir, source.checksums)
    assert package.rel_dir == f"tasks/{TASKS[1]}" and package.digests
    copy, checksums = package.unpack(tmp_path / "a")
    assert load_task(copy, checksums=checksums).task_id == TASKS[1]

    tampered, checksums = package.unpack(tmp_path / "b")
    (tampered / "task.yaml").write_text((tampered / "task.yaml").read_text() + "\n# changed\n")
    with pytest.raises(TaskLoadError, match="SHA256SUMS mismatch"):
        load_task(tampered, checksums=checksums)


def _archive(**members: bytes) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_landing_writes_the_session_directory_whole_and_refuses_paths_out_of_it(tmp_path):
    record = ResultRecord(task_id="t", rep=0, model="oracle", run_id="abc", pts=1, sandbox={"backend": "local"})
    landed = CellReturn(record, _archive(**{"abc/events.jsonl": b"{}\n", "abc/audio/x.wav": b"RIFF"}),
                        node_id="n1").land(tmp_path)
    assert landed.sandbox == {"backend": "local", "node_id": "n1"}
    assert (tmp_path / "abc" / "audio" / "x.wav").read_bytes() == b"RIFF"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["abc"]  # no staging folder left

    with pytest.raises(ValueError, match="only relative regular files travel"):
        CellReturn(record, _archive(**{"../escape": b"x"})).land(tmp_path)
    assert not (tmp_path.parent / "escape").exists()
    with pytest.raises(ProviderTransient, match="429"):
        CellReturn(failure=pack_exception(ProviderTransient("429"), where="there")).land(tmp_path)


def test_only_the_harness_cell_runner_travels():
    with pytest.raises(TypeError, match="sandboxed cells, not a function"):
        CellRecipe.of(lambda cell, rep_dir: None, user_audio="auto")


def test_a_node_that_would_measure_another_identity_refuses_the_cell(monkeypatch, tmp_path):
    """The recipe said only *whether* a judge and an observer were configured; a node without the
    key ran the cell with neither, and its records said nothing of it."""
    from dataclasses import replace

    from harness.grading.judge import SemanticJudge
    from sandbox.backend import get_backend

    monkeypatch.setenv("APEX_VOICE_OBSERVER_CACHE", str(tmp_path / "observer.sqlite3"))
    runner = replace(cell_runner(get_model("oracle"), TASKS[1:]), judge=SemanticJudge(api_key="k", model="judge-1"))
    recipe = CellRecipe.of(runner, user_audio="auto")
    assert recipe.identity == runner.identity(user_audio="auto") and recipe.identity.judge_model == "judge-1"
    with pytest.raises(SessionInfraError, match=r"another identity than the campaign's \(judge_model: 'judge-1' → none"):
        recipe.build(get_backend("local"), {}, None)  # this "node" has no key
    monkeypatch.setenv("APEX_VOICE_LLM_API_KEY", "sk-node")
    with pytest.raises(SessionInfraError, match=r"\(judge_model: 'judge-1' → 'gpt-[^;]*\): give it the driver's keys"):
        recipe.build(get_backend("local"), {}, None)  # a key, but the node's judge is another model
    assert classify(SessionInfraError("x")).kind != "harness_bug"


@pytest.fixture
def private_tmp(monkeypatch):
    """This test's own TMPDIR, where the cell's private folders go (and must be gone from); short,
    for the sandbox's unix socket paths."""
    root = Path(tempfile.mkdtemp(prefix="avcell-", dir="/tmp"))
    monkeypatch.setenv("TMPDIR", str(root))
    monkeypatch.setattr(tempfile, "tempdir", None)
    yield root
    shutil.rmtree(root, ignore_errors=True)


async def test_a_cell_runs_from_its_recipe_and_leaves_nothing_behind(private_tmp):
    source = resolve_data(DEMO_DATA)
    task_dir = next(d for d in source.task_dirs if d.name == TASKS[1])
    recipe = CellRecipe.of(cell_runner(get_model("oracle"), TASKS[1:]), user_audio="auto")
    package = TaskPackage.pack(TASKS[1], task_dir, source.checksums)
    returned = await asyncio.to_thread(run_cell_here, recipe, package, CampaignCell(0, TASKS[1]))
    assert returned.failure is None and returned.record.pts == 1
    record = returned.land(private_tmp / "out")
    assert (private_tmp / "out" / record.run_id / "events.jsonl").is_file()
    assert leftovers(private_tmp) == []


async def test_a_cell_asked_to_stop_tears_its_session_down_and_says_so(private_tmp):
    spans = private_tmp / "spans"
    spans.mkdir()
    source = resolve_data(DEMO_DATA)
    task_dir = next(d for d in source.task_dirs if d.name == TASKS[1])
    recipe = CellRecipe.of(cell_runner(recording_model(spans, hold_s=120.0), TASKS[1:]), user_audio="auto")
    package = TaskPackage.pack(TASKS[1], task_dir, source.checksums)

    async def opened() -> bool:  # stop once the session (and its sandbox) is up
        return bool(read_spans(spans))

    returned = await asyncio.to_thread(run_cell_here, recipe, package, CampaignCell(0, TASKS[1]), stop_requested=opened)
    assert returned.stopped and returned.record is None and returned.failure is None
    assert leftovers(private_tmp) == []
    with pytest.raises(HarnessBug, match="without the campaign asking"):
        returned.land(private_tmp / "out")


def test_executor_ray_without_ray_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(campaign_request, "ray_installed", lambda: False)
    result = CliRunner().invoke(app, ["run", "--executor", "ray"])
    assert result.exit_code == 2
    assert "error: the ray executor needs Ray: pip install 'apex-voice[ray]'" in result.output


def test_ray_address_needs_the_ray_executor():
    result = CliRunner().invoke(app, ["run", "--ray-address", "127.0.0.1:6379"])
    assert result.exit_code == 2
    assert "error: --ray-address needs --executor ray" in result.output


def test_what_travels_is_declared_and_a_field_declared_nowhere_is_refused_by_name():
    """A runner field travelled unless it was on a deny-list: a new live field broke pickling (or
    shipped silently), a new setting went wherever the list let it."""
    from dataclasses import dataclass, fields

    from harness.campaign.cell_payload import REBUILT_ON_NODE, RunnerSettings
    from harness.campaign.sandboxed_cell import SandboxedCellRunner

    runner = cell_runner(get_model("oracle"), TASKS[1:])
    recipe = CellRecipe.of(runner, user_audio="auto")
    shipped = {f.name for f in fields(RunnerSettings)}
    assert shipped | REBUILT_ON_NODE | {"model"} == {f.name for f in fields(SandboxedCellRunner) if f.init}
    assert recipe.settings.as_kwargs() == {name: getattr(runner, name) for name in shipped}

    @dataclass
    class WithALiveField(SandboxedCellRunner):
        progress_socket: object = None

    with pytest.raises(TypeError, match=r"WithALiveField field\(s\) progress_socket are neither sent to a node "
                                        r"\(cell_payload.RunnerSettings\) nor rebuilt there"):
        CellRecipe.of(WithALiveField(**{f.name: getattr(runner, f.name) for f in fields(runner) if f.init}),
                      user_audio="auto")


async def test_a_witnessed_store_remembers_what_was_read_and_what_stands():
    from harness.grading.judge_cache import JudgeCache, WitnessedVerdicts

    store = JudgeCache(Path(tempfile.mkdtemp(prefix="avjudge-")) / "cache.json")
    try:
        store.put("known", False)
        witnessed = WitnessedVerdicts(store)
        assert await witnessed.aget("known") is False and await witnessed.aget("unknown") is None
        assert await witnessed.aput("known", True) is False  # the first verdict stands, and is what it saw
        assert await witnessed.aput("new", True) is True
        assert witnessed.verdicts == {"known": False, "new": True}
    finally:
        store.close()
        shutil.rmtree(store.path.parent, ignore_errors=True)


async def test_a_node_brings_back_its_verdicts_and_the_driver_keeps_the_first_for_a_key(tmp_path, caplog):
    from harness.campaign.ray_executor import RayCellRunner
    from harness.grading.judge_cache import JudgeCache

    store = JudgeCache(tmp_path / "driver.json")
    store.put("decided", True)
    ray_runner = RayCellRunner(recipe=None, task_dirs={}, checksums=None, remote=None, stops=None,  # type: ignore[arg-type]
                               verdicts=store)
    await ray_runner._store_verdicts(CampaignCell(0, "t"), {"decided": False, "new": True})
    assert (store.get("decided"), store.get("new")) == (True, True)
    assert "the node graded with judge verdict False for key decided" in caplog.text


async def test_a_worker_process_keeps_one_backend_for_all_its_cells(private_tmp, monkeypatch):
    """Each cell built (and prepared) a backend of its own; a Docker backend's exit hook then kept
    every one alive with its engine thread pool in a reused Ray worker."""
    from harness.campaign import cell_payload
    from sandbox import backend as backend_module

    made: list[object] = []

    def counting(name: str):
        made.append(backend_module.get_backend(name))
        return made[-1]

    monkeypatch.setattr(cell_payload, "_worker_backends", {})
    monkeypatch.setattr(cell_payload, "get_backend", counting)
    source = resolve_data(DEMO_DATA)
    task_dir = next(d for d in source.task_dirs if d.name == TASKS[1])
    recipe = CellRecipe.of(cell_runner(get_model("oracle"), TASKS[1:]), user_audio="auto")
    package = TaskPackage.pack(TASKS[1], task_dir, source.checksums)
    for rep in (0, 1):
        returned = await asyncio.to_thread(run_cell_here, recipe, package, CampaignCell(rep, TASKS[1]))
        assert returned.failure is None and returned.record.pts == 1
    assert len(made) == 1 and cell_payload.worker_backend("local") is made[0]
    await made[0].aclose()  # type: ignore[attr-defined]
    assert leftovers(private_tmp) == []
