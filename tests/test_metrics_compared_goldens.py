"""Golden recordings for `apex-voice metrics`: real espeak-ng speech placed at known times, each
variant's answer worked out by hand below (docs/metrics-compared.md has the definitions).

Every scenario first checks that the project's VAD finds the speech where it was placed (± one
20 ms frame); the hand answers then follow from the placement. Silero pads each segment by 30 ms
on both sides, so FDB v1.5's intervals are 60 ms wider where a segment meets the other channel.
"""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
import soundfile as sf
from typer.testing import CliRunner

from harness.audio.espeak import DEFAULT_USER_VOICE, synthesize
from harness.audio.frames import SAMPLE_RATE
from harness.cli.main import app
from harness.metrics.compared.eva import eva_metrics, latency_score
from harness.metrics.compared.fdb import fdb_v1, fdb_v15
from harness.metrics.compared.ours import ours_from_audio
from harness.metrics.compared.tau_voice import tau_voice_metrics
from harness.metrics.compared.tool_latency import tool_latency_summary
from harness.metrics.compared.trace import Trace, trace_from_audio
from harness.metrics.timeline import Interval

USER_LONG = "I would like to move my delivery to next Tuesday, please, if that still works for you."
USER_BARGE = "Wait, actually, make it Wednesday instead."
BACKCHANNEL = "Uh huh."
AGENT_LONG = ("Of course, I can move that delivery for you right away, and I will send a confirmation to your "
              "email address as soon as it is done.")
FILLER = "One moment while I check."
#: The agent channel's voice these hand-worked answers were measured on (a male espeak voice).
AGENT_ESPEAK_VOICE = "en-us+m7"

WEBRTC_MS = 40  # the project's VAD: onset and offset each within one 20 ms frame
SILERO_MS = 80  # Silero's 32 ms windows, on both ends
ASR_S = 0.2  # Whisper tiny.en word timestamps


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> dict[str, np.ndarray]:
    cache = tmp_path_factory.mktemp("tts")

    async def both() -> dict[str, np.ndarray]:
        user = await synthesize([USER_LONG, USER_BARGE, BACKCHANNEL], DEFAULT_USER_VOICE, cache_dir=cache)
        agent = await synthesize([AGENT_LONG, FILLER], AGENT_ESPEAK_VOICE, cache_dir=cache)
        return {text: clip.pcm for text, clip in {**user, **agent}.items()}

    return asyncio.run(both())


