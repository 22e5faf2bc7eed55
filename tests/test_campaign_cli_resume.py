"""`apex-voice run` into a directory another model wrote: refused with one line and exit code 2."""

from __future__ import annotations

from typer.testing import CliRunner

from harness.campaign.manifest import CampaignManifest, write_manifest
from harness.cli import campaign_request
from harness.cli.main import app
from harness.tasks.dataset import BUNDLED_DATA


class _UnusedBackend:
    name = "unused"
    chosen_because = "a test backend that must never start"

    def prepare(self) -> None:
        return None

    def start(self, public_dir, run_id, *, task_id):
        raise AssertionError("nothing may run in a refused directory")

    async def aclose(self) -> None:
        return None


def test_run_into_another_models_directory_is_refused(monkeypatch, tmp_path):
    write_manifest(tmp_path, CampaignManifest(model="oracle", display_name="Oracle", repeats=1, max_turns=44,
                                              user_audio="auto", n_tasks=1))
    monkeypatch.setattr(campaign_request, "get_backend", lambda name: _UnusedBackend())
    task = sorted(p.name for p in (BUNDLED_DATA / "tasks").iterdir())[0]
    result = CliRunner().invoke(app, ["run", "--model", "noop", "--only", task, "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert f"error: {tmp_path} holds another campaign (model: 'oracle' → 'noop'" in result.output
    assert "use a new --out" in result.output
    assert "Traceback" not in result.output
