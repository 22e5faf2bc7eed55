"""The one definition of speaking (``floor_meter.py``) and the delivery records it decides
(``duplex_delivery.py``), frame by frame with scripted agent audio — no session.

Each case of ``docs/duplex.md`` "One definition of speaking": an onset in a pause (listed, never a
yield), during speech, an agent that finishes its queued audio in the window (finished, not
yielded), one that drops its queued audio (yielded), one that talks on; stop latency unclamped.
"""

from __future__ import annotations

import numpy as np

from harness.audio.frames import FRAME_MS, FRAME_SAMPLES
from harness.events import EventBus, EventType
from harness.metrics.duplex_metrics import duplex_metrics
from harness.session.channels import AgentChannel, AgentResponse
from harness.session.duplex_delivery import DeliveryTracker
from harness.session.floor_meter import FloorMeter
from harness.tasks.models import EventProgram, EventSpec
from harness.user.flow_engine import UserPlan
from tests.scripted_voice_agent import voiced_audio

MAX_STOP_MS = 1000


def _plan(action: str = "BARGE_IN") -> UserPlan:
    return UserPlan(id="p1", speech_act="CORRECT", fact_ids=[], floor_action=action, urgency="high",
                    event_id="e1", style={}, state_id="s")


class _Stage:
    """An agent channel played frame by frame into the floor meter and the delivery tracker."""

    def __init__(self) -> None:
        self.log = EventBus(run_id="r", task_version="1", condition="C2")
        spec = EventSpec(id="e1", type="MID_SPEECH_CORRECTION", start_window_ms=[600], max_stop_latency_ms=MAX_STOP_MS)
        self.deliveries = DeliveryTracker(EventProgram(events=[spec]), self.log)
        self.floor = FloorMeter(self.log)
        self.channel = AgentChannel()
        self.response = AgentResponse("r0")
        self.t = 0

    def queue(self, voiced_ms: int, silence_ms: int = 0) -> None:
        pcm = voiced_audio(voiced_ms) + bytes(2 * FRAME_SAMPLES * (silence_ms // FRAME_MS))
        self.channel.enqueue(self.response, None, pcm)

    def run(self, ms: int) -> None:
        for _ in range(ms // FRAME_MS):
            pcm, played = self.channel.next_frame()
            self.floor.played(pcm, self.t, response_id="r0" if played else None, audio_played=bool(played),
                              queued_samples=self.channel.queued_samples)
            self.t += FRAME_MS
            self.deliveries.observe_frame(self.t)

    def run_until_voice_ends(self) -> int:
        """Play until the queue is empty; the end of the last voiced frame."""
        while self.channel.queued_samples:
            self.run(FRAME_MS)
        segment = self.floor.segment
        assert segment is not None
        return segment.last_voiced_end_ms

    def barge_in(self, action: str = "BARGE_IN", duration_ms: int = 1200) -> None:
        self.deliveries.started(_plan(action), onset_ms=self.t, duration_ms=duration_ms, floor=self.floor)

    def clear(self) -> None:
        dropped = self.channel.queued_samples
        self.channel.clear()
        self.deliveries.agent_cleared(self.t, dropped_samples=dropped)

    def record(self) -> dict:
        self.deliveries.finish(self.t)
        records = [e.payload for e in self.log.of_type(EventType.DUPLEX_EVENT)]
        assert len(records) == 1
        return records[0]

    def segment_ends(self) -> list[int]:
        return [e.media_time_ms for e in self.log.of_type(EventType.AGENT_AUDIO_END)]


def test_an_onset_300_ms_after_the_agents_last_voice_is_a_pause_not_a_perfect_yield():
    stage = _Stage()
    stage.queue(2000)
    last_voice = stage.run_until_voice_ends()
    stage.run(last_voice + 300 - stage.t)
    assert stage.floor.segment is not None and not stage.floor.speaking  # segment open, nothing queued
    stage.barge_in()
    stage.run(2000)
    record = stage.record()
    assert record["onset_ms"] == last_voice + 300
    assert record["yield_opportunity"] is False and record["no_opportunity"] == "agent_paused"
    assert record["agent_speaking_at_onset"] is False
    assert record["agent_yielded"] is None and record["stop_latency_ms"] is None
    duplex = duplex_metrics(stage.log.events)
    assert duplex["n_scored"] == 0 and duplex["n_no_opportunity"] == 1 and duplex["fda"] is None


def test_an_onset_with_no_speech_segment_is_silence():
    stage = _Stage()
    stage.run(1000)
    stage.barge_in()
    record = stage.record()
    assert record["no_opportunity"] == "agent_silent" and record["yield_opportunity"] is False


def test_an_agent_that_drops_its_queued_audio_yielded_with_its_measured_latency():
    stage = _Stage()
    stage.queue(5000)
    stage.run(1000)
    assert stage.floor.speaking
    onset = stage.t
    stage.barge_in()
    stage.run(300)
    stage.clear()
    stage.run(2000)
    record = stage.record()
    stop = stage.segment_ends()[0]
    assert record["floor_outcome"] == "yielded" and record["agent_yielded"] is True
    assert record["stop_latency_ms"] == record["isl_ms"] == stop - onset
    assert 300 <= record["stop_latency_ms"] <= 300 + FRAME_MS  # the VAD may hear one frame of its tail
    assert record["agent_signalled_stop_ms"] == 300 and "unmeasured" not in record
    assert duplex_metrics(stage.log.events)["fda"] == 1.0


def test_an_agent_that_finishes_its_queued_audio_in_the_window_finished_and_did_not_yield():
    stage = _Stage()
    stage.queue(1400)
    stage.run(1000)
    onset = stage.t
    stage.barge_in()
    stage.run(2000)
    record = stage.record()
    assert record["yield_opportunity"] is True and record["agent_speaking_at_onset"] is True
    assert record["floor_outcome"] == "finished" and record["agent_yielded"] is False
    assert record["stop_latency_ms"] == stage.segment_ends()[0] - onset <= MAX_STOP_MS
    duplex = duplex_metrics(stage.log.events)
    assert duplex["n_scored"] == 0 and duplex["n_finished"] == 1 and duplex["n_no_opportunity"] == 0
    assert duplex["stop_latency_ms"]["n_expected"] == 0


def test_a_short_response_ending_within_a_back_channel_is_no_false_yield():
    stage = _Stage()
    stage.queue(1400)
    stage.run(1000)
    stage.barge_in("BACKCHANNEL", duration_ms=400)
    stage.run(2000)
    record = stage.record()
    assert record["expected_floor_action"] == "CONTINUE" and record["floor_outcome"] == "finished"
    assert duplex_metrics(stage.log.events)["fyr"] is None


def test_an_agent_that_talks_on_past_the_watch_is_unmeasured_and_says_why():
    stage = _Stage()
    stage.queue(9000)
    stage.run(1000)
    stage.barge_in()
    stage.run(6000)
    record = stage.record()
    assert record["floor_outcome"] == "kept_talking" and record["agent_yielded"] is False
    assert record["stop_latency_ms"] is None and record["unmeasured"] == "still_speaking"
    assert duplex_metrics(stage.log.events)["stop_latency_ms"]["miss_rate"] == 1.0


def test_a_session_that_ends_mid_watch_says_so():
    stage = _Stage()
    stage.queue(9000)
    stage.run(1000)
    stage.barge_in()
    stage.run(1000)
    record = stage.record()
    assert record["unmeasured"] == "session_ended" and record["stop_latency_ms"] is None


def test_a_drop_in_a_pause_of_queued_speech_is_a_yield_with_a_negative_latency_never_clamped():
    stage = _Stage()
    stage.queue(1000, silence_ms=300)
    stage.queue(2000)  # more speech after a 300 ms pause
    last_voice = 0
    while stage.t < 1000 + 200:
        stage.run(FRAME_MS)
        if stage.floor.segment is not None:
            last_voice = stage.floor.segment.last_voiced_end_ms
    assert stage.floor.speaking and stage.t > last_voice
    onset = stage.t
    stage.barge_in()
    stage.clear()  # drops the rest before another word
    stage.run(1500)
    record = stage.record()
    assert record["floor_outcome"] == "yielded"
    assert record["stop_latency_ms"] == last_voice - onset < 0


def test_scheduling_waits_for_the_window_while_the_agent_speaks_and_not_when_it_is_idle():
    stage = _Stage()
    stage.deliveries.schedule(_plan(), response_onset_ms=None)
    stage.queue(3000)
    stage.run(200)
    onset = stage.floor.onset_ms
    assert onset is not None and stage.floor.speaking
    assert stage.deliveries.due(stage.t, stage.floor, agent_busy=True) == []
    stage.run(onset + 600 - stage.t)
    assert [p.id for p in stage.deliveries.due(stage.t, stage.floor, agent_busy=True)] == ["p1"]
    idle = _Stage()
    idle.deliveries.schedule(_plan(), response_onset_ms=None)
    assert idle.deliveries.due(0, idle.floor, agent_busy=True) == []  # about to speak: wait
    assert [p.id for p in idle.deliveries.due(0, idle.floor, agent_busy=False)] == ["p1"]


def test_the_floor_meter_logs_segments_and_the_end_of_played_audio():
    stage = _Stage()
    stage.queue(600)
    stage.run(1400)
    types = [e.type for e in stage.log.events]
    assert EventType.AGENT_AUDIO_START in types and EventType.AGENT_AUDIO_END in types
    assert stage.floor.last_audio_end_ms == 600 and not stage.floor.speaking
    assert np.isclose(stage.segment_ends()[0], 600, atol=FRAME_MS * 3)
