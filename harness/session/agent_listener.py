"""What the simulated user hears of the agent's responses, and what it makes of the words.

Words are released only as their audio plays (``heard_speech.py``); acts in newly heard words fire
their events at once, mid-response. With ``hearing="asr"`` (the default) the played audio is cut
into segments at pauses and each goes through local ASR as a job off the frame (``deferred.py``);
claimed words are released only as far as the recognised words carry them. A response that is
over is logged (``SPEECH_AGREEMENT``) once its last segment is heard, and its heard text observed;
audio without words is heard through the same ASR, and text the patterns did not place through the
LLM observer, also off the frame.

A response without words (a bot on a phone line) is heard segment by segment while it plays, so a
read-back reaches the user mid-response; once it is over, its played audio is heard once more
whole (up to ``FITTED_MAX_S``), and that is what the user takes from it: Whisper makes out a word
better with the sentence around it than from the piece a pause cut off ("FSA" alone comes out "FFS").
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from harness.audio.agent_asr import FITTED_MAX_S, AgentTranscriber, asr_available, shared_transcriber
from harness.audio.frames import SAMPLE_RATE
from harness.events import EventBus, EventType
from harness.user.llm_act_observer import LlmActClassifier

from .deferred import DeferredWork
from .heard_speech import HeardSlice, HeardSpeech, Hearing, Segment, utterance_of
from .user_driver import UserDriver

__all__ = ["AgentListener"]

#: Samples of a wordless response kept to hear it whole once over; a longer one is not re-heard.
WHOLE_MAX_SAMPLES = FITTED_MAX_S * SAMPLE_RATE


class AgentListener:
    def __init__(self, driver: UserDriver, work: DeferredWork, log: EventBus,
                 observer: LlmActClassifier | None, *, hearing: Hearing = "asr") -> None:
        self.hearing = HeardSpeech(verify=hearing == "asr")
        self._driver = driver
        self._work = work
        self._log = log
        self._observer = observer
        self._transcriber: AgentTranscriber | None = None
        self._asr_missing = False
        #: The last window scanned and its act keys: the next slice of the same item starts with it.
        self._last_scan: tuple[str | None, list[str]] = (None, [])
        #: Played audio of each wordless response so far, to hear it whole once over (``None``:
        #: longer than ``WHOLE_MAX_SAMPLES``, heard by its segments only).
        self._whole: dict[str, list[np.ndarray] | None] = {}

    async def played(self, pcm: np.ndarray, played: list[tuple[str, str | None, int]], t: int) -> None:
        """The agent frame that played: its words become heard, and paused speech goes to ASR."""
        for heard in self.hearing.played(pcm, played):
            await self._observe_streaming(heard, t)
        if self.hearing.verify and played:
            for segment in self.hearing.segments_due(list(dict.fromkeys(r for r, _, _ in played))):
                self._submit(segment, t)
        await self.hear_over(self.hearing.over(), t)

    async def hear_over(self, response_ids: list[str], t: int, *, asr: bool = True) -> None:
        """Responses that are over (done, nothing left to play): their last words, and their record.

        Where ASR must hear the rest first it runs off the frame and the record follows it.
        ``asr=False`` at session end: nothing is delivered any more, so what ASR must still hear is
        heard here, in line (the frame loop has ended); audio without words is no longer heard.
        """
        for response_id in response_ids:
            segment = self.hearing.last_segment(response_id)
            if segment is None:
                await self._settle(response_id, t)
            elif asr:
                self._submit(segment, t)
            elif self.hearing.verify and self.hearing.has_words(response_id):
                await self._recognised(segment, await self._transcribe(segment.pcm, t), t)
            else:
                await self._settle(response_id, t)

    def _submit(self, segment: Segment, t: int) -> None:
        async def deliver(text: str, at: int) -> None:
            await self._recognised(segment, text, at)

        self._keep_whole(segment)
        self._work.submit("asr", self._transcribe(segment.pcm, t), due_ms=t, deliver=deliver)

    def _keep_whole(self, segment: Segment) -> None:
        if self.hearing.has_words(segment.response_id):
            return
        kept = self._whole.setdefault(segment.response_id, [])
        if kept is not None:
            kept.append(segment.pcm)
            if sum(len(pcm) for pcm in kept) > WHOLE_MAX_SAMPLES:
                self._whole[segment.response_id] = None

    async def _recognised(self, segment: Segment, text: str, t: int) -> None:
        for heard in self.hearing.recognised(segment, text):
            await self._observe_streaming(heard, t)
        if not segment.final:
            return
        whole = self._whole.pop(segment.response_id, None)
        if whole is None or len(whole) < 2 or self.hearing.has_words(segment.response_id):
            await self._settle(segment.response_id, t)
            return

        async def settle_whole(text: str, at: int) -> None:
            await self._settle(segment.response_id, at, heard_whole=text)

        self._work.submit("asr", self._transcribe(np.concatenate(whole), t), due_ms=t, deliver=settle_whole)

    async def _settle(self, response_id: str, t: int, *, heard_whole: str | None = None) -> None:
        """A response is over and heard: its last words, its record, and what the user makes of it
        (of a wordless response heard whole, ``heard_whole``)."""
        for heard in self.hearing.finish(response_id):
            await self._observe_streaming(heard, t)
        row = self.hearing.row(response_id)
        if row is None:
            return  # only tool calls
        self._log.emit(EventType.SPEECH_AGREEMENT, "harness", t, row)
        if row["transcript_chars"]:
            await self._hear_response(response_id, "adapter", self.hearing.heard_text(response_id), t)
        else:
            text = self.hearing.asr_utterance(response_id) if heard_whole is None else utterance_of(heard_whole)
            await self._hear_response(response_id, "asr", text, t)

    async def _observe_streaming(self, heard: HeardSlice, t: int) -> None:
        """Acts in words just heard fire their events at once, while the agent is still speaking.

        Only the newly heard slice and a bounded window before it are scanned (linear in the
        transcript): an act is new when it is in the window but not in the window's old part. The
        old part is the previous window whenever that one started at the item's first character
        (its first 256 characters, all of most items): its acts are those already found.
        """
        old_part = heard.window[: heard.before]
        last_window, last_keys = self._last_scan
        seen = Counter(keys := self._act_keys(heard.window))
        seen.subtract(last_keys if old_part == last_window else self._act_keys(old_part))
        self._last_scan = (heard.window, keys)
        new = [key for key, count in seen.items() for _ in range(count)]
        if new:
            await self._driver.fire_events(t, act_keys=new)

    def _act_keys(self, text: str) -> list[str]:
        return [a.key for a in self._driver.user.acts_in(text)]

    async def _hear_response(self, response_id: str, source: str, text: str, t: int) -> None:
        if not text:
            return
        acts = self._driver.hear_text(text, t, response_id=response_id, source=source)
        await self._driver.fire_events(t, act_keys=acts)
        if self._observer is not None:
            # What the patterns did not hear, an LLM may (cached: a rerun hears the same user).
            remaining = [key for key in self._driver.user.classifier_candidates() if key not in acts]
            if remaining:
                self._work.submit("observer", self._observer.classify(text, remaining), due_ms=t,
                                  deliver=self._hear_classified)

    async def _hear_classified(self, labels: list[str], t: int) -> None:
        if labels:
            await self._driver.fire_events(t, act_keys=self._driver.hear_classified(labels, t))

    async def _transcribe(self, audio: np.ndarray, t: int) -> str:
        if self._transcriber is None:
            if not asr_available():
                if not self._asr_missing:  # said once: every segment after it is unheard the same way
                    self._asr_missing = True
                    self._log.emit(EventType.INFRA_FAILURE, "harness", t, {
                        "error": "agent audio to hear and no local ASR (pip install 'apex-voice[asr]')",
                        "kind": "asr_unavailable"})
                return ""
            self._transcriber = shared_transcriber()
        return await self._transcriber.transcribe(audio)
