"""What every apex-voice TUI app shares: the stylesheet, ``?``/F1 help, and "Save screenshot".

Textual's own palette entry "Screenshot" saves to ``~/Downloads`` and says nothing when that
directory is missing; ours saves to a place :func:`~tui.screenshot.screenshot_dir` names, creating
it if needed, and a toast says where the file went or why it could not be written.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from .help_screen import HelpScreen
from .screenshot import save_screenshot, screenshot_dir

__all__ = ["TuiApp"]


class TuiApp(App):
    CSS_PATH = "app.tcss"
    BINDINGS = [Binding("question_mark,f1", "help", "Help", key_display="?")]

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            if command.title != "Screenshot":
                yield command
        yield SystemCommand(
            "Save screenshot",
            f"Save an SVG screenshot of this screen in {screenshot_dir()}",
            # after the palette has closed, so the picture is of the screen, not the palette
            lambda: self.set_timer(0.1, self.action_save_screenshot),
        )

    def action_save_screenshot(self) -> None:
        """Draw the screen as SVG here (it reads the compositor); write it in a worker thread."""
        svg = self.export_screenshot()
        self.run_worker(lambda: self._write_screenshot(svg, screenshot_dir()), thread=True, name="screenshot")

    def _write_screenshot(self, svg: str, directory: Path) -> None:
        try:
            path = save_screenshot(svg, directory, self.title)
        except OSError as exc:
            self.call_from_thread(
                self.notify, f"cannot save the screenshot in {directory}: {exc.strerror or exc}",
                title="Screenshot", severity="error",
            )
            return
        self.call_from_thread(self.notify, f"saved {path}", title="Screenshot")
