"""A campaign knows what it is: ``campaign.json`` records its identity and a resume checks all of it.

Issue 23 items 1 and 15: a C3 run into a C2 directory reused the C2 results, and re-running the
identical C0 command was refused because the campaign stamped every manifest ``condition: C2``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness import __version__
from harness.agents.registry import get_model
from harness.campaign.campaign import CampaignCell, CampaignMismatchError, CampaignSettings, run_campaign
from harness.cli.main import app
from harness.results.campaign_files import MANIFEST_FILE
from harness.results.result_record import ResultRecord
from tests.conftest import DEMO_DATA

DEMO_TASK = "demo_warranty_advice_001"


class Cells:
    """Writes a passing record stamped with the campaign's condition, as the real runners do."""

    def __init__(self, model: str = "oracle", condition: str = "C2") -> None:
        self.model, self.condition = model, condition
        self.calls: list[CampaignCell] = []

    async def __call__(self, cell: CampaignCell, rep_dir: Path) -> ResultRecord:
        self.calls.append(cell)
        return ResultRecord(task_id=cell.task_id, rep=cell.rep, model=self.model, condition=self.condition, pts=1,
                            components={"GS": True, "PC": True, "RA": True, "WA": True})


def _settings(out: Path, **overrides) -> CampaignSettings:
    values = {"model": get_model("oracle"), "out_dir": out, "repeats": 1, "retry_backoff_s": 0.0, **overrides}
    return CampaignSettings(**values)


def _manifest(out: Path) -> dict:
    return json.loads((out / MANIFEST_FILE).read_text())


async def test_campaign_json_records_the_whole_identity(tmp_path):
    settings = _settings(tmp_path, condition="C3", acoustics="harsh", tool_mode="bridge", user_audio="tts", seed=7)
    await run_campaign(settings, ["task_a", "task_b"], Cells(condition="C3"),
                       task_versions={"task_a": "1.0.0", "task_b": "2.1.0"})
    manifest = _manifest(tmp_path)
    identity = {key: manifest[key] for key in ("model", "condition", "acoustics", "seed", "user_audio", "tool_mode",
                                               "max_turns", "task_versions", "apex_voice_version")}
    assert identity == {"model": "oracle", "condition": "C3", "acoustics": "harsh", "seed": 7, "user_audio": "tts",
                        "tool_mode": "bridge", "max_turns": 44, "task_versions": {"task_a": "1.0.0", "task_b": "2.1.0"},
                        "apex_voice_version": __version__}


@pytest.mark.parametrize("condition", ["C0", "C1", "C2", "C3"])
async def test_the_identical_command_resumes_in_every_condition(tmp_path, condition):
    acoustics = "moderate" if condition == "C3" else "none"
    first = Cells(condition=condition)
    await run_campaign(_settings(tmp_path, condition=condition, acoustics=acoustics), ["task_a"], first)
    assert _manifest(tmp_path)["condition"] == condition
    again = Cells(condition=condition)
    result = await run_campaign(_settings(tmp_path, condition=condition, acoustics=acoustics), ["task_a"], again)
    assert again.calls == [] and [o.status for o in result.outcomes] == ["loaded"]


@pytest.mark.parametrize(
    ("changed", "named"),
    [
        ({"condition": "C3", "acoustics": "moderate"}, ["condition: 'C2' → 'C3'", "acoustics: 'none' → 'moderate'"]),
        ({"tool_mode": "native"}, ["tool_mode: 'bridge' → 'native'"]),
        ({"seed": 2}, ["seed: 1 → 2"]),
        ({"user_audio": "tts"}, ["user_audio: 'auto' → 'tts'"]),
        ({"max_turns": 3}, ["max_turns: 44 → 3"]),
    ],
)
async def test_a_changed_identity_is_refused_naming_every_difference(tmp_path, changed, named):
    await run_campaign(_settings(tmp_path, tool_mode="bridge"), ["task_a"], Cells())
    before = (tmp_path / MANIFEST_FILE).read_text()
    runner = Cells()
    with pytest.raises(CampaignMismatchError) as refused:
        await run_campaign(_settings(tmp_path, **{"tool_mode": "bridge", **changed}), ["task_a"], runner)
    message = str(refused.value)
    for difference in named:
        assert difference in message
    assert "use a new --out" in message and "\n" not in message
    assert runner.calls == [] and (tmp_path / MANIFEST_FILE).read_text() == before


async def test_a_changed_task_version_is_named_by_task(tmp_path):
    await run_campaign(_settings(tmp_path), ["task_a", "task_b"], Cells(), task_versions={"task_a": "1.0", "task_b": "1.0"})
    with pytest.raises(CampaignMismatchError, match=r"task_versions\[task_b\]: '1.0' → '1.1'"):
        await run_campaign(_settings(tmp_path), ["task_b"], Cells(), task_versions={"task_b": "1.1"})
    # A task the campaign never ran is new, not a mismatch: the task set grows by union.
    await run_campaign(_settings(tmp_path), ["task_c"], Cells(), task_versions={"task_c": "3.0"})
    assert _manifest(tmp_path)["task_versions"] == {"task_a": "1.0", "task_b": "1.0", "task_c": "3.0"}


