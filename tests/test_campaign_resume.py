"""Resuming a campaign directory: only the same measurement is reused; foreign or broken files are reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.agents.registry import get_model
from harness.campaign.campaign import CampaignCell, CampaignMismatchError, CampaignSettings, run_campaign
from harness.results.measurement_identity import MeasurementIdentity, TaskPin
from harness.results.result_record import ResultRecord


class PassingCells:
    def __init__(self, model: str = "oracle") -> None:
        self.model = model
        self.calls: list[tuple[str, int]] = []

    async def __call__(self, cell: CampaignCell, rep_dir: Path) -> ResultRecord:
        self.calls.append((cell.task_id, cell.rep))
        return ResultRecord(task_id=cell.task_id, rep=cell.rep, model=self.model, run_id=f"r{len(self.calls)}", pts=1,
                            components={"GS": True, "PC": True, "RA": True, "WA": True})


def _settings(out: Path, model: str = "oracle", measured: dict | None = None, **overrides) -> CampaignSettings:
    values = {"model": get_model(model), "out_dir": out, "repeats": 1, "retry_backoff_s": 0.0,
              "identity": MeasurementIdentity(model=model, **(measured or {})), **overrides}
    return CampaignSettings(**values)


async def test_another_model_is_refused_before_anything_runs(tmp_path):
    await run_campaign(_settings(tmp_path), ["task_a"], PassingCells())
    manifest_before = (tmp_path / "campaign.json").read_text()
    runner = PassingCells("noop")
    with pytest.raises(CampaignMismatchError, match=r"holds another campaign \(model: 'oracle' → 'noop'") as err:
        await run_campaign(_settings(tmp_path, "noop"), ["task_a", "task_b"], runner)
    assert str(tmp_path) in str(err.value)
    assert runner.calls == [] and (tmp_path / "campaign.json").read_text() == manifest_before
    assert not (tmp_path / ".campaign.lock").exists()


async def test_other_measurement_settings_are_refused(tmp_path):
    await run_campaign(_settings(tmp_path), ["task_a"], PassingCells())
    with pytest.raises(CampaignMismatchError, match="max_turns: 44 → 10"):
        await run_campaign(_settings(tmp_path, measured={"max_turns": 10}), ["task_a"], PassingCells())
    # Backend and parallelism do not change what is measured.
    again = PassingCells()
    await run_campaign(_settings(tmp_path, parallel=2, sandbox="docker"), ["task_a"], again)
    assert again.calls == []


async def test_a_record_of_another_model_is_refused_even_without_a_manifest(tmp_path):
    await run_campaign(_settings(tmp_path), ["task_a"], PassingCells())
    (tmp_path / "campaign.json").unlink()
    with pytest.raises(CampaignMismatchError,
                       match=r"task_a/rep0/result.json was measured with another identity \(model: 'oracle' → 'noop'\)"):
        await run_campaign(_settings(tmp_path, "noop"), ["task_a"], PassingCells("noop"))


async def test_a_changed_task_version_is_refused(tmp_path):
    await run_campaign(_settings(tmp_path), ["task_a"], PassingCells(), task_pins={"task_a": TaskPin(version="1.0.0")})
    assert ResultRecord.read(tmp_path / "task_a" / "rep0").task_version == "1.0.0"
    newer = {"task_a": TaskPin(version="1.1.0")}
    with pytest.raises(CampaignMismatchError, match=r"tasks\[task_a\]: '1.0.0' → '1.1.0'"):
        await run_campaign(_settings(tmp_path), ["task_a"], PassingCells(), task_pins=newer)
    (tmp_path / "campaign.json").unlink()  # without a manifest, the record's own identity refuses
    with pytest.raises(CampaignMismatchError, match=r"result.json was measured with another identity \(tasks\[task_a\]"):
        await run_campaign(_settings(tmp_path), ["task_a"], PassingCells(), task_pins=newer)


async def test_a_changed_dataset_file_is_refused_by_its_checksum(tmp_path):
    await run_campaign(_settings(tmp_path), ["task_a"], PassingCells(),
                       task_pins={"task_a": TaskPin(version="1.0", checksum="aaaa")})
    with pytest.raises(CampaignMismatchError, match=r"tasks\[task_a\]: '1.0#aaaa' → '1.0#bbbb'"):
        await run_campaign(_settings(tmp_path), ["task_a"], PassingCells(),
                           task_pins={"task_a": TaskPin(version="1.0", checksum="bbbb")})


async def test_campaign_json_keeps_every_task_and_repeat_the_directory_holds(tmp_path):
    await run_campaign(_settings(tmp_path, repeats=1), ["task_a", "task_b", "task_c"], PassingCells())
    with pytest.raises(CampaignMismatchError, match=r"repeats: 1 → 2.*--extend to grow it"):
        await run_campaign(_settings(tmp_path, repeats=2), ["task_b"], PassingCells())
    runner = PassingCells()
    await run_campaign(_settings(tmp_path, repeats=2, extend=True), ["task_b"], runner)
    assert runner.calls == [("task_b", 1)]
    manifest = json.loads((tmp_path / "campaign.json").read_text())
    assert manifest["task_ids"] == ["task_a", "task_b", "task_c"]
    assert (manifest["n_tasks"], manifest["repeats"]) == (3, 2)
    assert sorted(manifest["identity"]["tasks"]) == ["task_a", "task_b", "task_c"]
    # One task of the three, once: a start planning less than its campaign resumes it, unchanged.
    again = PassingCells()
    await run_campaign(_settings(tmp_path, repeats=1), ["task_a"], again)
    assert again.calls == [] and json.loads((tmp_path / "campaign.json").read_text())["identity"] == manifest["identity"]


def _broken_dir(rep_dir: Path) -> None:
    (rep_dir / "result.json").mkdir(parents=True)


def _foreign(rep_dir: Path) -> None:
    rep_dir.mkdir(parents=True)
    ResultRecord(task_id="task_z", rep=2, model="oracle", pts=1).write(rep_dir)


def _binary(rep_dir: Path) -> None:
    rep_dir.mkdir(parents=True)
    (rep_dir / "result.json").write_bytes(b"\xff\xfe\x00garbage")


def _not_a_record(rep_dir: Path) -> None:
    rep_dir.mkdir(parents=True)
    (rep_dir / "result.json").write_text('["a list"]')


@pytest.mark.parametrize(
    ("spoil", "problem"),
    [
        (_broken_dir, "is a directory, not a file"),
        (_foreign, "names task_z rep2, not task_a rep0"),
        (_binary, "unreadable (UnicodeDecodeError"),
        (_not_a_record, "not a result record"),
    ],
)
async def test_an_unusable_result_is_reported_set_aside_and_run_again(tmp_path, spoil, problem):
    rep_dir = tmp_path / "task_a" / "rep0"
    spoil(rep_dir)
    runner = PassingCells()
    result = await run_campaign(_settings(tmp_path), ["task_a"], runner)
    assert runner.calls == [("task_a", 0)]
    (outcome,) = result.outcomes
    assert outcome.status == "ran" and problem in outcome.set_aside
    assert ResultRecord.read(rep_dir).task_id == "task_a"
    assert len(list(rep_dir.glob("result.json.unusable-*"))) == 1
