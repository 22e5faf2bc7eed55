"""C3 sessions: the oracle through the moderate chain passes the demo suite, and reruns send the
same samples."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from harness.agents.oracle_voice import OracleVoiceAgent
from harness.audio.acoustics import AcousticChain
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.session.duplex_runner import run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.dataset import resolve_data
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA

pytestmark = pytest.mark.slow


async def _c3_session(task_dir, preset, session_dir=None, seed=1):
    bundle = load_task(task_dir)
    speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    env = InProcessEnvironment(bundle.public_bundle())
    chain = AcousticChain.from_preset(preset)
    result = await run_duplex_session(
        bundle, OracleVoiceAgent(), env, speech=speech, session_dir=session_dir, privileged=True, seed=seed,
        condition="C3", acoustics=chain,
    )
    return result, chain


async def test_the_oracle_passes_every_demo_task_through_the_moderate_chain():
    failures = []
    for task_dir in resolve_data(DEMO_DATA).task_dirs:
        result, _ = await _c3_session(task_dir, "moderate")
        if result.pts != 1:
            failures.append(f"{task_dir.name}: {result.reason} {result.grade.explain()[:2]}")
    assert not failures


async def test_two_c3_runs_send_identical_user_samples_that_differ_from_c2(tmp_path):
    task_dir = sorted(resolve_data(DEMO_DATA).task_dirs)[0]
    first, chain = await _c3_session(task_dir, "moderate", tmp_path / "a")
    second, _ = await _c3_session(task_dir, "moderate", tmp_path / "b")
    a = sf.read(tmp_path / "a" / "audio" / "user.wav", dtype="int16")[0]
    b = sf.read(tmp_path / "b" / "audio" / "user.wav", dtype="int16")[0]
    assert np.array_equal(a, b) and np.abs(a).max() > 0
    start = first.events.events[0].payload
    assert start["condition"] == "C3" and start["acoustics"] == chain.spec.model_dump(mode="json")
    assert first.adapter_meta["acoustics"]["preset"] == "moderate"
    source = open_speech_source(task_dir, "prerendered", task_id=first.task_id)
    texts = source.bank.texts
    clean = await source.prepare(texts)
    degraded = chain.degrade_clips(clean, seed=1)
    for text in texts:
        assert len(degraded[text].pcm) == len(clean[text].pcm)
        assert not np.array_equal(degraded[text].pcm, clean[text].pcm)
