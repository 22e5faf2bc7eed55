"""What the simulated user has heard of each agent response: words released only as audio plays.

A provider's transcript is a claim about its audio. The user hears those words only when the
audio that carries them actually played on the agent channel and sounds like speech
(``docs/duplex.md``, "Only what played is heard"). Per item of a response:

- with word timings (``TranscriptDelta.words``), the words whose end has played are heard;
- otherwise the share of the text equal to the share of the item's audio played so far (of what
  arrived so far), cut back to a word boundary;
- never more characters than the response's voiced audio could carry at ``MAX_CHARS_PER_S``;
- nothing before the response's played audio is judged speech (``harness/audio/speech_likeness.py``)
  — after ``JUDGE_AFTER_MS`` of sound, or once all its audio has played if it is shorter;
- text of an item without audio is never heard (an item without an id is measured against the
  response's audio as a whole: a provider that gives no item ids still has one stream of words);
- audio the agent dropped itself (``PlayoutCleared``) never plays, so its words stay unheard;
- with ``verify`` (the session's default, ``hearing: asr``), a word is heard only once local ASR of
  the audio that played carries it (``harness/audio/spoken_words.py``): the played audio is cut into
  segments at pauses, each is transcribed off the frame, and a claimed word is released only as far
  as the recognised words reach; a word the audio does not carry stays blanked (``·``) in the
  heard text, and the response's verdict is ``mismatch``.

When a response is over (done and nothing of it left to play) its row is final: transcript
characters, played/voiced ms, the speech figures, heard and unheard characters, and a verdict.
Everything here is linear in the transcript: text is kept as its deltas and only the newly heard
slice, with a bounded window before it, is ever copied.
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from harness.audio.agent_asr import drop_false_starts
from harness.audio.frames import SAMPLE_RATE, samples_to_ms
from harness.audio.speech_likeness import SpeechLikeness
from harness.audio.spoken_words import align, word_spans

__all__ = ["BLANK", "HEARING_MODES", "Hearing", "JUDGE_AFTER_MS", "MAX_CHARS_PER_S", "PAUSE_MS", "SCAN_WINDOW_CHARS", "SEGMENT_MAX_MS",
           "SEGMENT_MIN_MS", "HeardSlice", "HeardSpeech", "Segment", "utterance_of"]

Hearing = Literal["asr", "claimed"]
#: ``asr``: a claimed word is heard only where ASR of the played audio carries it (the default);
#: ``claimed``: the transcript is taken as what the audio says (scripted test voices; no ASR).
HEARING_MODES: tuple[Hearing, ...] = ("asr", "claimed")

#: A generous ceiling on speaking rate: conversational English runs 12–16 characters a second,
#: espeak at 175 wpm about 20 (measured on the oracle's turns), fast speech rarely past 25.
MAX_CHARS_PER_S = 30
#: Sound heard before a response's audio is judged (and its first words released).
JUDGE_AFTER_MS = 500
#: Text before the newly heard part that act patterns see again (a phrase split by a frame).
SCAN_WINDOW_CHARS = 256
#: How far back a released share looks for a word boundary.
_BOUNDARY_LOOKBACK = 64
#: Played audio is cut into segments for ASR at a pause of ``PAUSE_MS`` once a segment has
#: ``SEGMENT_MIN_MS``, and without one at ``SEGMENT_MAX_MS`` (Whisper hears 30 s windows).
SEGMENT_MIN_MS = 1000
PAUSE_MS = 100
SEGMENT_MAX_MS = 20_000
#: A played 20 ms frame quieter than this (RMS, int16) is pause: -45 dBFS, the speech check's floor.
_QUIET_RMS = 32768 * 10 ** (-45 / 20)
#: The recognised words a row keeps (the start of them, for a reader to compare with the claim).
ASR_TEXT_CHARS = 2000
#: What stands in, character for character, for a claimed word the audio did not carry.
BLANK = "·"


@dataclass(frozen=True, slots=True)
class HeardSlice:
    """Newly heard words of one item: ``window[:before]`` was already heard, the rest is new."""

    response_id: str
    item_id: str | None
    window: str
    before: int


class _Text:
    """An item's transcript as its deltas, sliceable without joining the whole."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._ends: list[int] = []

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def append(self, text: str) -> int:
        """Add a delta; returns where it starts."""
        start = len(self)
        if text:
            self._parts.append(text)
            self._ends.append(start + len(text))
        return start

    def replace(self, text: str) -> None:
        self._parts, self._ends = ([text], [len(text)]) if text else ([], [])

    def slice(self, start: int, stop: int) -> str:
        if stop <= start:
            return ""
        first = bisect.bisect_right(self._ends, start)
        out: list[str] = []
        for index in range(first, len(self._parts)):
            part_start = self._ends[index] - len(self._parts[index])
            if part_start >= stop:
                break
            out.append(self._parts[index][max(0, start - part_start) : stop - part_start])
        return "".join(out)


