"""``apex-voice replay SESSION_DIR``: a finished session played back on its media clock.

Play at 1×, 4× or max, pause, step event by event, jump ±5 s, or seek to a time or an event
(``g``). The events are read by a worker thread; playback ticks move a media-time play head and
the cursor reduces whatever events it passed.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path

from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input

from harness.events import RunEvent

from .app_base import TuiApp
from .screens import SessionDetail, SessionScreen
from .sources.event_lines import read_session_events
from .sources.replay import ReplayCursor, find_events_file, read_result
from .state.campaign_view import CellResult, with_settled
from .widgets.formatting import media_time

__all__ = ["SPEEDS", "ReplayApp", "parse_seek"]

#: Playback speeds by key; ``None`` is as fast as the terminal redraws.
SPEEDS: dict[str, float | None] = {"1": 1.0, "4": 4.0, "max": None}
TICK_S = 0.05
#: Longest wall-time gap one tick plays (after a stall the play head does not leap).
MAX_TICK_GAP_S = 0.5
#: Events reduced per tick at max speed.
MAX_EVENTS_PER_TICK = 400
JUMP_MS = 5000

_CLOCK = re.compile(r"^(?:(\d+):)?(\d+(?:\.\d+)?)$")


def parse_seek(text: str) -> tuple[str, int] | None:
    """``"#120"`` → ``("event", 120)``; ``"1:23.4"`` or ``"83.4"`` → ``("time", 83400)``."""
    text = text.strip()
    if text.startswith("#") and text[1:].isdigit():
        return ("event", int(text[1:]))
    match = _CLOCK.match(text)
    if not match:
        return None
    minutes, seconds = match.groups()
    return ("time", round((int(minutes or 0) * 60 + float(seconds)) * 1000))


_STEP = Binding.Group("Step")
_JUMP = Binding.Group("±5s")


class ReplayApp(TuiApp):
    TITLE = "apex-voice replay"
    #: The footer shows what fits 80 columns; ``?`` lists them all (speeds, Home/End, zoom ...).
    BINDINGS = [
        *TuiApp.BINDINGS,
        Binding("space", "toggle_play", "Play", priority=True),
        Binding("n,full_stop", "step(1)", "Step forward", key_display="n", group=_STEP),
        Binding("p,comma", "step(-1)", "Step back", key_display="p", group=_STEP),
        Binding("left_square_bracket", "jump(-1)", "Jump 5 s back", key_display="[", group=_JUMP),
        Binding("right_square_bracket", "jump(1)", "Jump 5 s forward", key_display="]", group=_JUMP),
        Binding("g", "seek_prompt", "Seek"),
        Binding("1", "speed('1')", "Play at 1×", show=False),
        Binding("4", "speed('4')", "Play at 4×", show=False),
        Binding("m", "speed('max')", "Play as fast as it draws", show=False),
        Binding("home", "seek_start", "Start", show=False, priority=True),
        Binding("end", "seek_end", "End", show=False, priority=True),
    ]

    class Loaded(Message):
        def __init__(self, events: list[RunEvent], result: CellResult | None) -> None:
            super().__init__()
            self.events = events
            self.result = result

    def __init__(self, session_dir: Path, *, speed: str = "max", paused: bool = False) -> None:
        super().__init__()
        self.events_file = find_events_file(session_dir)
        self.sub_title = str(self.events_file.parent)
        self.cursor = ReplayCursor(())
        self.speed = speed
        self.playing = not paused
        self.play_ms = 0
        self.result: CellResult | None = None
        self._last_tick = time.monotonic()
        self._screen = SessionScreen(("", 0), replay=True)

    def on_mount(self) -> None:
        self.push_screen(self._screen)
        self.run_worker(self._load, thread=True, exit_on_error=False, name="load")
        self.set_interval(TICK_S, self._tick)

    def _load(self) -> None:
        self.post_message(self.Loaded(read_session_events(self.events_file), read_result(self.events_file.parent)))

    def on_replay_app_loaded(self, message: Loaded) -> None:
        self.cursor = ReplayCursor(message.events)
        self.result = message.result
        self.draw()

    # --- playback ---------------------------------------------------------------------------

    def _tick(self) -> None:
        now = time.monotonic()
        elapsed_s = min(now - self._last_tick, MAX_TICK_GAP_S)
        self._last_tick = now
        if not self.playing or not self.cursor.events:
            return
        factor = SPEEDS[self.speed]
        if factor is None:
            self.cursor.step(MAX_EVENTS_PER_TICK)
            self.play_ms = self.cursor.view.clock_ms
        else:  # by wall time elapsed, not by ticks: a slow terminal skips frames, not media time
            self.play_ms += round(elapsed_s * 1000 * factor)
            self.cursor.seek_time(self.play_ms)
        if self.cursor.at_end and self.play_ms >= self.cursor.end_ms:
            self.playing = False
        self.draw()

    def draw(self) -> None:
        view = self.cursor.view
        if self.play_ms > view.clock_ms and not self.cursor.at_end:
            view = replace(view, clock_ms=self.play_ms)  # the play head moves between events
        if self.cursor.at_end and self.result is not None:
            view = with_settled(view, self.result)  # the graded verdict, once the replay reached it
        self._screen.show(view)
        if isinstance(self.screen, SessionDetail):
            self.screen.show(view)
        state = "▶" if self.playing else "❚❚"
        self._screen.show_replay(
            f"{state} {self.speed}{'×' if self.speed != 'max' else ''}  "
            f"{media_time(view.clock_ms)} / {media_time(self.cursor.end_ms)}  "
            f"event {self.cursor.position}/{len(self.cursor.events)}"
        )

    def _moved(self) -> None:
        self.play_ms = self.cursor.view.clock_ms
        self.draw()

    def _rewind_if_ended(self) -> None:
        if self.cursor.at_end:
            self.cursor.seek(0)
            self.play_ms = 0

    def action_toggle_play(self) -> None:
        if not self.playing:
            self._rewind_if_ended()
        self.playing = not self.playing
        self.draw()

    def action_speed(self, speed: str) -> None:
        self.speed = speed
        if not self.playing:
            self._rewind_if_ended()
        self.playing = True
        self.draw()

    def action_step(self, delta: int) -> None:
        self.playing = False
        self.cursor.step(delta)
        self._moved()

    def action_jump(self, direction: int) -> None:
        self.cursor.seek_time(max(0, self.play_ms + direction * JUMP_MS))
        self.play_ms = max(0, self.play_ms + direction * JUMP_MS)
        self.draw()

    def action_seek_start(self) -> None:
        self.cursor.seek(0)
        self._moved()

    def action_seek_end(self) -> None:
        self.cursor.seek(len(self.cursor.events))
        self._moved()

    def action_seek_prompt(self) -> None:
        self.playing = False
        self._screen.open_seek()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        target = parse_seek(message.value)
        if target is None:
            self.notify(f"cannot seek to {message.value!r}: give 1:23.4, 83 or #120", severity="error")
            return
        kind, value = target
        if kind == "event":
            self.cursor.seek_seq(value)
            self._moved()
        else:
            self.cursor.seek_time(value)
            self.play_ms = value
            self.draw()
        self._screen.focus_next()
