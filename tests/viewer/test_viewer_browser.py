"""The viewer in a real browser: Debian's Chromium, headless, driven by Playwright.

The pages are opened from a folder ``apex-voice view --out`` wrote (``file://``, as a user who was
sent the folder opens it), and once from ``--serve``'s server.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import soundfile as sf
from typer.testing import CliRunner

from harness.cli.main import app as cli
from tests.viewer.helpers import DEMO_TASK, chromium_path, session_dir
from tui.web.campaign_index import read_site
from tui.web.session_page import STEREO_FILE

pytestmark = pytest.mark.slow

PAGE = f"{DEMO_TASK}.rep0"


@pytest.fixture(scope="module")
def browser() -> Iterator:
    playwright_api = pytest.importorskip("playwright.sync_api")
    executable = chromium_path()
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable,
                                              args=["--autoplay-policy=no-user-gesture-required"])
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def sites(viewer_runs, tmp_path_factory) -> dict[str, Path]:
    """``apex-voice view RUN --out`` of each run, and of the three campaigns together (``all``)."""
    root = tmp_path_factory.mktemp("viewer-sites")
    sources = {**viewer_runs, "all": viewer_runs["oracle"].parent}
    for name, source in sources.items():
        result = CliRunner().invoke(cli, ["view", str(source), "--out", str(root / name)])
        assert result.exit_code == 0, result.output
    return {name: root / name for name in sources}


class Page:
    """A browser tab that records every console error and uncaught exception."""

    def __init__(self, browser) -> None:
        self.tab = browser.new_page(viewport={"width": 1280, "height": 800})
        self.errors: list[str] = []
        self.tab.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.tab.on("pageerror", lambda exc: self.errors.append(str(exc)))

    def open(self, url: str) -> Page:
        self.tab.goto(url)
        return self

    def js(self, expression: str):
        return self.tab.evaluate(expression)


@pytest.fixture
def page(browser) -> Iterator[Page]:
    tab = Page(browser)
    yield tab
    tab.tab.close()


def _session_url(site: Path, page_id: str = PAGE) -> str:
    return f"{(site / 'index.html').as_uri()}#/s/{page_id}"


def _recording_seconds(campaign: Path) -> float:
    info = sf.info(str(session_dir(campaign) / STEREO_FILE))
    return info.frames / info.samplerate


def _wait_for_audio(page: Page) -> None:
    page.tab.wait_for_function("document.getElementById('audio') && document.getElementById('audio').readyState >= 1")


def test_the_campaign_page_lists_every_cell_and_filters_sorts_and_opens_one(page, sites):
    page.open((sites["all"] / "index.html").as_uri())
    page.tab.wait_for_selector("#rows tr.link")
    assert page.js("document.querySelectorAll('#rows tr.cell').length") == 3
    page.tab.select_option("#filter-status", "failed")
    rows = page.tab.locator("#rows tr.cell")
    assert rows.count() == 1
    reason = rows.first.locator("td.reason")
    assert reason.is_visible() and "terminal predicate enrollment_submitted failed" in reason.inner_text()
    page.tab.select_option("#filter-status", "all")
    page.tab.click("th[data-key=campaign]")
    page.tab.click("th[data-key=campaign]")
    firsts = page.js("Array.from(document.querySelectorAll('#rows tr.cell td:first-child')).map(td => td.textContent)")
    assert firsts == sorted(firsts, reverse=True)
    page.tab.fill("#filter-text", "no such task")
    assert page.tab.locator("#rows tr.none").inner_text() == "no cell matches"
    page.tab.fill("#filter-text", "")
    page.tab.locator("#rows tr.cell", has_text="failed").click()
    page.tab.wait_for_selector("#why")
    assert page.errors == []


def test_a_session_page_loads_without_error_and_its_audio_is_the_recording(page, sites, viewer_runs):
    page.open(_session_url(sites["oracle"]))
    _wait_for_audio(page)
    assert page.js("document.getElementById('audio').duration") == pytest.approx(
        _recording_seconds(viewer_runs["oracle"]), abs=1e-3)
    assert page.js("document.querySelectorAll('#transcript .line').length") > 10
    assert page.js("document.querySelectorAll('#timeline .tl-mark.k-barge-in').length") == 1
    assert page.js("document.querySelectorAll('#timeline .tl-mark.k-approval').length") == 1
    assert page.js("document.querySelectorAll('#transcript del.unheard').length") == 1  # the cut read-back
    assert page.errors == []


def test_clicking_a_tool_call_moves_the_playhead_to_its_media_time(page, sites):
    page.open(_session_url(sites["oracle"]))
    _wait_for_audio(page)
    times = page.js("Array.from(document.querySelectorAll('#timeline .tl-tool')).map(b => Number(b.dataset.seek))")
    assert len(times) == 12 and times == sorted(times)
    page.tab.locator("#timeline .tl-tool").nth(5).click()
    assert page.js("document.getElementById('audio').currentTime") == pytest.approx(times[5] / 1000, abs=1e-3)
    assert page.js("document.querySelector('.call.current').dataset.i") == "5"
    page.tab.locator(".call-head").nth(2).click()  # the list's entries seek too
    assert page.js("document.getElementById('audio').currentTime") == pytest.approx(times[2] / 1000, abs=1e-3)
    current = page.js("document.querySelector('#transcript .line.current').dataset.t")
    assert int(current) <= times[2]


def test_keyboard_shortcuts_play_seek_step_and_show_help(page, sites):
    page.open(_session_url(sites["oracle"]))
    _wait_for_audio(page)
    page.tab.keyboard.press("ArrowRight")
    assert page.js("document.getElementById('audio').currentTime") == pytest.approx(5.0, abs=1e-3)
    page.tab.keyboard.press("Shift+ArrowLeft")
    assert page.js("document.getElementById('audio').currentTime") == pytest.approx(4.0, abs=1e-3)
    page.tab.keyboard.press("n")
    first_call = page.js("Number(document.querySelector('#timeline .tl-tool').dataset.seek)")
    assert page.js("document.getElementById('audio').currentTime") == pytest.approx(first_call / 1000, abs=1e-3)
    page.tab.keyboard.press(" ")
    page.tab.wait_for_function("!document.getElementById('audio').paused")
    page.tab.keyboard.press(" ")
    page.tab.wait_for_function("document.getElementById('audio').paused")
    page.tab.wait_for_function("document.getElementById('play').textContent === 'play'")  # on the pause event
    page.tab.keyboard.press("?")
    assert page.tab.locator("#help").is_visible()
    page.tab.keyboard.press("Escape")
    assert not page.tab.locator("#help").is_visible()
    assert page.errors == []


def test_a_failed_cell_shows_why_and_its_field_verdicts(page, sites):
    page.open(_session_url(sites["noop"]))
    why = page.tab.locator("#why")
    why.wait_for()
    assert why.is_visible()
    assert "terminal predicate enrollment_submitted failed" in why.inner_text()
    fields = page.tab.locator("#fields")
    assert fields.is_visible()
    row = fields.locator("tr", has_text="enrollment_1.full_name")
    assert "Marisol Ferreira-Dunn" in row.inner_text() and "exact" in row.inner_text()
    assert page.errors == []


def test_a_c0_session_without_audio_shows_its_turns_and_calls(page, viewer_runs, tmp_path):
    out = tmp_path / "c0-session"  # the session directory itself: the folder opens on its page
    result = CliRunner().invoke(cli, ["view", str(session_dir(viewer_runs["c0"])), "--out", str(out)])
    assert result.exit_code == 0, result.output
    page.open((out / "index.html").as_uri())
    page.tab.wait_for_url(f"**#/s/{PAGE}")
    page.tab.wait_for_selector("#transcript .line.user")
    assert page.js("document.getElementById('audio')") is None
    assert page.js("document.getElementById('play').disabled") is True
    assert page.js("document.querySelectorAll('.call').length") == 12
    page.tab.locator("#timeline .tl-tool").nth(3).click()
    seek = page.js("Number(document.querySelectorAll('#timeline .tl-tool')[3].dataset.seek)")
    assert page.js("document.querySelector('.call.current').dataset.i") == "3"
    assert page.js("document.getElementById('now').textContent") == f"0:{seek / 1000:04.1f}"
    assert page.errors == []


def test_the_served_viewer_loads_and_plays_the_recording(page, viewer_runs):
    import uvicorn

    from tui.web.serve import bind, make_app

    sock = bind(0)
    server = uvicorn.Server(uvicorn.Config(make_app(read_site(viewer_runs["oracle"])), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        port = sock.getsockname()[1]
        page.open(f"http://127.0.0.1:{port}/")
        page.tab.wait_for_selector("#rows tr.link")
        page.tab.click("#rows tr.link")
        _wait_for_audio(page)
        assert page.js("document.getElementById('audio').duration") == pytest.approx(
            _recording_seconds(viewer_runs["oracle"]), abs=1e-3)
        page.tab.locator("#timeline .tl-tool").nth(7).click()
        seek = page.js("Number(document.querySelectorAll('#timeline .tl-tool')[7].dataset.seek)")
        assert page.js("document.getElementById('audio').currentTime") == pytest.approx(seek / 1000, abs=1e-3)
        assert page.errors == []
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def test_a_large_campaign_draws_only_the_rows_in_view_and_scrolls_and_sorts_them_all(page, sites, tmp_path):
    from tui.web.campaign_index import CampaignIndex, CampaignSummary, CellRow
    from tui.web.site import data_script

    site = tmp_path / "large"
    shutil.copytree(sites["oracle"], site)
    cells = [CellRow(campaign="m", task_id=f"task_{t:03d}", rep=rep, status="failed" if (t + rep) % 3 else "passed",
                     scored=True, pts=int((t + rep) % 3 == 0), afa=((t * 7 + rep) % 100) / 100,
                     reason=f"why {t}.{rep}" if (t + rep) % 3 else "")
             for t in range(120) for rep in range(15)]
    index = CampaignIndex(title="large", campaigns=[CampaignSummary(key="m", name="m", condition="C2", path="x",
                                                                   cells=len(cells), passed=600, unscored=0)],
                          cells=cells)
    (site / "data" / "index.js").write_text(data_script("index", index))
    page.open((site / "index.html").as_uri())
    page.tab.wait_for_selector("#rows tr.cell")
    assert page.js("document.getElementById('count').textContent") == "1800 of 1800 cells"
    assert page.js("document.querySelectorAll('#rows tr.cell').length") < 150
    page.js("document.getElementById('table-wrap').scrollTop = 1e9")
    page.tab.wait_for_function("Array.from(document.querySelectorAll('#rows tr.cell td:first-child'))"
                               ".some(td => td.textContent === 'task_119')")
    page.tab.click("th[data-key=afa]")
    page.tab.click("th[data-key=afa]")
    page.js("document.getElementById('table-wrap').scrollTop = 0")
    page.tab.wait_for_function("document.querySelector('#rows tr.cell td.num:nth-child(10)').textContent === '0.99'")
    page.tab.fill("#filter-text", "why 7.4")
    assert page.js("document.getElementById('count').textContent") == "1 of 1800 cells"
    assert page.errors == []