@dataclass(frozen=True, slots=True)
class Segment:
    """Played audio of one response, cut for ASR: ``index`` orders the segments of the response."""

    response_id: str
    index: int
    pcm: np.ndarray
    final: bool


@dataclass
class _Item:
    text: _Text = field(default_factory=_Text)
    received: int = 0
    played: int = 0
    #: ``(text end, audio end ms)`` per timed word, both ascending.
    word_chars: list[int] = field(default_factory=list)
    word_ends_ms: list[int] = field(default_factory=list)
    heard: int = 0


@dataclass
class _Response:
    response_id: str
    items: dict[str | None, _Item] = field(default_factory=dict)
    meter: SpeechLikeness = field(default_factory=SpeechLikeness)
    received: int = 0
    played: int = 0
    dropped: int = 0
    done: bool = False
    cut: bool = False
    over: bool = False
    #: Characters heard over all items (kept as a sum: a frame must not cost O(items)).
    heard_chars: int = 0
    #: Played samples not yet cut into a segment (without ``verify``: kept only while it has no words).
    played_pcm: list[np.ndarray] | None = field(default_factory=list)
    pending_samples: int = 0
    quiet_samples: int = 0
    #: Recognised words per segment cut (``None`` until its ASR is in).
    segment_texts: list[str | None] = field(default_factory=list)
    #: Per item, how far (characters) the recognised words reach, and the claimed words they do not carry.
    reach: dict[str | None, int] = field(default_factory=dict)
    blanks: dict[str | None, list[tuple[int, int]]] = field(default_factory=dict)
    settled: bool = False
    #: A response without words: its ASR utterance as the user has heard it so far.
    asr_heard: str = ""

    def item(self, item_id: str | None) -> _Item:
        item = self.items.get(item_id)
        if item is None:
            item = self.items[item_id] = _Item()
        return item

    @property
    def transcript_chars(self) -> int:
        return sum(len(item.text) for item in self.items.values())

    @property
    def left_to_play(self) -> int:
        return self.received - self.played - self.dropped


