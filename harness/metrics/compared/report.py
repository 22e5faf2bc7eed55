"""Every variant on one recording: the report ``apex-voice metrics`` prints and writes as JSON.

The table lines up what the sources call by one name and define differently: response latency,
stop (yield) latency, yield / take-over rate, agent interruptions, and the sources' scores. Times
are in milliseconds whatever unit the source reports in.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from harness.events.jsonl import read_events

from .eva import eva_metrics
from .fdb import agent_words, fdb_v1, fdb_v15
from .ours import ours_from_audio, ours_from_events
from .tau_voice import tau_voice_metrics
from .tool_latency import tool_latency_summary
from .trace import RecordingError, Trace, load_recording, trace_from_audio

__all__ = ["MetricRow", "MetricsReport", "compare", "open_recording"]


class MetricRow(BaseModel):
    measure: str
    variant: str
    value: float | None
    unit: str
    n: int | None = None
    note: str = ""


class MetricsReport(BaseModel):
    recording: str
    session: bool
    duration_ms: int
    source_rate: int
    speech: dict[str, int]
    rows: list[MetricRow]
    variants: dict[str, Any]
    #: ``result.json`` of the session's cell, when found (ours must equal it).
    result_json: dict[str, Any] | None = None
    #: Variants left out, and why (FDB needs faster-whisper's Silero model: the ``asr`` extra).
    unavailable: dict[str, str] = {}


@dataclass
class Opened:
    trace: Trace
    label: str
    result_json: dict[str, Any] | None


def _session_dir(path: Path) -> Path | None:
    """``path`` itself when it holds ``events.jsonl``, else the one session directory below a cell."""
    if (path / "events.jsonl").is_file():
        return path
    found = sorted(p.parent for p in path.glob("*/events.jsonl"))
    if len(found) > 1:
        raise RecordingError(f"{path}: {len(found)} sessions below it; name one of {[str(p) for p in found]}")
    return found[0] if found else None


def open_recording(path: Path | None = None, *, user: Path | None = None, agent: Path | None = None) -> Opened:
    """A stereo file, two mono files, or one of our session / cell directories."""
    if path is not None and path.is_dir():
        session = _session_dir(path)
        if session is None:
            raise RecordingError(f"{path}: no events.jsonl here or in a session directory below it")
        stereo = session / "audio" / "stereo.wav"
        if not stereo.is_file():
            raise RecordingError(f"{session}: no audio/stereo.wav (the session kept no audio)")
        user_pcm, agent_pcm, rate = load_recording(stereo)
        result_path = session.parent / "result.json"
        result = json.loads(result_path.read_text()) if result_path.is_file() else None
        return Opened(trace_from_audio(user_pcm, agent_pcm, rate, events=read_events(session / "events.jsonl")),
                      str(session), result)
    user_pcm, agent_pcm, rate = load_recording(path, user=user, agent=agent)
    return Opened(trace_from_audio(user_pcm, agent_pcm, rate), str(path or f"{user} + {agent}"), None)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def _tool_rows(tools: dict[str, Any]) -> list[MetricRow]:
    n = tools["tool_turns"]
    return [
        MetricRow(measure="tool-aware latency", variant="ours first word after the user, tool turns (median)",
                  value=tools["first_word_median_ms_tool_turns"], unit="ms", n=n),
        MetricRow(measure="tool-aware latency", variant="ours first word after the user, plain turns (median)",
                  value=tools["first_word_median_ms_plain_turns"], unit="ms", n=tools["turns"] - n),
        MetricRow(measure="tool-aware latency", variant="ours dead air while a tool call is open (total)",
                  value=tools["dead_air_in_tool_ms"], unit="ms", n=n),
        MetricRow(measure="tool-aware latency", variant="ours tool turns with speech before the call",
                  value=tools["speech_before_tool_rate"], unit="fraction", n=n),
        MetricRow(measure="tool-aware latency", variant="ours filler-only tool turns", value=tools["filler_only_turns"],
                  unit="turns", n=n),
    ]


def _rows(tau: dict[str, Any], eva: dict[str, Any], v15: dict[str, Any] | None, v1: dict[str, Any] | None,
          ours_audio: dict[str, Any], ours_events: dict[str, Any] | None) -> list[MetricRow]:
    rows = [
        MetricRow(measure="response latency", variant="τ-Voice L_R (mean, 200 ms ticks)",
                  value=_ms(tau["response_latency_mean"]["value"]), unit="ms", n=tau["response_latency_mean"]["n"],
                  note="hidden on the leaderboard" if tau["response_latency_mean"]["hidden"] else ""),
        MetricRow(measure="response latency", variant="EVA mean_latency_ms", value=eva["mean_latency_ms"], unit="ms",
                  n=eva["n_turns"]),
        MetricRow(measure="response latency", variant="EVA p50_latency_ms", value=eva["p50_latency_ms"], unit="ms",
                  n=eva["n_turns"]),
    ]
    if v15 is not None:
        rows.append(MetricRow(measure="response latency", variant="FDB v1.5 response latency (mean)",
                              value=_ms(v15["response_latency_mean"]), unit="ms", n=v15["n_response"]))
    if v1 is not None:
        rows.append(MetricRow(measure="response latency", variant="FDB v1 smooth-turn latency (ASR words)",
                              value=_ms(v1["smooth_latency_mean"]), unit="ms", n=v1["n_smooth"]))
    rows.append(MetricRow(measure="response latency", variant="ours RSL median (audio)",
                          value=ours_audio["rsl_median_ms"], unit="ms", n=ours_audio["rsl_n"]))
    if ours_events is not None:
        rows.append(MetricRow(measure="response latency", variant="ours RSL median (events = result.json)",
                              value=ours_events["rsl_median_ms"], unit="ms", n=ours_events["rsl_n"]))
    rows += [
        MetricRow(measure="stop latency", variant="τ-Voice L_Y (mean, within 2.0 s)",
                  value=_ms(tau["yield_latency_mean"]["value"]), unit="ms", n=tau["yield_latency_mean"]["n"],
                  note="hidden on the leaderboard" if tau["yield_latency_mean"]["hidden"] else ""),
        MetricRow(measure="stop latency", variant="EVA user_interruption.mean_yield_ms",
                  value=eva["user_interruption.mean_yield_ms"], unit="ms"),
        *([MetricRow(measure="stop latency", variant="FDB v1.5 stop latency (mean overlap)",
                     value=_ms(v15["stop_latency_mean"]), unit="ms", n=v15["n_stop"])] if v15 is not None else []),
        MetricRow(measure="stop latency", variant="ours stop latency median (audio)",
                  value=ours_audio["stop_latency_median_ms"], unit="ms", n=ours_audio["stop_latency_n"]),
    ]
    if ours_events is not None:
        rows.append(MetricRow(measure="stop latency", variant="ours stop latency median (events = result.json)",
                              value=ours_events["stop_latency_median_ms"], unit="ms", n=ours_events["stop_latency_n"]))
    rows += [
        MetricRow(measure="yield rate", variant="τ-Voice R_Y", value=tau["yield_rate"]["value"], unit="fraction",
                  n=tau["yield_rate"]["n"], note="hidden on the leaderboard" if tau["yield_rate"]["hidden"] else ""),
        MetricRow(measure="yield rate", variant="ours yield rate (audio)", value=ours_audio["yield_rate"],
                  unit="fraction", n=ours_audio["yield_expected"]),
    ]
    if ours_events is not None:
        rows.append(MetricRow(measure="yield rate", variant="ours yield rate (events = result.json)",
                              value=ours_events["yield_rate"], unit="fraction", n=ours_events["yield_expected"]))
    if v1 is not None:
        rows += [
            MetricRow(measure="take-over", variant="FDB v1 smooth-turn TOR", value=v1["smooth_tor"], unit="fraction",
                      n=v1["n_smooth"]),
            MetricRow(measure="take-over", variant="FDB v1 user-interruption TOR", value=v1["interruption_tor"],
                      unit="fraction", n=v1["n_interruption"]),
        ]
    rows += [
        MetricRow(measure="take-over", variant="τ-Voice R_R", value=tau["response_rate"]["value"], unit="fraction",
                  n=tau["response_rate"]["n"]),
        MetricRow(measure="agent interruptions", variant="τ-Voice I_A (per user turn)",
                  value=tau["agent_interruption_rate"]["value"], unit="per turn", n=tau["agent_interruption_rate"]["n"]),
        MetricRow(measure="agent interruptions", variant="EVA agent_interruption.rate",
                  value=eva["agent_interruption.rate"], unit="fraction of turns", n=eva["n_turns"]),
        MetricRow(measure="agent interruptions", variant="EVA agent_interruption.mean_overlap_ms",
                  value=eva["agent_interruption.mean_overlap_ms"], unit="ms"),
        MetricRow(measure="overlap", variant="ours overlap ratio (audio)", value=ours_audio["overlap_ratio"],
                  unit="fraction"),
        MetricRow(measure="back-channels", variant="τ-Voice S_BC", value=tau["selectivity_backchannel"]["value"],
                  unit="fraction", n=tau["selectivity_backchannel"]["n"]),
        MetricRow(measure="score", variant="EVA turn_taking score", value=eva["score"], unit="0..1", n=eva["n_turns"]),
    ]
    return rows


def compare(opened: Opened, *, asr: bool = True) -> MetricsReport:
    """Every variant on the opened recording (``asr=False`` leaves out FDB v1, which needs Whisper)."""
    trace = opened.trace
    tau, eva = tau_voice_metrics(trace), eva_metrics(trace)
    unavailable: dict[str, str] = {}
    v15 = v1 = None
    if importlib.util.find_spec("faster_whisper") is None:
        unavailable["fdb"] = "Full-Duplex-Bench needs Silero and Whisper: pip install 'apex-voice[asr]'"
    else:
        v15 = fdb_v15(trace)
        v1 = fdb_v1(trace, agent_words(trace)) if asr else None
    ours_audio = ours_from_audio(trace)
    ours_events = ours_from_events(trace) if trace.events is not None else None
    tools = tool_latency_summary(trace)
    variants: dict[str, Any] = {"tau_voice": tau, "eva": eva, "fdb_v1_5": v15, "fdb_v1": v1,
                                "ours_audio": ours_audio, "ours_events": ours_events, "tool_latency": tools}
    return MetricsReport(
        recording=opened.label, session=trace.events is not None, duration_ms=trace.duration_ms,
        source_rate=trace.source_rate, speech={"user_segments": len(trace.user), "agent_segments": len(trace.agent),
                                               "backchannels": len(trace.backchannels), "tool_calls": len(trace.tool_calls)},
        rows=_rows(tau, eva, v15, v1, ours_audio, ours_events) + _tool_rows(tools), variants=variants,
        result_json=opened.result_json, unavailable=unavailable,
    )
