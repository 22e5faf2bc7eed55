"""A session leaves the task bundle it was given exactly as loaded, and its public bundle too.

``validate`` runs the oracle and then the no-op on one loaded bundle and one public bundle (copying
them cost a tenth of a validation): a session that wrote into either (a policy step consumed, a
workspace file filled in, a state field set, a gold field normalised) would hand the no-op a
different task than the package holds.
"""

from __future__ import annotations

import copy

import pytest

from harness.agents.oracle_voice import OracleVoiceAgent
from harness.agents.text_agents import NoOpAgent, ScriptedAgent
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.session.duplex_runner import DuplexConfig, run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import run_text_session
from harness.tasks.lint import lint_task
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA

TASK_DIRS = sorted(p for p in (DEMO_DATA / "tasks").iterdir() if p.is_dir())


@pytest.mark.parametrize("task_dir", TASK_DIRS, ids=lambda p: p.name)
async def test_lint_and_text_sessions_leave_the_bundle_as_loaded(task_dir):
    bundle = load_task(task_dir)
    loaded = copy.deepcopy(bundle)
    assert bundle.policy is not None
    lint_task(bundle)
    public = bundle.public_bundle()
    public_loaded = copy.deepcopy(public)
    oracle = await run_text_session(bundle, ScriptedAgent.oracle(bundle.policy), InProcessEnvironment(public))
    assert public == public_loaded  # the oracle filled its artifact and committed in its own copy
    noop = await run_text_session(bundle, NoOpAgent(), InProcessEnvironment(public))
    assert (oracle.pts, noop.pts) == (1, 0)
    assert bundle == loaded and public == public_loaded


async def test_a_voice_session_leaves_the_bundle_as_loaded():
    task_dir = DEMO_DATA / "tasks" / "demo_auto_claim_intake_001"
    bundle = load_task(task_dir)
    loaded = copy.deepcopy(bundle)
    speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    result = await run_duplex_session(
        bundle, OracleVoiceAgent(), InProcessEnvironment(bundle.public_bundle()),
        DuplexConfig(speech=speech, privileged=True, run_id="bundle-unchanged"),
    )
    assert result.pts == 1
    assert bundle == loaded