class HeardSpeech:
    """Follows every response's words and played audio; says what became heard, and when."""

    def __init__(self, *, verify: bool = False) -> None:
        #: Words are heard only where ASR of the played audio carries them (see the module docstring).
        self.verify = verify
        self._responses: dict[str, _Response] = {}
        #: Done but still playing: the only ones :meth:`over` looks at (a frame costs O(1), not O(responses)).
        self._ending: dict[str, _Response] = {}
        self._last_played: _Response | None = None

    # -- what the agent sent -------------------------------------------------------------------

    def words(self, response_id: str, item_id: str | None, text: str,
              timings: tuple[tuple[str, int, int], ...] | None = None) -> None:
        """A transcript delta; ``timings`` are ``(word, start_ms, end_ms)`` from the item's first sample."""
        response = self._response(response_id)
        item = response.item(item_id)
        start = item.text.append(text)
        if text and not self.verify:
            response.played_pcm = None  # it has words: local ASR is not needed
        if timings:
            cursor = 0
            for word, _, end_ms in timings:
                found = text.find(word, cursor)
                if found < 0:
                    continue
                cursor = found + len(word)
                if item.word_ends_ms and end_ms < item.word_ends_ms[-1]:
                    end_ms = item.word_ends_ms[-1]  # keep both lists ascending
                item.word_chars.append(start + cursor)
                item.word_ends_ms.append(end_ms)

    def words_done(self, response_id: str, item_id: str | None, text: str) -> None:
        """The provider's final transcript of an item replaces its deltas (what was heard stays heard)."""
        response = self._response(response_id)
        item = response.item(item_id)
        item.text.replace(text)
        item.word_chars, item.word_ends_ms = [], []  # positions in the old text
        if item.heard > len(text):
            response.heard_chars -= item.heard - len(text)
            item.heard = len(text)
        if text and not self.verify:
            response.played_pcm = None

    def audio(self, response_id: str, item_id: str | None, pcm: np.ndarray) -> None:
        """Audio the agent queued for the response (int16): it plays after what it queued before."""
        response = self._response(response_id)
        response.item(item_id).received += len(pcm)
        response.received += len(pcm)
        response.meter.received(pcm)  # analysed ahead, a few array operations for many frames

    def cleared(self, response_ids: list[str]) -> None:
        """The agent dropped its queued audio: what had not played never will."""
        for response_id in response_ids:
            response = self._response(response_id)
            response.dropped += response.left_to_play
            response.cut = True
            response.meter.dropped()

    def done(self, response_id: str) -> None:
        response = self._response(response_id)
        response.done = True
        if not response.over:
            self._ending[response_id] = response

    # -- what played -----------------------------------------------------------------------------

    def played(self, frame: np.ndarray, played: list[tuple[str, str | None, int]]) -> list[HeardSlice]:
        """One frame played: ``played`` is ``(response_id, item_id, samples)`` in frame order."""
        offset = 0
        touched: list[_Response] = []
        for response_id, item_id, samples in played:
            response = self._response(response_id)
            pcm = frame[offset : offset + samples]
            offset += samples
            response.meter.played(pcm)
            if response.played_pcm is not None:
                response.played_pcm.append(pcm.copy())
                response.pending_samples += samples
                quiet = not samples or float(np.sqrt(np.mean(np.square(pcm, dtype=np.float32)))) < _QUIET_RMS
                response.quiet_samples = response.quiet_samples + samples if quiet else 0
            response.played += samples
            response.item(item_id).played += samples
            if not touched or touched[-1] is not response:
                touched.append(response)
            self._last_played = response
        return [heard for response in touched for heard in self._release(response)]

    def segments_due(self, response_ids: list[str]) -> list[Segment]:
        """Segments of these responses' played audio ready for ASR: at a pause, or too long to wait."""
        if not self.verify:
            return []
        due: list[Segment] = []
        for response_id in response_ids:
            response = self._responses[response_id]
            pending = samples_to_ms(response.pending_samples)
            paused = samples_to_ms(response.quiet_samples) >= PAUSE_MS and pending >= SEGMENT_MIN_MS
            if (paused or pending >= SEGMENT_MAX_MS) and response.pending_samples > response.quiet_samples:
                due.append(_cut(response, final=False))
        return due

    def last_segment(self, response_id: str) -> Segment | None:
        """The rest of a response that is over, for ASR (``None``: nothing needs hearing).

        With ``verify``, a response with words or audio always has one (its last, ``final``
        segment settles the words); without, only a response that played audio and gave no words.
        """
        response = self._responses[response_id]
        if not self.verify:
            if response.played_pcm is None or response.transcript_chars or not response.played_pcm:
                return None
        elif not response.played or not (response.transcript_chars or response.played_pcm):
            return None
        return _cut(response, final=True)

    def recognised(self, segment: Segment, text: str) -> list[HeardSlice]:
        """ASR of a segment is in: words the recognised speech now carries are released."""
        response = self._responses[segment.response_id]
        response.segment_texts[segment.index] = text
        if not self.verify or response.settled:
            return []
        if segment.final:
            # A segment whose ASR never came in (cut at the end of a realtime session) is evidence lost.
            _align(response, self.asr_text(response.response_id), final=True)
            return []
        if not response.transcript_chars or any(t is None for t in response.segment_texts):
            return _asr_heard(response)
        _align(response, self.asr_text(response.response_id), final=False)
        return self._release(response)

    def asr_text(self, response_id: str) -> str:
        """What local ASR heard in the response's played audio (all its segments, in order)."""
        return " ".join(t for t in self._responses[response_id].segment_texts if t)

    def asr_utterance(self, response_id: str) -> str:
        """A response that gave no words, as heard: one utterance. Segments end at pauses, not sentences,
        so the full stop ASR closes each with (not the last) is dropped: a pattern reads within one."""
        return _utterance(self._responses[response_id].segment_texts, keep_last_stop=True)

    def over(self) -> list[str]:
        """Responses that just ended (done, nothing left to play): their rows are now final."""
        ended = [r for r in self._ending.values() if r.left_to_play <= 0]
        for response in ended:
            response.over = True
            del self._ending[response.response_id]
        return [r.response_id for r in ended]

    def close(self) -> list[str]:
        """Session end: every response not yet over ends with what played."""
        for response in self._responses.values():
            if not response.over:
                response.dropped += max(0, response.left_to_play)
                self.done(response.response_id)
        return self.over()

    def finish(self, response_id: str) -> list[HeardSlice]:
        """The last words a response that is over releases (all of it, if it all played as speech)."""
        return self._release(self._responses[response_id], final=True)

    # -- reading -----------------------------------------------------------------------------

    def heard_text(self, response_id: str) -> str:
        """What the user heard of the response's words (a word the audio did not carry is blanked)."""
        response = self._responses[response_id]
        texts = (_blanked(response, item_id, 0, item.text.slice(0, item.heard))
                 for item_id, item in response.items.items())
        return " ".join(t for t in texts if t)

    def has_words(self, response_id: str) -> bool:
        response = self._responses.get(response_id)
        return response is not None and response.transcript_chars > 0

    def has_audio(self, response_id: str) -> bool:
        response = self._responses.get(response_id)
        return response is not None and response.received > 0

    def speech_playing(self) -> bool:
        """Whether the audio playing last is speech (``True`` until it can be judged)."""
        response = self._last_played
        if response is None:
            return True
        measure = response.meter.measure()
        return measure.speech_like or not measure.judgeable

    def row(self, response_id: str) -> dict[str, Any] | None:
        """The agreement of a response's words and audio (``None``: it had neither)."""
        response = self._responses[response_id]
        chars = response.transcript_chars
        if not chars and not response.received:
            return None
        measure = response.meter.measure()
        mismatched = _blanked_chars(response)
        heard = response.heard_chars - mismatched
        return {
            "response_id": response_id,
            "transcript_chars": chars,
            "received_ms": samples_to_ms(response.received),
            **measure.as_dict(),
            "played_ms": samples_to_ms(response.played),
            "heard_chars": heard,
            "unheard_chars": chars - heard,
            "cut": response.cut,
            "verdict": _verdict(response, chars, heard, measure.speech_like, mismatched),
            **({"mismatched_chars": mismatched, "asr_text": self.asr_text(response_id)[:ASR_TEXT_CHARS]}
               if self.verify else {}),
        }

    # -- the rule ------------------------------------------------------------------------------

    def _response(self, response_id: str) -> _Response:
        response = self._responses.get(response_id)
        if response is None:
            response = self._responses[response_id] = _Response(response_id)
        return response

    def _release(self, response: _Response, *, final: bool = False) -> list[HeardSlice]:
        measure = response.meter.measure()
        complete = response.done and response.left_to_play <= 0
        if not measure.speech_like or not (measure.active_ms >= JUDGE_AFTER_MS or complete or final):
            return []
        budget = measure.voiced_ms * MAX_CHARS_PER_S // 1000 - response.heard_chars
        released: list[HeardSlice] = []
        for item_id, item in response.items.items():
            if budget <= 0:
                break
            target = min(_playable(response, item_id, item, complete and not response.cut), item.heard + budget)
            at_word_end = False
            if self.verify:
                reach = response.reach.get(item_id, 0)
                at_word_end, target = target >= reach, min(target, reach)
            if target <= item.heard:
                continue
            start = max(0, item.heard - SCAN_WINDOW_CHARS)
            window = item.text.slice(start, target)
            if target < len(item.text) and not at_word_end:
                boundary = window.rfind(" ", max(0, len(window) - _BOUNDARY_LOOKBACK))
                if boundary > item.heard - start:
                    window = window[:boundary]
            new_heard = start + len(window)
            if new_heard <= item.heard:
                continue
            window = _blanked(response, item_id, start, window)
            released.append(HeardSlice(response.response_id, item_id, window, item.heard - start))
            budget -= new_heard - item.heard
            response.heard_chars += new_heard - item.heard
            item.heard = new_heard
        return released



