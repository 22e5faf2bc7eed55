"""What the TUI costs: events per second the reducer and the view absorb, and the UI's CPU share
at a 16-session campaign's event rate.

Usage: python benchmarks/bench_tui.py [--sessions 16] [--seconds 10] [--level-window-ms 100]

One oracle session of the demo suite is recorded in-process (virtual clock); if the runner did not
log ``AUDIO_LEVEL`` it is given one per ``--level-window-ms``, so its event rate is a live
session's. Figures:

- reducer: events/s of ``reduce`` alone over that stream;
- view, burst: events/s the app absorbs (inbox → campaign view → redraw of the open screen) when
  every session's events arrive at once;
- view, paced: CPU share (process time / wall time) of the headless app fed ``--sessions``
  sessions at real-time pace, with the campaign table open, then with one session's view open;
- flood: one session's bus sending ``--flood`` events at once, as an agent flooding its session
  makes it (the inbox keeps at most ``tui.inbox.MAX_EVENTS``): peak RSS growth and what was kept.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import tempfile
import time
from pathlib import Path

from harness.agents.oracle_voice import OracleVoiceAgent
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.events import EventType, RunEvent
from harness.session.duplex_runner import DuplexConfig, run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.loader import load_task
from tui.inbox import MAX_EVENTS
from tui.monitor_app import MonitorApp
from tui.screens import SessionScreen
from tui.state import reduce_all
from tui.state.updates import CampaignSeen, EventsRead

DEMO_TASK = Path(__file__).resolve().parents[1] / "harness" / "demo_data" / "tasks" / "demo_benefits_enrollment_001"


async def _record_session() -> list[RunEvent]:
    bundle = load_task(DEMO_TASK)
    speech = open_speech_source(DEMO_TASK, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    with tempfile.TemporaryDirectory() as tmp:
        result = await run_duplex_session(
            bundle, OracleVoiceAgent(), InProcessEnvironment(bundle.public_bundle()), DuplexConfig(speech=speech,
            session_dir=Path(tmp), privileged=True, run_id="bench")
        )
    return list(result.events.events)


def _with_levels(events: list[RunEvent], window_ms: int) -> list[RunEvent]:
    """The session's events plus one AUDIO_LEVEL per window (unless the runner logged them)."""
    if any(e.type == EventType.AUDIO_LEVEL for e in events):
        return events
    end = max(e.media_time_ms for e in events)
    template = events[0]
    levels = [
        RunEvent(seq=0, type=EventType.AUDIO_LEVEL, actor="harness", media_time_ms=t,
                 payload={"window_ms": window_ms, "user_dbfs": -30.0 - t % 17, "agent_dbfs": -25.0 - t % 13},
                 run_id=template.run_id, task_version=template.task_version, condition=template.condition)
        for t in range(window_ms, end, window_ms)
    ]
    merged = sorted([*events, *levels], key=lambda e: e.media_time_ms)
    return [e.model_copy(update={"seq": i}) for i, e in enumerate(merged)]


def bench_reducer(events: list[RunEvent], repeats: int = 20) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        reduce_all(events)
    return len(events) * repeats / (time.perf_counter() - start)


def _cells(sessions: int) -> list[tuple[str, int]]:
    return [(f"task_{i:02d}", 0) for i in range(sessions)]


async def bench_burst(events: list[RunEvent], sessions: int) -> float:
    app = MonitorApp()
    app.inbox.max_events = len(events) * sessions  # measure folding all of them, none skipped
    async with app.run_test(size=(160, 48)) as pilot:
        app.inbox.append(CampaignSeen("oracle", tuple(_cells(sessions))))
        app.flush()
        await pilot.pause()
        start = time.perf_counter()
        for key in _cells(sessions):
            app.inbox.extend(EventsRead(key, (event,)) for event in events)
        while app.inbox:  # each flush folds for at most FOLD_BUDGET_S, then redraws
            app.flush()
        await pilot.pause()
        elapsed = time.perf_counter() - start
    return len(events) * sessions / elapsed


