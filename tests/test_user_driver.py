"""The user driver alone: its turns, its utterances and what their ends mean (no session loop)."""

from __future__ import annotations

import numpy as np

from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.events import EventBus, EventType
from harness.session.channels import UserUtterance
from harness.session.clocks import VirtualClock
from harness.session.environment_port import InProcessEnvironment
from harness.session.floor_meter import FloorMeter
from harness.session.turn_policy import turn_policy
from harness.session.user_driver import UserDriver
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA

BENEFITS = DEMO_DATA / "tasks" / "demo_benefits_enrollment_001"


async def _driver(condition: str = "C2", *, max_turns: int = 2) -> tuple[UserDriver, EventBus]:
    bundle = load_task(BENEFITS)
    log = EventBus(run_id="r", task_version="1", condition=condition)
    driver = UserDriver(bundle, InProcessEnvironment(bundle.public_bundle()), log, FloorMeter(log), VirtualClock(),
                        policy=turn_policy(condition), seed=1, max_turns=max_turns, condition=condition)
    speech = open_speech_source(BENEFITS, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    await driver.prepare(speech, None, seed=1)
    return driver, log


async def test_the_first_turn_speaks_the_opening_and_its_end_holds_the_floor():
    driver, log = await _driver()
    assert driver.take_turn(0) is None and driver.turns == 1 and driver.channel.busy
    t, started, ended = 0, None, None
    while ended is None:
        _, start, ended = driver.channel.next_frame(t)
        if start is not None:
            started = start
            await driver.started(start, t, agent_speech=lambda: True)
        t += 20
    assert started is ended and started.plan is not None
    assert await driver.ended(ended, t) is True
    types = [e.type for e in log.events]
    assert types.index(EventType.USER_PLAN) < types.index(EventType.USER_AUDIO_START) < types.index(EventType.USER_AUDIO_END)


async def test_a_back_channel_does_not_take_the_floor():
    driver, _ = await _driver()
    utterance = UserUtterance(pcm=np.zeros(480, dtype=np.int16), text="mm-hm", flags={"backchannel": True})
    assert await driver.ended(utterance, 1000) is False


def _turns_until_the_end(driver: UserDriver) -> tuple[str | None, list[UserUtterance]]:
    lines, reason, t = [], None, 0
    while reason is None and t < 200_000:
        reason = driver.take_turn(t)
        lines.extend(driver.channel._queue)
        driver.channel._queue.clear()
        t += 10_000
    return reason, lines


async def test_an_agent_that_asks_nothing_hears_the_answers_restated_then_a_closing_line_once():
    driver, _ = await _driver(max_turns=44)
    reason, lines = _turns_until_the_end(driver)
    assert reason == "closing" and driver.turns == len(lines)  # every line spoken is a user turn
    assert lines[0].plan is not None and not lines[0].flags
    assert all(u.flags == {"recovered": True} for u in lines[1:-1]) and lines[-1].flags == {"closing": True}


async def test_recovery_lines_count_against_max_turns():
    driver, _ = await _driver(max_turns=2)
    reason, lines = _turns_until_the_end(driver)
    assert reason == "max_turns" and len(lines) == 2 and driver.turns == 3
