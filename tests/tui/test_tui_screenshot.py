"""Palette → "Save screenshot": saved to a known place (made if missing), and a toast says where
or why it could not be."""

from __future__ import annotations

from tests.tui.helpers import until
from tui.monitor_app import WatchApp
from tui.screenshot import screenshot_dir


def _toasts(app) -> list[tuple[str, str]]:
    return [(n.message, n.severity) for n in app._notifications]


async def test_without_downloads_the_screenshot_goes_to_the_pictures_dir_it_creates(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/Downloads there
    monkeypatch.delenv("XDG_DOWNLOAD_DIR", raising=False)
    pictures = tmp_path / "home" / "Pictures" / "apex"
    monkeypatch.setenv("XDG_PICTURES_DIR", str(pictures))
    app = WatchApp(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "Save screenshot" in titles and "Screenshot" not in titles
        app.action_save_screenshot()
        await until(pilot, lambda: bool(_toasts(app)))
        (saved,) = pictures.glob("*.svg")
        assert _toasts(app) == [(f"saved {saved}", "information")]
        assert saved.read_text(encoding="utf-8").startswith("<svg")


async def test_a_screenshot_that_cannot_be_written_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DOWNLOAD_DIR", raising=False)
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("XDG_PICTURES_DIR", str(tmp_path / "a-file" / "shots"))
    app = WatchApp(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.action_save_screenshot()
        await until(pilot, lambda: bool(_toasts(app)))
        ((message, severity),) = _toasts(app)
        assert severity == "error" and message.startswith(f"cannot save the screenshot in {tmp_path / 'a-file' / 'shots'}: ")


def test_downloads_when_it_exists_else_pictures_else_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DOWNLOAD_DIR", raising=False)
    assert screenshot_dir({}) == tmp_path
    assert screenshot_dir({"XDG_PICTURES_DIR": "/x/pics"}) == tmp_path.joinpath("/x/pics")
    (tmp_path / "Downloads").mkdir()
    assert screenshot_dir({"XDG_PICTURES_DIR": "/x/pics"}) == tmp_path / "Downloads"