async def bench_paced(events: list[RunEvent], sessions: int, seconds: float, *, open_session: bool) -> tuple[float, float]:
    """(CPU share of one core, events/s fed) with ``sessions`` sessions streaming in real time."""
    app = MonitorApp()
    cells = _cells(sessions)
    async with app.run_test(size=(160, 48)) as pilot:
        app.inbox.append(CampaignSeen("oracle", tuple(cells)))
        await pilot.pause(0.2)
        if open_session:
            app.push_screen(SessionScreen(cells[0]))
            await pilot.pause(0.2)
        # Sessions started a few seconds apart, as a campaign's do; measured from 20 s in.
        offsets = [-(i * 1300 % 20000) for i in range(sessions)]
        cursors = [0] * sessions

        def feed(media_now: int) -> int:
            fed = 0
            for index, key in enumerate(cells):
                batch = []
                while cursors[index] < len(events) and events[cursors[index]].media_time_ms - offsets[index] <= media_now:
                    batch.append(EventsRead(key, (events[cursors[index]],)))  # one update per event, as a bus sends
                    cursors[index] += 1
                app.inbox.extend(batch)
                fed += len(batch)
            return fed

        feed(20000)
        await pilot.pause(0.5)
        fed = 0
        wall0, cpu0 = time.perf_counter(), time.process_time()
        while (elapsed := time.perf_counter() - wall0) < seconds:
            fed += feed(20000 + int(elapsed * 1000))
            await asyncio.sleep(0.02)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return cpu / wall, fed / wall


def bench_flood(events: list[RunEvent], flood: int) -> tuple[float, int]:
    """(peak RSS growth in MiB, events kept) when one session's bus sends ``flood`` events before
    the UI folds any (``ru_maxrss``: run this last, it only ever rises)."""
    app = MonitorApp()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    signal = next(e for e in events if e.type == EventType.AGENT_TEXT)
    for seq in range(flood):  # a fresh event each time, as a bus makes them
        app.inbox.append(EventsRead(("task_00", 0), (signal.model_copy(update={"seq": seq, "payload": dict(signal.payload)}),)))
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    return grown, len(app.inbox)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--level-window-ms", type=int, default=100)
    parser.add_argument("--flood", type=int, default=1_000_000)
    args = parser.parse_args()

    recorded = asyncio.run(_record_session())
    events = _with_levels(recorded, args.level_window_ms)
    media_s = max(e.media_time_ms for e in events) / 1000
    rate = len(events) / media_s
    print(f"session: {len(recorded)} events recorded, {len(events)} with AUDIO_LEVEL windows, "
          f"over {media_s:.1f} s media ({rate:.1f} events/s per live session)")
    print(f"campaign of {args.sessions} live sessions: {rate * args.sessions:.0f} events/s")

    reducer = bench_reducer(events)
    print(f"reducer: {reducer:,.0f} events/s ({reducer / (rate * args.sessions):.0f}× the campaign's rate)")
    burst = asyncio.run(bench_burst(events, args.sessions))
    print(f"view, burst of {len(events) * args.sessions} events: {burst:,.0f} events/s absorbed "
          f"({burst / (rate * args.sessions):.0f}× the campaign's rate)")
    for open_session, label in ((False, "campaign table"), (True, "session view")):
        share, fed = asyncio.run(bench_paced(events, args.sessions, args.seconds, open_session=open_session))
        print(f"view, paced ({label} open): {fed:.0f} events/s fed, UI process CPU {share:.1%} of one core "
              f"(target < 10%)")
    grown, kept = bench_flood(events, args.flood)
    print(f"flood of {args.flood:,} events from one session: {kept:,} kept (bound {MAX_EVENTS:,}), "
          f"peak RSS +{grown:.0f} MiB")


if __name__ == "__main__":
    main()