def _cut(response: _Response, *, final: bool) -> Segment:
    pcm = np.concatenate(response.played_pcm) if response.played_pcm else np.zeros(0, np.int16)
    response.played_pcm = [] if not final else None
    response.pending_samples = response.quiet_samples = 0
    response.segment_texts.append(None)
    return Segment(response.response_id, len(response.segment_texts) - 1, pcm, final)


def _align(response: _Response, asr_text: str, *, final: bool) -> None:
    """Set how far each item's words are carried by the recognised words, and which are not."""
    spans: list[tuple[str | None, int, int]] = []
    claimed: list[str] = []
    all_played = response.done and response.left_to_play <= 0 and not response.cut
    # No more of the claim than the played audio could carry at the rate ceiling is weighed: the
    # rest cannot be heard yet, and an alignment must not cost more than the audio that played.
    room = response.played * MAX_CHARS_PER_S // SAMPLE_RATE + _BOUNDARY_LOOKBACK
    weighed: dict[str | None, int] = {}
    for item_id, item in response.items.items():
        if room <= 0:
            break
        # Settling, only the words that played are weighed: what never played is unheard anyway,
        # and must not count against the agreement of what did.
        played = _playable(response, item_id, item, all_played) if final else len(item.text)
        text = item.text.slice(0, min(played, room) if final else min(len(item.text), room))
        if len(text) < len(item.text) and not item.text.slice(len(text), len(text) + 1).isspace():
            text = text[: max(0, text.rfind(" "))]  # cut inside a word: weigh only whole words
        room -= len(text)
        weighed[item_id] = len(text)
        for start, end in word_spans(text):
            if start >= played:
                break
            spans.append((item_id, start, end))
            claimed.append(text[start:end])
    alignment = align(claimed, asr_text, final=final)
    reach: dict[str | None, int] = {}
    blanks: dict[str | None, list[tuple[int, int]]] = {}
    for index, ((item_id, start, end), carried) in enumerate(zip(spans, alignment.carried, strict=True)):
        if index < alignment.reached:
            reach[item_id] = end
            if not carried:
                spans_of = blanks.setdefault(item_id, [])
                if spans_of and spans_of[-1][1] + 1 == start:
                    spans_of[-1] = (spans_of[-1][0], end)  # one blank over neighbours, the space between too
                else:
                    spans_of.append((start, end))
    if final:
        reach = weighed  # what was weighed is settled; nothing else of the claim is ever heard
        response.settled = True
    response.reach, response.blanks = reach, blanks

