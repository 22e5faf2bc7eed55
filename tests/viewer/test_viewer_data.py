"""``apex-voice view``'s data: the session pages, the campaign index, the written folder and the server."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import soundfile as sf
from starlette.testclient import TestClient
from typer.testing import CliRunner

from harness.cli.main import app as cli
from harness.results.result_record import ResultRecord
from tests.viewer.helpers import DEMO_TASK, session_dir
from tui.web.campaign_index import read_site
from tui.web.peaks import BIN_MS
from tui.web.serve import make_app
from tui.web.session_page import STEREO_FILE, build_session_page
from tui.web.site import data_script, session_script

PAGE = f"{DEMO_TASK}.rep0"


def page_of(campaign: Path):
    directory = session_dir(campaign)
    return build_session_page(PAGE, directory, ResultRecord.load(directory.parent), audio_url="a.wav")


def view(*args: str):
    return CliRunner().invoke(cli, ["view", *args])


def test_an_oracle_session_page_has_the_recording_transcripts_calls_and_marks(viewer_runs):
    page = page_of(viewer_runs["oracle"])
    info = sf.info(str(session_dir(viewer_runs["oracle"]) / STEREO_FILE))
    assert page.status == "passed" and page.pts == 1 and page.gates == {"GS": True, "PC": True, "RA": True, "WA": True}
    assert page.audio == "a.wav" and page.duration_ms == info.frames * 1000 / info.samplerate
    assert [len(channel) for channel in page.peaks] == [math.ceil(info.frames / (info.samplerate * BIN_MS / 1000))] * 2
    assert max(page.peaks[0]) > 10 and max(page.peaks[1]) > 10  # both channels spoke
    speakers = {row.speaker for row in page.transcript}
    assert {"user", "agent", "event"} <= speakers
    assert len(page.tools) == 12 and all(call.done for call in page.tools)
    commit = next(call for call in page.tools if call.tool == "submit_enrollment")
    assert commit.auth_decision and commit.args is not None and commit.result is not None
    kinds = {mark.kind for mark in page.marks}
    assert {"barge-in", "yield", "approval", "gate"} <= kinds
    assert page.marks == sorted(page.marks, key=lambda mark: mark.t_ms)
    first, last = page.gate_changes[0], page.gate_changes[-1]
    assert first.changed == ["GS", "PC", "RA", "WA"] and first.failing
    assert last.gates == {"GS": True, "PC": True, "RA": True, "WA": True}


def test_what_the_agent_claimed_and_what_the_user_heard_differ_where_a_response_was_cut(viewer_runs):
    page = page_of(viewer_runs["oracle"])
    record = ResultRecord.load(session_dir(viewer_runs["oracle"]).parent)
    assert record is not None and record.speech_agreement and record.speech_agreement["verdicts"].get("cut")
    cut = [row for row in page.transcript if row.heard_verdict == "cut"]
    assert cut and all(row.heard_chars is not None and row.heard_chars < len(row.text) for row in cut)
    heard = [row for row in page.transcript if row.heard_verdict == "speech"]
    assert heard and all(row.heard_chars == len(row.text) for row in heard)


def test_a_failed_session_page_says_why_with_the_field_verdicts(viewer_runs):
    page = page_of(viewer_runs["noop"])
    assert page.status == "failed" and page.pts == 0 and page.gates["GS"] is False
    assert any("enrollment_submitted" in line for line in page.explain)
    assert page.predicates and page.fields
    field = next(row for row in page.fields if row.field == "full_name")
    assert field.expected == "Marisol Ferreira-Dunn" and field.got is None and field.grader and field.score == 0
    assert page.tools == [] and page.audio is not None


def test_a_c0_session_has_turns_and_calls_and_no_recording(viewer_runs):
    directory = session_dir(viewer_runs["c0"])
    assert not (directory / STEREO_FILE).exists()
    page = page_of(viewer_runs["c0"])
    assert page.audio is None and page.peaks == [] and page.duration_ms is None
    assert page.condition == "C0" and page.end_ms > 0
    assert [row.speaker for row in page.transcript if row.speaker != "event"][:2] == ["user", "agent"]
    assert len(page.tools) == 12


def _campaign_with_gaps(viewer_runs, tmp_path: Path) -> Path:
    """The no-op campaign with a pending repetition and two planned cells without a record."""
    campaign = tmp_path / "noop"
    shutil.copytree(viewer_runs["noop"], campaign)
    rep0 = campaign / DEMO_TASK / "rep0"
    record = ResultRecord.load(rep0)
    assert record is not None
    pending_fields = [row.model_copy(update={"tier": "pending", "score": 0.0}) for row in record.fields[:1]]
    pending = record.model_copy(update={"rep": 1, "pts": None, "fields": pending_fields, "pending_verdicts": []})
    pending = ResultRecord.model_validate(pending.model_dump())
    pending.write(campaign / DEMO_TASK / "rep1")
    manifest = json.loads((campaign / "campaign.json").read_text())
    manifest["planned_cells"] = {DEMO_TASK: [0, 1, 2], "demo_auto_claim_intake_001": [0, 1, 2]}
    manifest["unscored_cells"] = [{"task_id": "demo_auto_claim_intake_001", "rep": 0, "reason": "infrastructure",
                                   "detail": "sandbox did not start (3 attempts)"}]
    (campaign / "campaign.json").write_text(json.dumps(manifest))
    return campaign


def test_the_campaign_index_lists_every_planned_cell_with_why_it_is_unscored(viewer_runs, tmp_path):
    site = read_site(_campaign_with_gaps(viewer_runs, tmp_path))
    rows = {(row.task_id, row.rep): row for row in site.index.cells}
    assert len(rows) == 6
    failed = rows[(DEMO_TASK, 0)]
    assert failed.status == "failed" and failed.id == PAGE and failed.scored
    assert failed.gates == {"GS": False, "PC": True, "RA": False, "WA": False} and failed.afa == 0.0
    assert failed.reason.startswith("GS: terminal predicate enrollment_submitted failed") and "more)" in failed.reason
    assert failed.turns == 9 and failed.media_ms and failed.tool_calls == 0
    pending = rows[(DEMO_TASK, 1)]
    assert pending.status == "pending judge" and not pending.scored and "enrollment_1." in pending.reason
    assert rows[(DEMO_TASK, 2)].status == "not run" and rows[(DEMO_TASK, 2)].id is None
    infra = rows[("demo_auto_claim_intake_001", 0)]
    assert infra.status == "infrastructure" and infra.reason == "sandbox did not start (3 attempts)" and not infra.scored
    assert site.index.campaigns[0].cells == 6 and site.index.campaigns[0].unscored == 5
    assert set(site.sessions) == {PAGE}  # the pending rep has a record but no session directory


def test_the_duplex_figures_of_a_cell_come_from_its_record(viewer_runs):
    (row,) = read_site(viewer_runs["oracle"]).index.cells
    assert row.status == "passed" and row.reason == ""
    assert row.fda == 1.0 and row.stop_ms == 500.0 and row.duplex_events == 1 and row.overlap_pct == 0.36


def test_a_directory_of_campaigns_a_rep_and_a_session_directory_are_read(viewer_runs):
    runs_root = viewer_runs["oracle"].parent
    site = read_site(runs_root)
    assert {c.condition for c in site.index.campaigns} == {"C0", "C2"} and len(site.index.cells) == 3
    names = sorted(c.name for c in site.index.campaigns)  # the oracle's two campaigns, told apart
    assert names == ["No-op (silent)", "Oracle (reference policy) [C0]", "Oracle (reference policy) [C2]"]
    assert len(set(site.sessions)) == 3  # one page per campaign, told apart
    for path in (session_dir(viewer_runs["noop"]), session_dir(viewer_runs["noop"]).parent):
        single = read_site(path)
        (row,) = single.index.cells
        assert row.status == "failed" and row.id in single.sessions


def test_view_out_writes_a_folder_that_opens_from_the_disk(viewer_runs, tmp_path):
    out = tmp_path / "site"
    result = view(str(viewer_runs["oracle"]), "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary == {"out": str(out), "cells": 1, "sessions": 1, "recordings": 1,
                       "index_bytes": (out / "data" / "index.js").stat().st_size}
    for name in ("index.html", "viewer.js", "viewer.css"):
        assert (out / name).is_file()
    html = (out / "index.html").read_text()
    assert "http://" not in html and "https://" not in html  # nothing from a CDN
    script = (out / "data" / "sessions" / f"{PAGE}.js").read_text()
    assert script.startswith(f'apexViewer.receive("{PAGE}", ')
    page = json.loads(script[len(f'apexViewer.receive("{PAGE}", '):-3])
    assert page["audio"] == f"audio/{PAGE}.wav"
    assert (out / "audio" / f"{PAGE}.wav").read_bytes() == (session_dir(viewer_runs["oracle"]) / STEREO_FILE).read_bytes()
    again = view(str(viewer_runs["noop"]), "--out", str(out))  # a viewer folder may be written again
    assert again.exit_code == 0 and "1 cells, 1 sessions, 1 recordings" in again.output


def test_view_usage_errors_exit_2_with_one_line(viewer_runs, tmp_path):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    cases = [
        ([str(viewer_runs["oracle"]), "--out", str(foreign)], "not a viewer folder written before"),
        ([str(tmp_path / "missing"), "--out", str(tmp_path / "x")], "not a directory"),
        ([str(foreign), "--out", str(tmp_path / "x")], "no campaign here"),
        ([str(viewer_runs["oracle"]), "--out", str(tmp_path / "x"), "--serve"], "not both"),
        ([str(viewer_runs["oracle"]), "--json"], "--json goes with --out"),
    ]
    for args, message in cases:
        result = view(*args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and "Traceback" not in result.output
    assert (foreign / "notes.txt").read_text() == "mine" and not (tmp_path / "x").exists()


def test_the_server_answers_what_the_folder_holds_and_seeks_in_the_recording(viewer_runs):
    site = read_site(viewer_runs["oracle"])
    client = TestClient(make_app(site))
    home = client.get("/")
    assert home.status_code == 200 and "viewer.js" in home.text
    assert client.get("/viewer.js").status_code == 200
    assert client.get("/data/index.js").text == data_script("index", site.index)
    assert client.get(f"/data/sessions/{PAGE}.js").text == session_script(site, PAGE)
    stereo = session_dir(viewer_runs["oracle"]) / STEREO_FILE
    ranged = client.get(f"/audio/{PAGE}.wav", headers={"Range": "bytes=1000-1999"})
    assert ranged.status_code == 206 and ranged.content == stereo.read_bytes()[1000:2000]
    assert client.get("/data/sessions/nope.js").status_code == 404
    assert client.get("/audio/nope.wav").status_code == 404


def test_view_serves_on_127_0_0_1_until_interrupted_and_refuses_a_port_in_use(viewer_runs):
    import os
    import signal
    import socket
    import subprocess
    import sys

    import httpx

    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    server = subprocess.Popen([sys.executable, "-m", "harness.cli.main", "view", str(viewer_runs["oracle"]), "--port", "0"],
                              cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert line.startswith("serving ") and "http://127.0.0.1:" in line, line
        url = line.split()[line.split().index("at") + 1]
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        index = httpx.get(url + "data/index.js", timeout=30)
        assert index.status_code == 200 and index.text.startswith('apexViewer.receive("index", ')
        taken = subprocess.run([sys.executable, "-m", "harness.cli.main", "view", str(viewer_runs["oracle"]),
                                "--port", str(port)], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
        assert taken.returncode == 2 and f"--port {port}: cannot listen on 127.0.0.1" in taken.stderr
        with socket.create_connection(("127.0.0.1", port)):
            pass  # still serving: the refused second server changed nothing
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 0
