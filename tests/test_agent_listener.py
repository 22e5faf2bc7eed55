"""The listener fires each act in heard words once, as the words become heard."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np

from harness.audio.agent_asr import AgentTranscriber
from harness.audio.frames import FRAME_SAMPLES, SAMPLE_RATE
from harness.events import EventBus
from harness.session import agent_listener
from harness.session.agent_listener import AgentListener
from harness.session.deferred import DeferredWork
from harness.session.heard_speech import HeardSlice
from harness.user.act_observer import ObservedAct
from tests.test_heard_speech import _speech


class _Driver:
    def __init__(self) -> None:
        self.scanned: list[str] = []
        self.fired: list[tuple[int, list[str]]] = []
        self.user = SimpleNamespace(acts_in=self._acts_in)

    def _acts_in(self, text: str) -> list[ObservedAct]:
        self.scanned.append(text)
        return [ObservedAct("CONFIRM", "plan", "pattern") for _ in re.finditer(r"dental plan", text, re.I)]

    async def fire_events(self, t: int, *, act_keys: list[str]) -> None:
        self.fired.append((t, act_keys))


def _slices(text: str, cuts: list[int], *, window: int) -> list[HeardSlice]:
    """What ``HeardSpeech`` releases: each new part, with up to ``window`` characters before it."""
    out, heard = [], 0
    for cut in cuts:
        start = max(0, heard - window)
        out.append(HeardSlice("r0", None, text[start:cut], heard - start))
        heard = cut
    return out


async def test_an_act_split_across_slices_fires_once_when_its_last_word_is_heard() -> None:
    text = "I updated the dental plan. Your dental plan is the premium one, and the dental plan starts in May."
    ends = [m.end() for m in re.finditer("dental plan", text)]
    cuts = [ends[0] - 4, ends[0] + 1, ends[1] - 3, ends[1], ends[2] - 2, len(text)]
    for window in (256, 30):  # the whole item in every window, or a window that moves
        driver = _Driver()
        listener = AgentListener(driver, DeferredWork(wait_at_boundary=True), None, None)  # type: ignore[arg-type]
        for t, heard in enumerate(_slices(text, cuts, window=window)):
            await listener._observe_streaming(heard, t)
        assert driver.fired == [(1, ["CONFIRM:plan"]), (3, ["CONFIRM:plan"]), (5, ["CONFIRM:plan"])]
        if window == 256:  # each old part is the window before it, already scanned (and the first, "")
            assert len(driver.scanned) == len(cuts) + 1


class _HearingDriver(_Driver):
    def __init__(self) -> None:
        super().__init__()
        self.heard: list[tuple[str, str]] = []

    def hear_text(self, text: str, t: int, *, response_id: str, source: str) -> list[str]:
        self.heard.append((source, text))
        return []


class _ByLength:
    """A recognizer that says how long the audio it heard was: pieces and the whole tell apart."""

    def transcribe_sync(self, pcm) -> str:
        return f"heard {round(len(pcm) / SAMPLE_RATE, 1)} seconds"

    def describe(self) -> dict:
        return {"asr": "by-length"}


async def _speak_without_words(listener: AgentListener, work: DeferredWork, pcm) -> None:
    listener.hearing.audio("r0", None, pcm)
    t = 0
    for index in range(len(pcm) // FRAME_SAMPLES):
        frame = pcm[index * FRAME_SAMPLES : (index + 1) * FRAME_SAMPLES]
        t += 20
        if index == len(pcm) // FRAME_SAMPLES - 1:
            listener.hearing.done("r0")
        await listener.played(frame, [("r0", None, len(frame))], t)
        await work.settle(t)
    await work.settle(t)  # the whole response, heard once more


async def test_a_response_without_words_is_heard_whole_once_it_is_over() -> None:
    """Pipecat bot run: the user took "FSA" as "FFS" from a piece a pause cut off; with the sentence
    around it the same recognizer hears it. Pieces still stream mid-response; the whole is what counts."""
    pause = np.zeros(SAMPLE_RATE * 300 // 1000, np.int16)
    pcm = np.concatenate([_speech(1500), pause, _speech(1500), pause, _speech(1000)])
    driver, work, log = _HearingDriver(), DeferredWork(wait_at_boundary=True), EventBus(run_id="run", task_version="1", condition="C2")
    listener = AgentListener(driver, work, log, None)  # type: ignore[arg-type]
    listener._transcriber = AgentTranscriber(_ByLength())
    await _speak_without_words(listener, work, pcm)
    assert driver.scanned[0] == "heard 1.6 seconds"  # the first piece (to its pause), heard while the rest played
    assert driver.heard == [("asr", f"heard {round(len(pcm) / SAMPLE_RATE, 1)} seconds")]
    (row,) = [e.payload for e in log.events if e.type == "SPEECH_AGREEMENT"]
    assert row["asr_text"].count("heard") == 3  # the record keeps what each segment said


async def test_a_wordless_response_longer_than_a_fitted_window_is_heard_by_its_segments(monkeypatch) -> None:
    monkeypatch.setattr(agent_listener, "WHOLE_MAX_SAMPLES", SAMPLE_RATE * 2)
    pause = np.zeros(SAMPLE_RATE * 300 // 1000, np.int16)
    pcm = np.concatenate([_speech(1500), pause, _speech(1500)])
    driver, work = _HearingDriver(), DeferredWork(wait_at_boundary=True)
    listener = AgentListener(driver, work, EventBus(run_id="run", task_version="1", condition="C2"), None)  # type: ignore[arg-type]
    listener._transcriber = AgentTranscriber(_ByLength())
    await _speak_without_words(listener, work, pcm)
    assert driver.heard == [("asr", "heard 1.6 seconds heard 1.7 seconds")] and listener._whole == {}