def _place(length_ms: int, parts: list[tuple[int, np.ndarray, int]]) -> np.ndarray:
    """One channel: ``(start_ms, clip, kept_ms)`` pieces (each cut inside a word) on silence."""
    channel = np.zeros(length_ms * SAMPLE_RATE // 1000, dtype=np.int16)
    for start_ms, pcm, kept_ms in parts:
        kept = pcm[: kept_ms * SAMPLE_RATE // 1000]
        first = start_ms * SAMPLE_RATE // 1000
        channel[first : first + len(kept)] = kept
    return channel


def _scene(clips, length_ms, user, agent, *, backchannels=(), tool_calls=()) -> Trace:
    user_pcm = _place(length_ms, [(s, clips[t], k) for s, t, k in user])
    agent_pcm = _place(length_ms, [(s, clips[t], k) for s, t, k in agent])
    trace = trace_from_audio(user_pcm, agent_pcm, SAMPLE_RATE, tool_calls=[Interval(*c) for c in tool_calls])
    trace.backchannels = [Interval(*b) for b in backchannels]
    _placed(trace.user, [(s, s + k) for s, _, k in user])
    _placed(trace.agent, [(s, s + k) for s, _, k in agent])
    return trace


def _placed(found: list[Interval], expected: list[tuple[int, int]]) -> None:
    assert len(found) == len(expected), (found, expected)
    for interval, (start, end) in zip(found, expected, strict=True):
        assert abs(interval.start_ms - start) <= 20 and abs(interval.end_ms - end) <= 20, (found, expected)


def _tau(trace: Trace) -> dict:
    return tau_voice_metrics(trace)


# --- 1. a clean turn exchange ------------------------------------------------------------------
#   user  |----U 1100..3500----|
#   agent                          |----A 4100..7000----|
#   ticks: speech touching a tick fills it: user ticks 5..17 (exclusive end 18), agent from tick 20.
#   τ-Voice reads this 600 ms gap as 2 ticks, 0.4 s.


@pytest.fixture(scope="module")
def clean(clips) -> Trace:
    return _scene(clips, 7600, [(1100, USER_LONG, 2400)], [(4100, AGENT_LONG, 2900)])


def test_clean_exchange(clean):
    tau = _tau(clean)
    assert tau["response_latency_mean"]["value"] == pytest.approx(0.4)  # (20 − 18) ticks × 0.2 s
    assert tau["response_rate"]["value"] == 1.0 and tau["response_rate"]["n"] == 1
    assert tau["response_rate"]["hidden"]  # 1 event < 10: the leaderboard hides it
    assert tau["agent_interruption_rate"]["value"] == 0.0
    assert tau["yield_rate"]["value"] is None
    eva = eva_metrics(clean)
    assert eva["n_turns"] == 1
    assert eva["mean_latency_ms"] == pytest.approx(600, abs=WEBRTC_MS)  # 4100 − 3500
    assert eva["score"] == 1.0  # 600 ms is inside the 500–2000 ms sweet spot
    assert eva["on_time_rate"] == 1.0
    v15 = fdb_v15(clean)
    assert v15["n_stop"] == 0 and v15["n_response"] == 1
    assert v15["response_latency_mean"] == pytest.approx(0.54, abs=SILERO_MS / 1000)  # 600 − 2 × 30 ms pad
    ours = ours_from_audio(clean)
    assert ours["rsl_median_ms"] == pytest.approx(600, abs=WEBRTC_MS) and ours["rsl_n"] == 1


# --- 2. a barge-in the agent yields to in 400 ms -----------------------------------------------
#   agent |----A 600..3500----|            |----A 5500..8400----|
#   user                 |--U 3100..4900--|
#   τ: the user starts in tick 15; the agent's speech touches ticks 15, 16 and 17, tick 18 is
#   silent → 3 ticks, 0.6 s for a 400 ms yield


def test_barge_in_yielded_in_400_ms(clips):
    trace = _scene(clips, 9000, [(3100, USER_BARGE, 1800)], [(600, AGENT_LONG, 2900), (5500, AGENT_LONG, 2900)])
    tau = _tau(trace)
    assert tau["yield_latency_mean"]["value"] == pytest.approx(0.6)
    assert tau["yield_rate"]["value"] == 1.0
    assert tau["response_latency_mean"]["value"] == pytest.approx(0.4)  # user end tick 25 → agent tick 27
    eva = eva_metrics(trace)
    [turn] = eva["per_turn"]
    assert turn["user_interrupted"] and not turn["agent_interrupted"]
    assert turn["yield_ms"] == pytest.approx(400, abs=WEBRTC_MS)  # 3500 − 3100
    assert eva["score"] == pytest.approx(0.8, abs=0.02)  # 1 − 400 / 2000
    assert eva["mean_latency_ms"] == pytest.approx(600, abs=WEBRTC_MS)  # 5500 − 4900
    v15 = fdb_v15(trace)
    assert v15["n_stop"] == 1
    assert v15["stop_latency_mean"] == pytest.approx(0.46, abs=SILERO_MS / 1000)  # [3070, 3530]
    assert v15["response_latency_mean"] == pytest.approx(0.54, abs=SILERO_MS / 1000)  # 4930 → 5470
    ours = ours_from_audio(trace)
    assert ours["stop_latency_median_ms"] == pytest.approx(400, abs=WEBRTC_MS)
    assert ours["yield_rate"] == 1.0
    assert ours["rsl_median_ms"] == pytest.approx(600, abs=WEBRTC_MS) and ours["rsl_n"] == 1


# --- 3. a barge-in the agent talks over ------------------------------------------------------
#   agent |--------A 600..7000--------|        |--A 7700..10600--|
#   user           |--U 2100..3900--|
#   τ: no silent agent tick in [10, 20) → no_yield; the user ends over agent speech → no turn


def test_barge_in_talked_over(clips):
    trace = _scene(clips, 11000, [(2100, USER_BARGE, 1800)], [(600, AGENT_LONG, 6400), (7700, AGENT_LONG, 2900)])
    tau = _tau(trace)
    assert tau["yield_rate"]["value"] == 0.0 and tau["yield_rate"]["n"] == 1
    assert tau["yield_latency_mean"]["value"] is None
    assert tau["counts"]["response_total"] == 0 and tau["agent_interruption_rate"]["value"] is None
    eva = eva_metrics(trace)
    [turn] = eva["per_turn"]
    assert turn["yield_ms"] == pytest.approx(4900, abs=WEBRTC_MS)  # 7000 − 2100
    assert eva["score"] == 0.0  # yield ≥ 2000 ms
    v15 = fdb_v15(trace)
    # FDB reads the whole overlap as "stop latency", though the agent never stopped for the user.
    assert v15["stop_latency_mean"] == pytest.approx(1.86, abs=SILERO_MS / 1000)  # [2070, 3930]
    assert v15["response_latency_mean"] == pytest.approx(3.74, abs=SILERO_MS / 1000)  # 3930 → 7670
    ours = ours_from_audio(trace)
    assert ours["yield_rate"] == 0.0 and ours["stop_latency_n"] == 0  # 4900 ms > 1500 ms window
    assert ours["rsl_median_ms"] == pytest.approx(3800, abs=WEBRTC_MS)  # 7700 − 3900


# --- 4. a back-channel ----------------------------------------------------------------------
#   agent |--------A 600..7000--------|
#   user             |uh huh 2600..3100|


def test_backchannel(clips):
    def scene(marked: bool) -> Trace:
        return _scene(clips, 7600, [(2600, BACKCHANNEL, 500)], [(600, AGENT_LONG, 6400)],
                      backchannels=[(2600, 3100)] if marked else [])

    marked, foreign = scene(True), scene(False)
    tau = _tau(marked)
    assert tau["selectivity_backchannel"]["value"] == 1.0  # the agent talks on through ticks 13..17
    assert tau["yield_rate"]["value"] is None and tau["counts"]["response_total"] == 0
    # Without the session's mark, audio alone sees a barge-in the agent did not yield to.
    assert _tau(foreign)["yield_rate"]["value"] == 0.0 and _tau(foreign)["selectivity_backchannel"]["value"] is None
    assert ours_from_audio(marked)["yield_expected"] == 0
    assert ours_from_audio(foreign)["yield_expected"] == 1 and ours_from_audio(foreign)["yield_rate"] == 0.0
    assert eva_metrics(marked)["n_turns"] == 0 and eva_metrics(marked)["score"] is None
    # FDB v1.5 reports the back-channel's overlap as a stop latency: 500 ms + 2 × 30 ms pad.
    assert fdb_v15(marked)["stop_latency_mean"] == pytest.approx(0.56, abs=SILERO_MS / 1000)


# --- 5. a pause inside a user turn ----------------------------------------------------------
#   user  |--U 1100..2500--| 600 ms |--U 3100..4500--|
#   agent                                              |--A 5100..8000--|


@pytest.fixture(scope="module")
def paused(clips) -> Trace:
    return _scene(clips, 8600, [(1100, USER_LONG, 1400), (3100, USER_BARGE, 1400)], [(5100, AGENT_LONG, 2900)])


def test_pause_inside_a_user_turn(paused):
    tau = _tau(paused)
    # Two user segments: the first ends before tick 13 and the user speaks again (tick 15) before
    # the agent (tick 25): a no_response; the second ends before tick 23: answered after 2 ticks.
    assert tau["response_rate"]["value"] == 0.5 and tau["response_rate"]["n"] == 2
    assert tau["response_latency_mean"]["value"] == pytest.approx(0.4)
    eva = eva_metrics(paused)
    assert eva["n_turns"] == 1 and eva["mean_latency_ms"] == pytest.approx(600, abs=WEBRTC_MS)
    v15 = fdb_v15(paused)
    assert v15["user_segments"] == 1  # the padded gap 2530 → 3070 (540 ms) merges at ≤ 0.6 s
    assert v15["n_response"] == 1 and v15["response_latency_mean"] == pytest.approx(0.54, abs=SILERO_MS / 1000)
    ours = ours_from_audio(paused)
    assert ours["rsl_n"] == 1 and ours["rsl_median_ms"] == pytest.approx(600, abs=WEBRTC_MS)


# --- 6. speech during a tool call -----------------------------------------------------------
#   user  |--U 1100..3500--|
#   tool                      [call 3700 ............ result 6700)
#   agent                          |filler 4100..5300|              |--A 7100..10000--|


def test_speech_during_a_tool_call(clips):
    trace = _scene(clips, 10600, [(1100, USER_LONG, 2400)], [(4100, FILLER, 1200), (7100, AGENT_LONG, 2900)],
                   tool_calls=[(3700, 6700)])
    eva = eva_metrics(trace)
    [turn] = eva["per_turn"]
    assert turn["has_tool_call"] and turn["latency_ms"] == pytest.approx(600, abs=WEBRTC_MS)
    assert eva["score"] == 1.0  # the filler is the first assistant audio: 600 ms
    assert _tau(trace)["response_latency_mean"]["value"] == pytest.approx(0.4)  # the filler answers
    v15 = fdb_v15(trace)
    assert v15["model_segments"] == 2  # 5330 → 7070 is far beyond the 0.5 s merge
    assert v15["response_latency_mean"] == pytest.approx(0.54, abs=SILERO_MS / 1000)
    # Ours, tool-aware: the first word 600 ms after the user; the call is open 3000 ms, of which the
    # filler covers 1200: 1800 ms of dead air; nothing said before the call; answered after it.
    tools = tool_latency_summary(trace)
    [turn] = tools["per_turn"]
    assert turn["first_word_ms"] == pytest.approx(600, abs=WEBRTC_MS) and turn["tool_open_ms"] == 3000
    assert turn["dead_air_in_tool_ms"] == pytest.approx(1800, abs=WEBRTC_MS)
    assert turn["speech_before_tool_ms"] == 0 and not turn["filler_only"]
    assert tools["first_word_median_ms_tool_turns"] == turn["first_word_ms"] and tools["speech_before_tool_rate"] == 0


def test_a_preamble_then_silence_is_a_filler_only_turn(clips):
    #   user  |--U 1100..3500--|
    #   agent                       |filler 4100..5300|       (no answer)
    #   tool                               [call 4500 ...... result 6700)
    trace = _scene(clips, 8000, [(1100, USER_LONG, 2400)], [(4100, FILLER, 1200)], tool_calls=[(4500, 6700)])
    [turn] = tool_latency_summary(trace)["per_turn"]
    assert turn["speech_before_tool_ms"] == pytest.approx(400, abs=WEBRTC_MS)  # 4100 → 4500
    assert turn["dead_air_in_tool_ms"] == pytest.approx(2200 - 800, abs=WEBRTC_MS)  # open 2200, filler 4500..5300
    assert turn["filler_only"]


def test_eva_scores_a_tool_turn_on_its_own_curve(clips):
    # No filler: the first agent audio comes 3600 ms after the user; EVA forgives it on a tool turn.
    def score(tool_calls) -> float:
        trace = _scene(clips, 10600, [(1100, USER_LONG, 2400)], [(7100, AGENT_LONG, 2900)], tool_calls=tool_calls)
        return eva_metrics(trace)["score"]

    assert score([(3700, 6700)]) == 1.0  # ≤ 4000 ms on a tool turn
    assert score([]) == pytest.approx((5000 - 3600) / 3000, abs=0.015)  # falling from 2000 to 5000 ms
    assert latency_score(-500) == 0.0 and latency_score(0) == 0.5 and latency_score(3999, True) == 1.0
    assert latency_score(5500, True) == pytest.approx(0.5) and latency_score(5500) == 0.0


# --- FDB v1: ASR word timings (Whisper) ---------------------------------------------------------


@pytest.mark.slow
def test_fdb_v1_take_over_and_latency_from_asr_words(clean, paused):
    from harness.metrics.compared.fdb import agent_words

    v1 = fdb_v1(clean, agent_words(clean))
    assert v1["smooth_tor"] == 1.0 and v1["n_smooth"] == 1
    assert v1["smooth_latency_mean"] == pytest.approx(0.6, abs=ASR_S)  # first word at ~4.1 s − 3.5 s
    # The pause: the first user segment gets no words before the second starts (TOR 0).
    v1 = fdb_v1(paused, agent_words(paused))
    assert v1["smooth_tor"] == 0.5 and v1["n_smooth"] == 2


def test_fdb_v1_rule_on_given_words(clean):
    # Words spanning < 1 s and ≤ 3 of them are no take-over; a 4th word makes one.
    three = [(4.1, 4.3), (4.4, 4.6), (4.7, 4.9)]
    assert fdb_v1(clean, three)["smooth_tor"] == 0.0
    v1 = fdb_v1(clean, [*three, (4.95, 5.0)])
    assert v1["smooth_tor"] == 1.0 and v1["smooth_latency_mean"] == pytest.approx(4.1 - clean.user[0].end_ms / 1000)


# --- the CLI on a pair of 16 kHz mono files (not made by apex-voice) --------------------------


def test_cli_on_two_16k_mono_files(clips, tmp_path):
    user = _place(7600, [(1100, clips[USER_LONG], 2400)])
    agent = _place(7600, [(4100, clips[AGENT_LONG], 2900)])
    from harness.audio.resample import resample_clip

    for name, pcm in (("u.wav", user), ("a.wav", agent)):
        sf.write(tmp_path / name, np.clip(np.round(resample_clip(pcm.astype(np.float64), SAMPLE_RATE, 16_000)),
                                          -32768, 32767).astype(np.int16), 16_000, subtype="PCM_16")
    result = CliRunner().invoke(app, ["metrics", "--user", str(tmp_path / "u.wav"), "--agent", str(tmp_path / "a.wav"),
                                      "--no-asr", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["source_rate"] == 16_000 and not report["session"]
    rows = {row["variant"]: row["value"] for row in report["rows"]}
    assert rows["τ-Voice L_R (mean, 200 ms ticks)"] == pytest.approx(400)
    assert rows["EVA mean_latency_ms"] == pytest.approx(600, abs=WEBRTC_MS)
    assert rows["ours RSL median (audio)"] == pytest.approx(600, abs=WEBRTC_MS)
    assert rows["FDB v1.5 response latency (mean)"] == pytest.approx(540, abs=SILERO_MS)
    assert "ours RSL median (events = result.json)" not in rows


def test_cli_usage_errors(tmp_path):
    runner = CliRunner()
    assert runner.invoke(app, ["metrics"]).exit_code == 2
    assert runner.invoke(app, ["metrics", "--user", str(tmp_path / "u.wav")]).exit_code == 2
    (tmp_path / "mono.wav").write_bytes(b"")
    assert runner.invoke(app, ["metrics", str(tmp_path / "missing.wav")]).exit_code == 2
    sf.write(tmp_path / "mono.wav", np.zeros(16_000, dtype=np.int16), 16_000)
    bad = runner.invoke(app, ["metrics", str(tmp_path / "mono.wav")])
    assert bad.exit_code == 2 and "want 2" in bad.output



def test_without_faster_whisper_fdb_is_left_out_and_said_so(clean, monkeypatch):
    import importlib.util

    from harness.metrics.compared.report import Opened, compare

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "faster_whisper" else real(name, *a))
    report = compare(Opened(clean, "clean", None))
    assert not any(row.variant.startswith("FDB") for row in report.rows)
    assert "apex-voice[asr]" in report.unavailable["fdb"]
    assert any(row.variant.startswith("EVA") for row in report.rows)