def _blanked(response: _Response, item_id: str | None, start: int, text: str) -> str:
    """``text`` (the item's characters from ``start``) with the words the audio did not carry blanked."""
    blanks = response.blanks.get(item_id)
    if not blanks:
        return text
    chars = list(text)
    for begin, end in blanks:
        for position in range(max(begin, start), min(end, start + len(chars))):
            chars[position - start] = BLANK
    return "".join(chars)

def _blanked_chars(response: _Response) -> int:
    return sum(max(0, min(end, response.items[item_id].heard) - begin)
               for item_id, spans in response.blanks.items() for begin, end in spans)

def _playable(response: _Response, item_id: str | None, item: _Item, all_played: bool) -> int:
    """How much of an item's text its played audio covers (before the rate ceiling)."""
    length = len(item.text)
    if item.received:
        if all_played and item.played >= item.received:
            return length
        if item.word_ends_ms:
            reached = bisect.bisect_right(item.word_ends_ms, item.played * 1000 // SAMPLE_RATE)
            return item.word_chars[reached - 1] if reached else 0
        return length * item.played // item.received
    if item_id is None and response.received:
        # No item ids on the words: they are measured against the response's audio as a whole.
        if all_played:
            return length
        return length * response.played // response.received
    return 0


def _verdict(response: _Response, chars: int, heard: int, speech_like: bool, mismatched: int) -> str:
    """``speech`` (every word heard), ``no_audio``, ``no_words`` (audio only: local ASR hears it),
    ``not_speech``, ``mismatch`` (words that played but the audio does not carry), ``cut`` (the
    agent dropped the rest) or ``too_fast`` (more words than its voiced audio could carry)."""
    if not response.received:
        return "no_audio"
    if not chars:
        return "no_words"
    if not speech_like:
        return "not_speech"
    if mismatched:
        return "mismatch"
    if heard >= chars:
        return "speech"
    return "cut" if response.cut else "too_fast"


_FULL_STOP = re.compile(r"(?<=\.)\s+")


def _utterance(texts: list[str | None], *, keep_last_stop: bool) -> str:
    """Segments' ASR as one utterance: a segment ends at a pause, not a sentence, so the full stop
    the recognizer closes each with is dropped (``keep_last_stop``: but the response's last), and so
    is a word broken off at a pause and said again after it ("the s-" + "summary")."""
    said = [t for t in texts if t]
    last = said[-1:] if keep_last_stop else [t.removesuffix(".") for t in said[-1:]]
    return drop_false_starts(" ".join([*(t.removesuffix(".") for t in said[:-1]), *last]))


def utterance_of(text: str) -> str:
    """A whole response's ASR as one utterance: the recognizer's full stops inside it are its guess
    at sentences, dropped as the segments' join drops them at pauses (a read-back pattern reads
    within one sentence: "Let me read that back. Your health FSA" must still read as one)."""
    return _utterance(_FULL_STOP.split(text.strip()), keep_last_stop=True)


def _asr_heard(response: _Response) -> list[HeardSlice]:
    """A response without words, heard as far as its segments are recognised in order: the new part
    of its utterance, so acts in it fire mid-response as claimed words' do (a bot on a phone line
    gives no words; its read-back must reach the user while it still speaks)."""
    if response.transcript_chars or any(t is None for t in response.segment_texts):
        return []
    heard = _utterance(response.segment_texts, keep_last_stop=False)
    # What was heard before stays but for a broken-off word at its end, dropped once the next
    # segment says the word: the new part starts where the two texts part.
    kept = len(os.path.commonprefix([response.asr_heard, heard]))
    if len(heard) <= kept:
        return []
    start = max(0, kept - SCAN_WINDOW_CHARS)
    response.asr_heard = heard
    return [HeardSlice(response.response_id, None, heard[start:], kept - start)]
