"""Issue 36 §2: the surprises of a new user's day, each through the command that met it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from typer.testing import CliRunner

from harness.cli.main import app
from tests.conftest import DEMO_DATA

DEMO_TASK = "demo_benefits_enrollment_001"


def _invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, list(args), env=env)


def _error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


def test_run_with_docker_and_no_engine_is_one_line_not_a_traceback(tmp_path):
    """Surprise 1: `run --sandbox docker` with no engine answering printed a four-level traceback."""
    env = {"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    for extra in ([], ["--model", "native-oracle", "--tool-mode", "native"]):
        result = _invoke("run", "--sandbox", "docker", "--data", str(DEMO_DATA), "--only", DEMO_TASK,
                         "--out", str(tmp_path / "runs"), *extra, env=env)
        assert result.exit_code == 1, result.output
        assert "Traceback" not in result.output
        (line,) = _error_lines(result.output)
        assert "no Docker engine answers" in line and "--sandbox local" in line


def test_results_out_an_existing_file_is_a_usage_line(tmp_path):
    """Surprise 2: `results --out FILE` raised FileExistsError; `run --out FILE` says one line too."""
    runs = tmp_path / "runs"
    made = _invoke("run", "--condition", "C0", "--data", str(DEMO_DATA), "--only", DEMO_TASK,
                   "--sandbox", "local", "--out", str(runs))
    assert made.exit_code == 0, made.output
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine\n")
    for verb in (["results", str(runs), "--no-plots"], ["run", "--condition", "C0", "--only", DEMO_TASK,
                                                        "--sandbox", "local"]):
        result = _invoke(*verb, "--out", str(a_file))
        assert result.exit_code == 2, result.output
        (line,) = _error_lines(result.output)
        assert f"--out {a_file}: is a file" in line
        assert a_file.read_text() == "mine\n"


def test_replay_of_a_plain_file_or_a_folder_of_garbage_is_a_usage_line(tmp_path):
    """Surprise 5: `replay` opened an empty screen and exited 0 on what is no session."""
    plain = tmp_path / "notes.txt"
    plain.write_text("just some notes\nnothing more\n")
    garbage = tmp_path / "garbage" / "run-1"
    garbage.mkdir(parents=True)
    (garbage / "events.jsonl").write_bytes(b"\x00\xff not json\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "events.jsonl").write_text("")
    for path, says in ((plain, "not an event"), (tmp_path / "garbage", "not a session's event log"),
                       (empty, "holds no event"), (tmp_path / "nothing", "no events.jsonl")):
        result = _invoke("replay", str(path))
        assert result.exit_code == 2, (path, result.output)
        (line,) = _error_lines(result.output)
        assert says in line, line


def test_run_tui_without_a_terminal_runs_with_progress_lines(tmp_path):
    """Surprise 3: `run --tui` piped printed escape codes into the log, then waited for `q` forever."""
    result = _invoke("run", "--tui", "--condition", "C0", "--data", str(DEMO_DATA), "--only", DEMO_TASK,
                     "--sandbox", "local", "--out", str(tmp_path / "runs"))
    assert result.exit_code == 0, result.output
    assert "--tui needs a terminal" in result.output
    assert "\x1b[" not in result.output
    assert (tmp_path / "runs" / DEMO_TASK / "rep0" / "result.json").is_file()


def test_sandbox_probe_takes_a_task_id_like_every_other_verb(tmp_path):
    """Surprise 11: `sandbox probe --task` wanted a path where every other verb takes a task id, and
    with Docker down its message named an empty task id."""
    result = _invoke("sandbox", "probe", "--task", DEMO_TASK, "--backend", "local", "--json")
    assert result.exit_code == 0, result.output
    assert '"get_enrollment_window"' in result.output
    down = _invoke("sandbox", "probe", "--task", DEMO_TASK, "--backend", "docker",
                   env={"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"})
    assert down.exit_code == 1 and "no Docker engine answers" in down.output, down.output
    unknown = _invoke("sandbox", "probe", "--task", "no_such_task", "--backend", "local")
    assert unknown.exit_code == 2 and "unknown task id(s) no_such_task" in unknown.output


def test_a_condition_named_in_lower_case_is_that_condition(tmp_path):
    """Surprise 17: `--condition c0` was refused for its case."""
    result = _invoke("run", "--condition", "c0", "--data", str(DEMO_DATA), "--only", DEMO_TASK,
                     "--sandbox", "local", "--out", str(tmp_path / "runs"))
    assert result.exit_code == 0, result.output

    manifest = json.loads((tmp_path / "runs" / "campaign.json").read_text())
    assert manifest["condition"] == "C0"
    unknown = _invoke("run", "--condition", "c9", "--only", DEMO_TASK, "--out", str(tmp_path / "other"))
    assert unknown.exit_code == 2 and "unknown condition 'c9'" in unknown.output


def test_help_shows_values_and_flags_as_command_line_tools_do():
    """Surprise 15: flags shown as `<bool>`, choices as `<str>`, paragraphs broken mid-sentence."""
    for verb in (["run"], ["results"], ["validate"], ["judge-cache", "export"], []):
        result = _invoke(*verb, "--help", env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        assert "<bool>" not in result.output and "<str>" not in result.output, verb
        assert "<list[" not in result.output, verb
    run_help = _invoke("run", "--help", env={"COLUMNS": "200"}).output
    assert "--model" in run_help and "MODEL" in run_help
    assert "in the best available sandbox" in run_help  # a docstring's line break no longer cuts it
    judge = _invoke("judge-cache", "export", "--help", env={"COLUMNS": "200"}).output
    assert "judge_cache.sqlite3" in judge


def test_verbose_says_what_the_harness_decides_once_without_every_http_request(tmp_path):
    """Surprise 16: `-v` printed the sandbox line twice and every control request's httpx line."""
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli.main", "-v", "run", "--sandbox", "auto", "--condition", "C0",
         "--data", str(DEMO_DATA), "--only", DEMO_TASK, "--out", str(tmp_path / "runs")],
        capture_output=True, text=True, timeout=300, env={**os.environ, "DOCKER_HOST": "unix:///nonexistent"},
    )
    assert done.returncode == 0, done.stderr
    assert "HTTP Request:" not in done.stderr
    assert sum("sandbox backend" in line or line.startswith("sandbox:") for line in done.stderr.splitlines()) == 1


