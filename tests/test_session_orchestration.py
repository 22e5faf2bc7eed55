"""What the voice session's loop guarantees around its parts: the order of set-up, isolated bus
subscribers, and the frame lateness its own ``RUN_END`` records."""

from __future__ import annotations

import logging

from harness.agents.noop_voice import NoOpVoiceAgent
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import Clip, open_speech_source
from harness.events import EventBus, EventType
from harness.session.clocks import make_clock
from harness.session.duplex_runner import DuplexConfig, run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA

BENEFITS = DEMO_DATA / "tasks" / "demo_benefits_enrollment_001"


class _Speech:
    """The task's speech source, noting when its clips were ready."""

    def __init__(self, inner, order: list[str]) -> None:
        self._inner, self._order = inner, order
        self.bank, self.fallback_texts = inner.bank, inner.fallback_texts

    async def prepare(self, texts: list[str]) -> dict[str, Clip]:
        clips = await self._inner.prepare(texts)
        self._order.append("clips ready")
        return clips


class _Agent(NoOpVoiceAgent):
    def __init__(self, order: list[str]) -> None:
        super().__init__()
        self._order = order

    async def connect(self, config) -> None:
        self._order.append("connect")
        await super().connect(config)


async def _session(agent, *, budget_s: int = 2, speech=None, **options):
    bundle = load_task(BENEFITS)
    bundle.task.time_budget_s = budget_s
    speech = speech or open_speech_source(BENEFITS, "auto", voice=user_voice(bundle.persona.get("voice_id")),
                                          task_id=bundle.task_id)
    env = InProcessEnvironment(bundle.public_bundle())
    return await run_duplex_session(bundle, agent, env, DuplexConfig(speech=speech, **options))


async def test_the_agent_is_connected_only_once_the_users_clips_are_ready():
    order: list[str] = []
    bundle = load_task(BENEFITS)
    inner = open_speech_source(BENEFITS, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    await _session(_Agent(order), speech=_Speech(inner, order))
    assert order == ["clips ready", "connect"]


async def test_a_subscriber_that_raises_fails_neither_the_session_nor_the_others_and_is_logged_once(caplog):
    seen: list[EventType] = []

    def broken(event) -> None:
        raise RuntimeError(f"the view could not draw {event.type.value}")

    def attach(bus: EventBus) -> None:
        bus.subscribe(broken, on_close=lambda: 1 / 0)
        bus.subscribe(lambda event: seen.append(event.type))

    with caplog.at_level(logging.ERROR, logger="harness.events.bus"):
        result = await _session(NoOpVoiceAgent(), on_bus=attach)
    assert result.outcome == "FAILURE" and seen == [e.type for e in result.events.events]
    assert result.events.subscriber_failures == len(seen) + 1  # every event, and the closer
    errors = [r for r in caplog.records if r.name == "harness.events.bus"]
    assert len(errors) == 1 and "RUN_START" in errors[0].getMessage()
    assert "the view could not draw RUN_START" in (result.events.first_subscriber_error or "")


async def test_run_end_records_frame_lateness_on_the_realtime_clock_and_none_on_the_virtual_one():
    virtual = await _session(NoOpVoiceAgent())
    end = virtual.events.of_type(EventType.RUN_END)[0].payload
    assert end["frame_lateness_max_ms"] is None and end["frame_lateness_p99_ms"] is None
    paced = await _session(NoOpVoiceAgent(), budget_s=1, clock=make_clock("realtime"))  # the test tier's speed
    end = paced.events.of_type(EventType.RUN_END)[0].payload
    assert paced.events.of_type(EventType.RUN_START)[0].payload["clock"] == "realtime"
    assert 0 <= end["frame_lateness_p99_ms"] <= end["frame_lateness_max_ms"]


async def test_max_turns_bounds_a_stalled_agents_session_through_its_recovery_turns():
    """Recovery lines (nudges, restated answers) are user turns: a silent agent is cut at --max-turns."""
    from harness.agents.noop_voice import NoOpVoiceAgent
    from harness.audio.espeak import user_voice
    from harness.audio.speech_bank import open_speech_source
    from harness.session.duplex_runner import DuplexConfig, run_duplex_session
    from harness.session.environment_port import InProcessEnvironment
    from harness.tasks.loader import load_task
    from tests.conftest import DEMO_DATA

    task_dir = DEMO_DATA / "tasks" / "demo_benefits_enrollment_001"

    async def session(max_turns: int):
        bundle = load_task(task_dir)
        speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")),
                                    task_id=bundle.task_id)
        config = DuplexConfig(speech=speech, privileged=True, max_turns=max_turns)
        return await run_duplex_session(bundle, NoOpVoiceAgent(), InProcessEnvironment(bundle.public_bundle()), config)

    unbounded, bounded = await session(44), await session(3)
    assert unbounded.turns > 3 and unbounded.reason != "max_turns"
    assert bounded.reason == "max_turns" and bounded.turns == 4  # the turn past the bound ends it, unspoken
