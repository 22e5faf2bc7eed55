"""Conventions users bring from neighbouring tools (issue 36 §3): a campaign file, a dry run,
fail-fast and a cost bound, a closing line with the wall time, ``results --json``, shell completion.
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from tests.conftest import DEMO_DATA

TASK_A = "demo_benefits_enrollment_001"
TASK_B = "demo_warranty_advice_001"
FAST = ["--data", str(DEMO_DATA), "--condition", "C0", "--sandbox", "local"]


def _invoke(*args: str, **kwargs):
    return CliRunner().invoke(app, list(args), **kwargs)


def _manifest(out: Path) -> dict:
    return json.loads((out / "campaign.json").read_text())


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# -- run --config ---------------------------------------------------------------------------------

def test_a_campaign_file_runs_as_its_flags_would_and_is_recorded_outside_the_identity(tmp_path):
    config = _write(tmp_path / "campaign.yaml", f"condition: C0\nsandbox: local\ndata: {DEMO_DATA}\n"
                    f"only: [{TASK_A}]\nmax-turns: 30\nout: from_file\n")
    by_file = _invoke("run", "--config", str(config))
    assert by_file.exit_code == 0, by_file.output
    out = tmp_path / "from_file"  # a relative path in the file is relative to the file
    recorded = _manifest(out)["config"]
    assert recorded["path"] == str(config.resolve())
    assert recorded["values"]["max_turns"] == 30 and recorded["values"]["only"] == [TASK_A]
    assert recorded["overridden"] == []

    by_flags = _invoke("run", *FAST, "--only", TASK_A, "--max-turns", "30", "--out", str(tmp_path / "by_flags"))
    assert by_flags.exit_code == 0, by_flags.output
    assert _manifest(tmp_path / "by_flags")["config"] is None
    assert _manifest(out)["identity"] == _manifest(tmp_path / "by_flags")["identity"]
    # Where a value came from changes nothing measured: the flags resume the file's campaign.
    resumed = _invoke("run", *FAST, "--only", TASK_A, "--max-turns", "30", "--out", str(out))
    assert resumed.exit_code == 0, resumed.output
    assert "resumed 1, ran 0" in resumed.output
    assert _manifest(out)["config"] is None  # the latest start read no file


def test_a_flag_on_the_command_line_wins_over_the_file(tmp_path):
    config = _write(tmp_path / "c.yaml", f"condition: C0\nsandbox: local\nmax_turns: 5\nonly: [{TASK_A}]\n")
    result = _invoke("run", "--config", str(config), "--data", str(DEMO_DATA), "--max-turns", "30",
                     "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    manifest = _manifest(tmp_path / "out")
    assert manifest["max_turns"] == 30 and manifest["identity"]["max_turns"] == 30
    assert manifest["config"]["values"]["max_turns"] == 5 and manifest["config"]["overridden"] == ["max_turns"]


@pytest.mark.parametrize(("text", "expected"), [
    ("parallel: many\n", "key 'parallel': value 'many': Input should be a valid integer"),
    ("max_turns: 0\n", "key 'max_turns': value 0: Input should be greater than or equal to 1"),
    ("executor: slurm\n", "key 'executor': value 'slurm'"),
    ("max_cost: -1\n", "key 'max_cost': value -1: Input should be greater than or equal to 0"),
    ("max_tursn: 3\n", "key 'max_tursn' is not a run option (the keys: model, data, only"),
    ("- C0\n", "a mapping of run options is expected (key: value), not a list"),
    ("condition: [C0\n", "not YAML"),
])
def test_a_bad_campaign_file_is_a_usage_error_naming_the_file_key_and_value(tmp_path, text, expected):
    config = _write(tmp_path / "bad.yaml", text)
    result = _invoke("run", "--config", str(config), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2, result.output
    assert f"error: {'--config ' if 'YAML' in expected or 'mapping' in expected else ''}{config}" in result.output
    assert expected in result.output
    assert not (tmp_path / "out").exists()


def test_a_missing_campaign_file_is_a_usage_error(tmp_path):
    result = _invoke("run", "--config", str(tmp_path / "nope.yaml"))
    assert result.exit_code == 2
    assert f"error: --config {tmp_path / 'nope.yaml'}: No such file or directory" in result.output


# -- run --dry-run ------------------------------------------------------------------------------

def test_dry_run_lists_the_cells_and_writes_nothing_then_sees_what_a_run_left(tmp_path):
    out = tmp_path / "camp"
    args = ["run", *FAST, "--only", TASK_A, "--only", TASK_B, "--out", str(out)]
    plan = _invoke(*args, "--dry-run")
    assert plan.exit_code == 0, plan.output
    assert f"{TASK_A} rep0: to run" in plan.stdout and f"{TASK_B} rep0: to run" in plan.stdout
    assert f"oracle: 2 to run, 0 resumed -> {out}" in plan.stdout
    assert "sandbox: local (asked for by name)" in plan.stdout
    assert "estimated wall time: seconds (text condition: no media time; 1 at a time)" in plan.stdout
    assert "estimated cost" not in plan.stdout  # the oracle is not priced
    assert not out.exists()

    assert _invoke("run", *FAST, "--only", TASK_A, "--out", str(out)).exit_code == 0
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    again = _invoke(*args, "--repeats", "2", "--dry-run", "--extend", "--json")
    assert again.exit_code == 0, again.output
    shown = json.loads(again.stdout)
    assert [(c["task_id"], c["rep"], c["action"]) for c in shown["cells"]] == [
        (TASK_A, 0, "resume"), (TASK_B, 0, "run"), (TASK_A, 1, "run"), (TASK_B, 1, "run")]
    assert (shown["to_run"], shown["resumed"], shown["sandbox"], shown["clock"]) == (3, 1, "local", "text")
    # rep1 of the task already run is estimated from its recorded wall time; the other task's cells: seconds
    assert shown["wall_time_basis"] == "text condition: no media time; 1 cell from this campaign's recorded wall times"
    wall_a = json.loads((out / TASK_A / "rep0" / "result.json").read_text())["wall_s"]
    assert shown["wall_time_s"] == pytest.approx(round(wall_a, 1), abs=0.1)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before  # nothing written, no lock left


def test_dry_run_refuses_what_the_run_would_refuse(tmp_path):
    out = tmp_path / "camp"
    assert _invoke("run", *FAST, "--only", TASK_A, "--out", str(out)).exit_code == 0
    grown = _invoke("run", *FAST, "--only", TASK_A, "--only", TASK_B, "--out", str(out), "--dry-run")
    assert grown.exit_code == 2
    assert "holds a smaller campaign than this start plans" in grown.output


def test_dry_run_of_a_priced_realtime_model_bounds_time_and_cost_by_the_tasks_budgets(tmp_path, monkeypatch):
    monkeypatch.setenv("XAI_API_KEY", "not-used-by-a-dry-run")
    with socket.socket() as server:  # the preflight's reachability check connects, nothing more
        server.bind(("127.0.0.1", 0))
        server.listen()
        endpoint = f"ws://127.0.0.1:{server.getsockname()[1]}/v1/realtime"
        result = _invoke("run", "--model", "grok-voice", "--endpoint", endpoint, "--data", str(DEMO_DATA),
                         "--sandbox", "local", "--only", TASK_A, "--repeats", "2", "--out", str(tmp_path / "o"),
                         "--dry-run", "--json")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["clock"] == "realtime" and shown["to_run"] == 2
    assert shown["wall_time_s"] == 2 * 720 and shown["wall_time_bound"]  # the task's time_budget_s, twice
    assert shown["cost_usd"] == pytest.approx(0.08 * 24) and shown["cost_bound"]  # 0.08 USD a minute
    text = _invoke("run", "--model", "grok-voice", "--data", str(DEMO_DATA), "--sandbox", "local", "--only", TASK_A,
                   "--repeats", "2", "--out", str(tmp_path / "o"), "--dry-run", "--endpoint", "https://example.invalid")
    assert text.exit_code == 1  # the run's own preflight speaks in a dry run too
    assert not (tmp_path / "o").exists()


# -- -x/--fail-fast and --max-cost --------------------------------------------------------------

def test_fail_fast_stops_after_the_first_cell_that_does_not_pass(tmp_path):
    out = tmp_path / "camp"
    result = _invoke("run", *FAST, "--model", "noop", "--only", TASK_A, "--only", TASK_B, "--out", str(out), "-x")
    assert result.exit_code == 1, result.output  # a cell left unrun: the campaign is incomplete
    assert f"stopped at {TASK_A} rep0: --fail-fast: {TASK_A} rep0 failed" in result.output
    assert "NOT RUN" in result.output
    assert (out / TASK_A / "rep0" / "result.json").is_file() and not (out / TASK_B / "rep0" / "result.json").exists()
    (unscored,) = _manifest(out)["unscored_cells"]
    assert (unscored["task_id"], unscored["reason"]) == (TASK_B, "stopped")
    assert unscored["detail"] == f"--fail-fast: {TASK_A} rep0 failed"
    # A rerun without it fills the stopped cell; the scored failure is kept.
    rest = _invoke("run", *FAST, "--model", "noop", "--only", TASK_A, "--only", TASK_B, "--out", str(out))
    assert rest.exit_code == 0 and "resumed 1, ran 1" in rest.output


def test_fail_fast_ignores_a_resumed_failure_and_stops_nothing_that_passes(tmp_path):
    out = tmp_path / "camp"
    assert _invoke("run", *FAST, "--only", TASK_A, "--only", TASK_B, "--out", str(out), "--fail-fast").exit_code == 0
    assert _manifest(out)["unscored_cells"] == []


def test_max_cost_starts_no_cell_once_the_campaigns_recorded_cost_passes_it(tmp_path):
    out = tmp_path / "camp"
    assert _invoke("run", *FAST, "--only", TASK_A, "--out", str(out)).exit_code == 0
    record_path = out / TASK_A / "rep0" / "result.json"
    record = json.loads(record_path.read_text())
    record["cost_usd"] = 1.25  # as a priced model's session records it
    record_path.write_text(json.dumps(record))
    grown = ["run", *FAST, "--only", TASK_A, "--only", TASK_B, "--out", str(out), "--extend"]
    stopped = _invoke(*grown, "--max-cost", "1")
    assert stopped.exit_code == 1, stopped.output
    assert "--max-cost 1: the campaign has spent 1.25 USD" in stopped.output
    assert not (out / TASK_B / "rep0" / "result.json").exists()
    assert _manifest(out)["unscored_cells"][0]["reason"] == "stopped"
    within = _invoke(*grown, "--max-cost", "2")
    assert within.exit_code == 0, within.output
    assert (out / TASK_B / "rep0" / "result.json").is_file()


def test_max_cost_must_not_be_negative():
    result = _invoke("run", "--max-cost", "-1")
    assert result.exit_code == 2


# -- the closing line and results --json --------------------------------------------------------

def test_run_ends_with_one_line_of_scored_cells_pass_rate_and_wall_time(tmp_path):
    result = _invoke("run", *FAST, "--model", "noop", "--only", TASK_A, "--out", str(tmp_path / "o"))
    assert result.exit_code == 0, result.output
    last = result.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"noop: 1/1 scored, pass@1 0\.0 %, \d+ s", last), last
    as_json = _invoke("run", *FAST, "--only", TASK_A, "--out", str(tmp_path / "j"), "--json")
    assert as_json.exit_code == 0
    assert [json.loads(line)["task_id"] for line in as_json.stdout.splitlines()] == [TASK_A]  # stdout stays JSON
    assert re.search(r"oracle: 1/1 scored, pass@1 100\.0 %, \d+ s", as_json.stderr)


def test_results_json_prints_results_json_and_still_writes_the_files(tmp_path):
    assert _invoke("run", *FAST, "--only", TASK_A, "--out", str(tmp_path / "camp")).exit_code == 0
    tables = tmp_path / "tables"
    result = _invoke("results", str(tmp_path / "camp"), "--out", str(tables), "--no-plots", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == json.loads((tables / "results.json").read_text())
    assert (tables / "results.md").is_file() and f"wrote {tables / 'results.json'}" in result.stderr


# -- shell completion ---------------------------------------------------------------------------

def test_the_root_offers_shell_completion_and_completes_the_lazy_verbs_and_their_options(monkeypatch):
    import typer.completion

    # The shell is detected from the process tree (CI's runs under make's `sh`, which typer cannot complete).
    monkeypatch.setattr(typer.completion, "_get_shell_name", lambda: "bash")
    shown = _invoke("--show-completion", prog_name="apex-voice")
    assert shown.exit_code == 0, shown.output
    assert "_APEX_VOICE_COMPLETE=complete_bash" in shown.stdout
    assert "--install-completion" in _invoke("--help").stdout

    def complete(words: str) -> list[str]:
        done = _invoke(prog_name="apex-voice", env={"_APEX_VOICE_COMPLETE": "complete_bash", "COMP_WORDS": words,
                                                    "COMP_CWORD": str(len(words.split()) - (not words.endswith(" ")))})
        assert done.exit_code == 0, done.output
        return done.stdout.split()

    assert complete("apex-voice ru") == ["run"]
    assert complete("apex-voice run --fail") == ["--fail-fast"]
    assert complete("apex-voice run --executor ") == ["local", "ray"]
    assert "probe" in complete("apex-voice sandbox ")


def test_dry_run_names_an_unusable_result_and_leaves_it_where_it_is(tmp_path):
    out = tmp_path / "camp"
    assert _invoke("run", *FAST, "--only", TASK_A, "--out", str(out)).exit_code == 0
    broken = out / TASK_A / "rep0" / "result.json"
    broken.write_text("{not json")
    plan = _invoke("run", *FAST, "--only", TASK_A, "--out", str(out), "--dry-run")
    assert plan.exit_code == 0, plan.output
    assert plan.stdout.startswith(f"{TASK_A} rep0: to run ({broken}: ")
    assert broken.read_text() == "{not json" and not list(broken.parent.glob("result.json.unusable-*"))
