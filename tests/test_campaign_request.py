"""``apex-voice run``'s options as a typed request, turned into the campaign without the Typer command."""

from __future__ import annotations

import asyncio

import pytest
import typer
from pydantic import ValidationError

from harness.campaign.plan import local_cells
from harness.campaign.ray_executor import RayExecutor
from harness.campaign.sandboxed_cell import SandboxedCellRunner
from harness.campaign.text_cell import TextCellRunner
from harness.cli.campaign_request import CampaignRequest, prepare_campaign
from tests.conftest import DEMO_DATA

TASK = "demo_warranty_advice_001"


def _prepared(tmp_path, **options):
    notes: list[str] = []
    request = CampaignRequest(data=DEMO_DATA, only=[TASK], sandbox="local", out=tmp_path / "out", **options)
    prepared = prepare_campaign(request, note=notes.append)
    asyncio.run(prepared.backend.aclose())
    return prepared, notes


def test_a_request_becomes_settings_runner_and_the_local_executor(tmp_path):
    prepared, notes = _prepared(tmp_path, max_turns=12, tool_latency_ms=250)
    assert type(prepared.runner) is SandboxedCellRunner and prepared.task_ids == [TASK]
    identity = prepared.settings.identity
    assert identity is not None
    assert (identity.model, identity.condition, identity.max_turns, identity.tool_latency_ms) == ("oracle", "C2", 12, 250)
    assert prepared.settings.repeats == 1 and prepared.settings.out_dir == tmp_path / "out"
    assert prepared.options["executor"] is local_cells and set(prepared.options["task_pins"]) == {TASK}
    assert notes[0].startswith("sandbox: local")


def test_the_condition_picks_the_runner_and_the_executor_option_injects_ray(tmp_path):
    prepared, _ = _prepared(tmp_path, condition="c0", executor="ray", ray_address="127.0.0.1:6379")
    assert type(prepared.runner) is TextCellRunner and prepared.runner.condition == "C0"
    assert prepared.options["executor"] == RayExecutor("127.0.0.1:6379")


def test_a_request_is_typed_and_closed():
    with pytest.raises(ValidationError, match="parallel"):
        CampaignRequest(parallel=0)
    with pytest.raises(ValidationError, match="executor"):
        CampaignRequest(executor="kubernetes")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="jsonn"):
        CampaignRequest(jsonn=True)  # type: ignore[call-arg]


def test_a_refused_request_says_why_and_exits_2(tmp_path, capsys):
    with pytest.raises(typer.Exit) as refused:
        prepare_campaign(CampaignRequest(condition="C9", out=tmp_path))
    assert refused.value.exit_code == 2
    assert "error: --condition: unknown condition 'C9'" in capsys.readouterr().err
