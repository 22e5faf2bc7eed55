"""``results`` keeps campaigns of different identity apart and prints rates that read right."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.results import plots
from harness.results.analysis import analyse
from harness.results.identity import keep_apart
from harness.results.result_record import ResultRecord
from harness.results.run_tree import load_campaign

TASKS = [f"demo_task_{i:03d}" for i in range(6)]


def _campaign(path: Path, *, condition: str, recorded: str, tasks: list[str], passes: dict[tuple[str, int], int],
              repeats: int = 1, manifest: dict | None = None) -> Path:
    (path).mkdir(parents=True)
    (path / "campaign.json").write_text(json.dumps({
        "model": "oracle", "display_name": "Oracle (reference policy)", "condition": recorded, "repeats": repeats,
        "max_turns": 44, "user_audio": "auto", "n_tasks": len(tasks), "task_ids": tasks, "acoustics": "none",
        "tool_mode": "bridge", "planned_cells": {t: list(range(repeats)) for t in tasks}, **(manifest or {}),
    }))
    for task in tasks:
        for rep in range(repeats):
            pts = passes.get((task, rep), 1)
            ResultRecord(task_id=task, rep=rep, model="oracle", run_id=f"r{rep}", condition=condition, pts=pts,
                         components={"GS": True, "PC": True, "RA": True, "WA": bool(pts)},
                         outcome="SUCCESS" if pts else "FAILURE").write(path / task / f"rep{rep}")
    return path


@pytest.fixture
def runs(tmp_path) -> tuple[Path, Path]:
    # The C3 campaign's manifest says C2, as manifests did before the condition was recorded right.
    c2 = _campaign(tmp_path / "oracle", condition="C2", recorded="C2", tasks=TASKS, passes={(TASKS[0], 0): 0})
    c3 = _campaign(tmp_path / "cond_C3", condition="C3", recorded="C2", tasks=TASKS[:1], passes={})
    return c2, c3


def _results(*args: str):
    return CliRunner().invoke(app, ["results", *args, "--no-plots"], catch_exceptions=False, env={"COLUMNS": "120"})


def test_campaigns_of_one_model_in_two_conditions_are_kept_apart_and_named_so(runs, tmp_path):
    c2, c3 = runs
    result = _results(str(c2), str(c3), "--out", str(tmp_path / "r"))
    assert result.exit_code == 0, result.output
    models = json.loads((tmp_path / "r" / "results.json").read_text())["models"]
    assert set(models) == {"oracle[C2]", "oracle[C3]"}
    assert (models["oracle[C2]"]["n"], models["oracle[C3]"]["n"]) == (6, 1)
    # The terminal shows the keys with their brackets (text, not markup), and says why in one line.
    assert "oracle[C2]" in result.output and "oracle[C3]" in result.output
    (note,) = [line for line in result.output.splitlines() if "kept apart" in line]
    assert "condition" in note and "never merged" in note
    # The header claims neither one task count nor one condition for the mixed set.
    header = (tmp_path / "r" / "results.md").read_text().splitlines()[2]
    assert "6 tasks (the campaigns cover different tasks: oracle[C3] 1, oracle[C2] 6)" in header  # ranked by rate: 1/1 above 5/6
    assert "conditions C2 (oracle[C2]), C3 (oracle[C3])" in header


def test_an_identity_field_of_an_odd_shape_is_unknown_without_hiding_the_others(runs):
    c2, c3 = runs
    manifest = json.loads((c3 / "campaign.json").read_text())
    manifest.update(repeats="three", acoustics=["moderate"], task_ids="all")
    (c3 / "campaign.json").write_text(json.dumps(manifest))
    campaigns, notes = keep_apart([load_campaign(c2), load_campaign(c3)])
    assert [c.key for c in campaigns] == ["oracle[C2]", "oracle[C3]"]
    (note,) = notes  # the odd fields are unknown, which differs from any known value
    assert "condition, acoustics, tasks, repeats" in note


def test_the_terminal_prints_rates_with_distinct_names_and_withholds_small_intervals(runs, tmp_path):
    c2, c3 = runs
    result = _results(str(c2), str(c3), "--out", str(tmp_path / "r"))
    lines = result.output.splitlines()
    header = next(line for line in lines if "model" in line and "pass@1 %" in line)
    names = [cell.strip() for cell in header.strip("┃ ").split("┃")]
    assert len(names) == len(set(names))
    c2_row = next(line for line in lines if line.startswith("│ oracle[C2]"))
    cells = [cell.strip() for cell in c2_row.strip("│ ").split("│")]
    assert cells[names.index("pass@1 %")] == "83.3"  # 5 of 6 tasks: a rate, not a count
    (intervals,) = [line for line in lines if line.startswith("pass@1 % 95% CI")]
    assert "oracle[C2] [" in intervals
    assert "oracle[C3] n/a (n=1: fewer than 5 tasks cannot carry a bootstrap interval)" in intervals
    stored = json.loads((tmp_path / "r" / "results.json").read_text())["models"]["oracle[C3]"]
    assert stored["ci95"]["pass1_pct"] is None and "cannot carry a bootstrap interval" in stored["ci95_note"]
    assert "cannot carry a bootstrap interval" in (tmp_path / "r" / "results.md").read_text()


def test_k_of_three_columns_are_rates_under_their_published_names(tmp_path):
    passes = {(TASKS[0], 0): 0, (TASKS[0], 1): 0, (TASKS[0], 2): 0, (TASKS[1], 2): 0}
    campaign = _campaign(tmp_path / "oracle", condition="C2", recorded="C2", tasks=TASKS, passes=passes, repeats=3)
    result = _results(str(campaign), "--out", str(tmp_path / "r"))
    lines = result.output.splitlines()
    header = next(line for line in lines if "model" in line and "pass@1 %" in line)
    names = [cell.strip() for cell in header.strip("┃ ").split("┃")]
    assert {"pass@1 %", "pass@3 %", "Reliable@3 %"} <= set(names) and len(names) == len(set(names))
    cells = [cell.strip() for cell in next(line for line in lines if line.startswith("│ oracle")).strip("│ ").split("│")]
    assert cells[names.index("pass@1 %")] == "77.8"  # 14 of 18 runs
    assert (cells[names.index("pass@3 %")], cells[names.index("Reliable@3 %")]) == ("83.3", "66.7")


def test_compare_is_printed_in_the_terminal_too(runs, tmp_path):
    c2, c3 = runs
    result = _results(str(c2), str(c3), "--out", str(tmp_path / "r"), "--compare", "oracle[C2]", "oracle[C3]")
    assert result.exit_code == 0, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("compare:")]
    assert "oracle[C2] vs oracle[C3]" in line and "on the 1 tasks both completed" in line
    assert "no intervals" in line  # one shared task: no bootstrap interval of the difference
    assert line.removeprefix("compare: ") in (tmp_path / "r" / "results.md").read_text()


async def test_plots_show_n_wrap_long_names_and_never_repeat_a_legend_entry(tmp_path, monkeypatch):
    long_name = "A very long model display name that would clip the label, title and legend"
    campaigns = []
    for name, repeats in (("first", 3), ("second", 3)):
        path = _campaign(tmp_path / name, condition="C2", recorded="C2", tasks=TASKS, passes={}, repeats=repeats,
                         manifest={"model": name, "display_name": f"{long_name} ({name})"})
        campaigns.append(load_campaign(path))
    analysis = await analyse(campaigns, 3)
    figures = []
    monkeypatch.setattr(plots, "_save", lambda plt, fig, path: figures.append((path.name, fig)))
    plots.write_plots(analysis, tmp_path / "plots")
    board = dict(figures)["leaderboard.png"]
    ax = board.axes[0]
    _, labels = ax.get_legend_handles_labels()
    assert labels == ["pass@1 %", "pass@3 %", "Reliable@3 %"]
    ticks = [tick.get_text() for tick in ax.get_xticklabels()]
    assert all("n=6" in tick for tick in ticks)
    assert all(len(line) <= plots.LABEL_WIDTH for tick in ticks for line in tick.splitlines())
    assert all(len(line) <= plots.TITLE_WIDTH for line in ax.get_title().splitlines())
    assert "latency.png" not in dict(figures)  # these runs carry no audio latency: no empty chart


def test_at_80_columns_a_long_key_leaves_the_status_word_whole(tmp_path):
    """The walk through the README: ``INCOMPLET`` / ``E`` on two lines beside ``container:my-agent:latest``."""
    campaign = _campaign(tmp_path / "agent", condition="C2", recorded="C2", tasks=TASKS, passes={},
                         manifest={"model": "container:my-agent:latest"})
    (campaign / TASKS[0] / "rep0" / "result.json").unlink()
    result = CliRunner().invoke(app, ["results", str(campaign), "--out", str(tmp_path / "r"), "--no-plots"],
                                catch_exceptions=False, env={"COLUMNS": "80"})
    assert result.exit_code == 1, result.output  # written, but the campaign is incomplete
    (row,) = [line for line in result.output.splitlines() if line.startswith("│ container:my-agent:latest")]
    assert row.rstrip(" │").endswith("INCOMPLETE")


def test_compare_gives_each_difference_in_the_unit_of_its_interval(tmp_path):
    """It printed ``pass@1 difference +10 tasks (CI [100.0, 100.0] pp)``: a count beside an interval in pp."""
    a = _campaign(tmp_path / "a", condition="C2", recorded="C2", tasks=TASKS, passes={},
                  manifest={"model": "model_a"})
    b = _campaign(tmp_path / "b", condition="C2", recorded="C2", tasks=TASKS,
                  passes={(TASKS[0], 0): 0, (TASKS[1], 0): 0, (TASKS[2], 0): 0}, manifest={"model": "model_b"})
    result = _results(str(a), str(b), "--out", str(tmp_path / "r"), "--compare", "model_a", "model_b")
    assert result.exit_code == 0, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("compare:")]
    assert "difference +50.0 pp (95 % CI [" in line
    assert "pass@1 difference" not in line  # k = 1: pass@k is pass@1, said once (issue 36)
    assert "tasks (CI" not in line


def test_a_folder_of_campaigns_is_read_as_its_campaigns_and_says_so(tmp_path):
    """README: ``results runs/* --out results`` after the compose stack wrote ``runs/compose/oracle``
    stopped with 'no result.json under runs/compose'."""
    _campaign(tmp_path / "runs" / "oracle", condition="C2", recorded="C2", tasks=TASKS, passes={})
    _campaign(tmp_path / "runs" / "compose" / "oracle", condition="C2", recorded="C2", tasks=TASKS[:1], passes={})
    runs = sorted((tmp_path / "runs").iterdir())
    result = _results(*map(str, runs), "--out", str(tmp_path / "r"))
    assert result.exit_code == 0, result.output
    models = json.loads((tmp_path / "r" / "results.json").read_text())["models"]
    assert {key: m["n"] for key, m in models.items()} == {"oracle[tasks=6]": 6, "oracle[tasks=1]": 1}
    (note,) = [line for line in result.output.splitlines() if "holds campaigns" in line]
    assert note == f"note: {tmp_path / 'runs' / 'compose'} holds campaigns, each reported: " \
                   f"{tmp_path / 'runs' / 'compose' / 'oracle'}"
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = _results(str(empty), "--out", str(tmp_path / "r2"))
    assert refused.exit_code == 2 and "no result.json under" in refused.output


def _identity(**fields) -> dict:
    from harness.results.measurement_identity import MeasurementIdentity

    return {"identity": MeasurementIdentity(model=fields.pop("model", "oracle"), **fields).model_dump(mode="json")}


def test_campaigns_of_one_key_differing_only_in_the_provider_model_are_kept_apart_by_it(tmp_path):
    """``results/identity.py`` compared ``acoustics_seed`` (never written) and not the provider model."""
    a = _campaign(tmp_path / "a", condition="C2", recorded="C2", tasks=TASKS, passes={},
                  manifest=_identity(provider_model="model-a", seed=3))
    b = _campaign(tmp_path / "b", condition="C2", recorded="C2", tasks=TASKS, passes={},
                  manifest=_identity(provider_model="model-b", seed=4))
    result = _results(str(a), str(b), "--out", str(tmp_path / "r"))
    assert result.exit_code == 0, result.output
    models = json.loads((tmp_path / "r" / "results.json").read_text())["models"]
    assert set(models) == {"oracle[provider_model=model-a]", "oracle[provider_model=model-b]"}
    (note,) = [line for line in result.output.splitlines() if "kept apart" in line]
    assert "(provider_model, seed)" in note


def test_the_header_names_every_identity_field_the_compared_models_differ_in(tmp_path):
    a = _campaign(tmp_path / "a", condition="C2", recorded="C2", tasks=TASKS, passes={},
                  manifest={"model": "model_a", **_identity(model="model_a", observer="llm", observer_model="m")})
    b = _campaign(tmp_path / "b", condition="C2", recorded="C2", tasks=TASKS, passes={},
                  manifest={"model": "model_b", **_identity(model="model_b", max_turns=8)})
    result = _results(str(a), str(b), "--out", str(tmp_path / "r"))
    assert result.exit_code == 0, result.output
    header = (tmp_path / "r" / "results.md").read_text()
    (line,) = [line for line in header.splitlines() if "not measured alike" in line]
    assert "observer (model_a: llm, model_b: deterministic)" in line
    assert "observer_model (model_a: m, model_b: none)" in line and "max_turns (model_a: 44, model_b: 8)" in line
    assert "; model (" not in line and ": model (" not in line  # the models themselves are what is compared
    assert any("not measured alike" in line for line in result.output.splitlines())
    alike = _campaign(tmp_path / "c", condition="C2", recorded="C2", tasks=TASKS, passes={},
                      manifest={"model": "model_c", **_identity(model="model_c", max_turns=8)})
    again = _results(str(b), str(alike), "--out", str(tmp_path / "r2"))
    assert "not measured alike" not in again.output


def test_campaigns_of_three_and_two_repetitions_say_the_third_is_not_counted(tmp_path):
    a = _campaign(tmp_path / "a", condition="C2", recorded="C2", tasks=TASKS, passes={}, repeats=3,
                  manifest={"model": "model_a"})
    b = _campaign(tmp_path / "b", condition="C2", recorded="C2", tasks=TASKS, passes={}, repeats=2,
                  manifest={"model": "model_b"})
    result = _results(str(a), str(b), "--out", str(tmp_path / "r"))
    assert result.exit_code == 0, result.output
    (note,) = [line for line in result.output.splitlines() if "ran more repetitions" in line]
    assert "k = 2" in note and "model_a 3" in note and "only repetitions 0–1 are counted" in note
    assert note.removeprefix("note: ") in (tmp_path / "r" / "results.md").read_text()
    at_three = _results(str(a), str(b), "--out", str(tmp_path / "r3"), "--repeats", "3")
    assert any("ran fewer repetitions (model_b 2)" in line for line in at_three.output.splitlines())


def test_tool_paths_of_a_ten_task_and_a_one_task_campaign_say_so(tmp_path):
    ten = [f"demo_task_{i:03d}" for i in range(10)]
    a = _campaign(tmp_path / "a", condition="C2", recorded="C2", tasks=ten, passes={}, manifest={"model": "model_a"})
    b = _campaign(tmp_path / "b", condition="C2", recorded="C2", tasks=ten[:1], passes={},
                  manifest={"model": "model_b"})
    result = _results(str(a), str(b), "--out", str(tmp_path / "r"), "--by", "tool-path")
    assert result.exit_code == 0, result.output
    assert "the campaigns cover different tasks (model_a 10, model_b 1)" in result.output
    assert "> note: the campaigns cover different tasks (model_a 10, model_b 1)" in \
        (tmp_path / "r" / "tool_paths.md").read_text()
    assert json.loads((tmp_path / "r" / "tool_paths.json").read_text())["notes"]


async def test_plots_label_every_bar_explain_slice_axes_and_draw_no_empty_latency_chart(tmp_path, monkeypatch):
    """Issue 36 §7: no value labels (a 0 % bar looked missing), `kburden`-style prefixes never
    explained, one-task slices drawn as loud as any, an empty latency chart for a C0 campaign."""
    path = _campaign(tmp_path / "c0", condition="C0", recorded="C0", tasks=TASKS, passes={(TASKS[0], 0): 0},
                     manifest={"model": "chat:x"})
    analysis = await analyse([load_campaign(path)], 1)
    analysis.slices = {"kburden": [{"label": "K0_NONE", "n": 1, "chat:x": {"success": 0.0}},
                                   {"label": "K1_SUPPLIED", "n": 5, "chat:x": {"success": 0.8}}]}
    figures = []
    monkeypatch.setattr(plots, "_save", lambda plt, fig, path: figures.append((path.name, fig)))
    written = plots.write_plots(analysis, tmp_path / "plots")
    assert "latency.png" not in [p.name for p in written] and "latency.png" not in dict(figures)
    gates = dict(figures)["gates.png"].axes[0]
    bar_labels = [t.get_text() for t in gates.texts]
    assert len(bar_labels) == 4 and all(label.isdigit() for label in bar_labels)
    heat = dict(figures)["slices.png"].axes[0]
    rows = [t.get_text() for t in heat.get_yticklabels()]
    assert rows == ["Knowledge burden: K0_NONE (n=1)", "Knowledge burden: K1_SUPPLIED (n=5)"]
    assert [t.get_text() for t in heat.texts] == ["0", "80"]
    assert len(heat.patches) == 1  # the one-task row is veiled, the five-task row is not
