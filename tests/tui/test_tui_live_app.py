"""``apex-voice run --tui``: a real campaign (oracle, local sandbox) as the app's worker, its
sessions' buses feeding the view while they run."""

from __future__ import annotations

import re

from harness.agents.registry import get_model
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.campaign.campaign import CampaignSettings
from harness.campaign.sandboxed_cell import SandboxedCellRunner
from harness.tasks.loader import load_task
from sandbox.backend import get_backend
from tests.tui.helpers import DEMO_DATA, DEMO_TASK, shown, until
from tui.live import LiveApp
from tui.screens import SessionScreen


def _live_app(out_dir) -> LiveApp:
    spec = get_model("oracle")
    task_dir = DEMO_DATA / "tasks" / DEMO_TASK
    bundle = load_task(task_dir)
    speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=DEMO_TASK)
    backend = get_backend("local")
    settings = CampaignSettings(model=spec, out_dir=out_dir, repeats=1, sandbox=backend.name)
    runner = SandboxedCellRunner(model=spec, backend=backend, task_dirs={DEMO_TASK: task_dir}, speech=lambda _: speech)
    return LiveApp(settings, [DEMO_TASK], runner, backend)


async def test_a_live_campaign_fills_the_table_and_the_open_session(tmp_path):
    app = _live_app(tmp_path)
    key = (DEMO_TASK, 0)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: key in app.campaign.cells)
        assert "queued" in shown(app.screen.query_one("#cells")) or app.campaign.sessions
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, SessionScreen))
        await until(pilot, lambda: app.campaign.finished, polls=2400)
        await until(pilot, lambda: "AFA" in shown(app.screen.query_one("#gates")))
        assert app.result is not None and app.result.passed == 1
        assert "verdict SUCCESS pts 1 (agent_ended) AFA 1.00" in shown(app.screen.query_one("#gates"))
        assert re.search(r"enrollment_1\s+COMMITTED", shown(app.screen.query_one("#artifact")))
        session = app.campaign.sessions[key]
        assert session.events > 100 and session.status == "passed"
        await pilot.press("escape")
        await until(pilot, lambda: "passed" in shown(app.screen.query_one("#cells")))
        await pilot.press("q")
    assert (tmp_path / DEMO_TASK / "rep0" / "result.json").is_file()