async def test_another_harness_version_is_refused_unless_allowed_and_then_recorded(tmp_path):
    await run_campaign(_settings(tmp_path), ["task_a"], Cells())
    manifest = _manifest(tmp_path)
    manifest["apex_voice_version"] = "0.0.1"
    (tmp_path / MANIFEST_FILE).write_text(json.dumps(manifest))
    with pytest.raises(CampaignMismatchError, match=rf"apex_voice_version: '0.0.1' → '{__version__}'.*"
                                                    r"--allow-version-change"):
        await run_campaign(_settings(tmp_path), ["task_a", "task_b"], Cells())
    runner = Cells()
    await run_campaign(_settings(tmp_path, allow_version_change=True), ["task_a", "task_b"], runner)
    assert [c.task_id for c in runner.calls] == ["task_b"]
    after = _manifest(tmp_path)
    assert (after["apex_voice_version"], after["earlier_versions"]) == (__version__, ["0.0.1"])


def test_a_condition_change_through_the_cli_is_refused_with_how_to_proceed(tmp_path):
    """Item 1 as reported: ``run --only X --out D && run --condition C3 --only X --out D``."""
    args = ["run", "--data", str(DEMO_DATA), "--only", DEMO_TASK, "--sandbox", "local", "--out", str(tmp_path)]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    c3 = CliRunner().invoke(app, [*args, "--condition", "C3"])
    assert c3.exit_code == 2, c3.output
    (line,) = [line for line in c3.output.splitlines() if line.startswith("error:")]
    assert "condition: 'C2' → 'C3'" in line and "acoustics: 'none' → 'moderate'" in line
    assert "use a new --out" in line
    assert "SUCCESS" not in c3.output


def test_the_identical_c0_command_resumes_through_the_cli(tmp_path):
    """Item 15: the same C0 command run twice resumes (it was refused: 'condition C0, not C2')."""
    args = ["run", "--condition", "C0", "--data", str(DEMO_DATA), "--only", DEMO_TASK, "--sandbox", "local",
            "--out", str(tmp_path)]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    assert _manifest(tmp_path)["condition"] == "C0"
    run_id = json.loads((tmp_path / DEMO_TASK / "rep0" / "result.json").read_text())["run_id"]
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "resumed 1, ran 0" in again.output
    assert json.loads((tmp_path / DEMO_TASK / "rep0" / "result.json").read_text())["run_id"] == run_id


async def test_a_c0_campaign_whose_old_manifest_says_c2_resumes(tmp_path):
    """Item 15's root cause: harnesses before the identity was recorded stamped ``condition: C2`` in
    every ``campaign.json`` (C0, C1 and C3 alike), so re-running the same C0 command was refused."""
    await run_campaign(_settings(tmp_path, condition="C0"), ["task_a"], Cells(condition="C0"))
    old = _manifest(tmp_path)
    for key in ("acoustics", "tool_mode", "seed", "task_versions", "earlier_versions"):
        old.pop(key)
    (tmp_path / MANIFEST_FILE).write_text(json.dumps({**old, "condition": "C2"}))
    again = Cells(condition="C0")
    result = await run_campaign(_settings(tmp_path, condition="C0"), ["task_a"], again)
    assert again.calls == [] and [o.status for o in result.outcomes] == ["loaded"]
    assert _manifest(tmp_path)["condition"] == "C0"
    # The records still speak for themselves: a C3 start into that directory is refused by them.
    (tmp_path / MANIFEST_FILE).write_text(json.dumps({**old, "condition": "C2"}))
    with pytest.raises(CampaignMismatchError, match="written with condition 'C0', not 'C3'"):
        await run_campaign(_settings(tmp_path, condition="C3", acoustics="moderate"), ["task_a"], Cells())


def test_another_harness_version_through_the_cli_names_the_flag_that_resumes(tmp_path):
    args = ["run", "--data", str(DEMO_DATA), "--only", DEMO_TASK, "--sandbox", "local", "--out", str(tmp_path)]
    assert CliRunner().invoke(app, args).exit_code == 0
    manifest = _manifest(tmp_path)
    (tmp_path / MANIFEST_FILE).write_text(json.dumps({**manifest, "apex_voice_version": "0.0.1"}))
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 2
    assert f"apex_voice_version: '0.0.1' → '{__version__}'" in refused.output
    assert "or --allow-version-change to resume it with this version" in refused.output
    allowed = CliRunner().invoke(app, [*args, "--allow-version-change"])
    assert allowed.exit_code == 0, allowed.output
    assert "oracle: resumed 1, ran 0" in allowed.output
    assert _manifest(tmp_path)["earlier_versions"] == ["0.0.1"]