def test_models_at_80_columns_says_which_columns_it_left_out():
    """Surprise 17: `models` at 80 columns dropped columns without saying so."""
    narrow = _invoke("models", env={"COLUMNS": "80"})
    assert narrow.exit_code == 0
    assert "not shown at this width: provider" in narrow.output
    wide = _invoke("models", env={"COLUMNS": "200"})
    assert "not shown at this width" not in wide.output


def test_download_without_a_network_says_so_in_words(tmp_path, monkeypatch):
    """Surprise 17: offline, `download` showed a raw LocalEntryNotFoundError."""
    from huggingface_hub.errors import LocalEntryNotFoundError

    import harness.cli.download_cmd as download_cmd

    def offline(*args, **kwargs):
        raise LocalEntryNotFoundError("Got: ConnectError: [Errno -2] Name or service not known")

    monkeypatch.setattr(download_cmd, "download_snapshot", offline)
    result = _invoke("download", "--local-dir", str(tmp_path / "data"))
    assert result.exit_code == 1
    (line,) = _error_lines(result.output)
    assert "cannot be reached (no network?)" in line and "LocalEntryNotFoundError" not in line


def test_the_probes_intended_refusal_does_not_read_as_an_error(capsys):
    """Surprise 12: the compose stack's first harness line (the probe's refused call) looked like an error."""
    from harness.cli.sandbox_cmd import EMPTY_ARGUMENTS, _print_summary

    summary = {"backend": "external", "mcp_url": "http://task-mcp:8080/mcp", "tools": ["submit"], "mcp_tools": ["submit"],
               "call": {"tool": "submit", "why": EMPTY_ARGUMENTS, "ok": False, "output": {"error": "missing: id"}},
               "snapshot": {"artifacts": 0, "calls": 1, "versions": 0, "approvals": 0, "recovered": False},
               "timings": {"start_to_ready_s": 0.01}}
    _print_summary(summary)
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("read call"))
    assert "refused, as intended" in line and "not an error" in line


def test_exit_codes_follow_one_rule_a_failing_model_is_a_result(tmp_path):
    """Surprise 10, decided: 0 when the figures are final (a model failing every task is a result), 1
    when the work could not be finished as asked, 2 when the command itself is wrong."""
    runs = tmp_path / "runs"
    failing = _invoke("run", "--model", "noop", "--condition", "C0", "--data", str(DEMO_DATA), "--only", DEMO_TASK,
                      "--sandbox", "local", "--out", str(runs))
    assert failing.exit_code == 0, failing.output
    assert json.loads((runs / DEMO_TASK / "rep0" / "result.json").read_text())["pts"] == 0
    complete = _invoke("results", str(runs), "--no-plots", "--out", str(tmp_path / "tables"))
    assert complete.exit_code == 0, complete.output
    wrong = _invoke("run", "--model", "noop", "--repeats", "0")
    assert wrong.exit_code == 2


def test_results_md_with_one_repetition_says_each_figure_once(tmp_path):
    """Surprise 6: k = 1 repeated headers (`pass@1 (mean of 1) | pass@1 % | pass@1 | …`), printed
    "Withheld for fewer than 5 tasks" above a 10-task interval table, and said the difference twice."""
    runs = tmp_path / "runs"
    for model in ("oracle", "noop"):
        made = _invoke("run", "--model", model, "--condition", "C0", "--data", str(DEMO_DATA), "--sandbox", "local",
                       "--out", str(runs / model))
        assert made.exit_code == 0, made.output
    result = _invoke("results", str(runs / "oracle"), str(runs / "noop"), "--compare", "oracle", "noop",
                     "--no-plots", "--out", str(tmp_path / "tables"))
    assert result.exit_code == 0, result.output
    markdown = (tmp_path / "tables" / "results.md").read_text()
    assert "| Model | n | pass@1 | pass@1 % |\n" in markdown
    assert "mean of 1" not in markdown and "Reliable@1" not in markdown
    assert "Withheld" not in markdown
    (sentence,) = [line for line in markdown.splitlines() if line.startswith("oracle vs noop:")]
    assert sentence.count("difference") == 1


def test_images_build_help_names_every_image_it_builds():
    """Surprise 12: `images build --only` listed two images where it builds four."""
    from harness.cli.images_cmd import IMAGE_NAMES
    from sandbox.image_build import IMAGE_SPECS

    assert IMAGE_NAMES == tuple(IMAGE_SPECS)
    result = _invoke("images", "build", "--help", env={"COLUMNS": "200"})
    assert all(name in result.output for name in IMAGE_SPECS)


def test_run_help_groups_its_options():
    """Surprise 15: `run --help` was 214 lines with no option groups."""
    result = _invoke("run", "--help", env={"COLUMNS": "100"})
    panels = [line.strip("╭─ ").split(" ─")[0] for line in result.output.splitlines() if line.startswith("╭─")]
    assert {"What to run", "The agent", "Where it runs", "The campaign directory", "Output"} <= set(panels)
    assert panels.count("Options") <= 1  # --help alone, where typer puts it
