"""Write ``results.md``, ``results.json`` and the CSVs in the published layout and columns (§7.10).

Published tables keep their published columns; what we add (confidence intervals, the audio
measured floor-control columns, pending runs, the paired comparison, cost) comes in labelled
columns or sections of its own, so a reader of the paper's tables finds them unchanged.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness import __version__
from harness.atomic_write import atomic_write_text
from harness.grading.report import GATES

from .analysis import Analysis, ModelSummary
from .bootstrap import MIN_CI_TASKS
from .noise_floor import noise_line
from .slices import AXES

__all__ = ["RESULTS_JSON", "comparison_sentence", "scope_line", "write_tables"]

#: The machine-readable table file (``results --json`` prints it).
RESULTS_JSON = "results.json"

MISSING = "–"


def _f(value: float | None, digits: int, *, signed: bool = False) -> str:
    if value is None:
        return MISSING
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _ci(ci: tuple[float, float] | None) -> str:
    return MISSING if ci is None else f"[{ci[0]:.1f}, {ci[1]:.1f}]"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "| :--- | " + " | ".join("---:" for _ in header[1:]) + " |"]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return lines + [""]


def _leaderboard(a: Analysis) -> list[str]:
    k = a.k
    rows = []
    for m in a.models:
        r = m.reliability
        row = [m.campaign.display_name, str(r.n), _f(r.pass1_mean, 1), _f(r.pct(r.pass1_mean), 1)]
        if k > 1:  # with one repetition pass@k and Reliable@k are pass@1: one column each, not three
            row += [str(r.pass_at_k), _f(r.pct(r.pass_at_k), 1), str(r.reliable_at_k), _f(r.pct(r.reliable_at_k), 1)]
        rows.append(row)
    header = ["Model", "n", f"pass@1 (mean of {k})" if k > 1 else "pass@1", "pass@1 %"]
    if k > 1:
        header += [f"pass@{k}", f"pass@{k} %", f"Reliable@{k}", f"Reliable@{k} %"]
    return ["## Leaderboard", "", *_table(header, rows)]


def _noise_floor(a: Analysis) -> list[str]:
    """Under the leaderboard: how much of it is repetition noise (harness/results/noise_floor.py)."""
    if a.k == 1:  # nothing to flip: say so once, and how to see it
        return ["## Noise floor (ours)", "",
                "One repetition per task: no verdict can flip, so the repetitions' noise is unseen "
                "(run with `--repeats 3` to measure it).", ""]
    lines = ["## Noise floor (ours)", "",
             f"Per campaign: tasks whose {a.k} verdicts disagree; pass^j (j repetitions all passing, τ-bench's; "
             f"pass^{a.k} = Reliable@{a.k} / n); the smallest difference a paired test of two campaigns of this size "
             "detects at 80 % power (α = 0.05) from the repetitions' noise alone, and the repetitions a stated "
             "difference needs.", ""]
    lines += [f"- {noise_line(m.campaign.display_name, m.noise)}" for m in a.models]
    if a.pair_noise is not None:
        lines.append(f"- {a.pair_noise.sentence}")
    return [*lines, ""]


def _compared_metrics(a: Analysis) -> list[str]:
    """``--metrics``: the other benchmarks' definitions, recomputed from each campaign's audio."""
    if not a.compared_metrics:
        return []
    keys = [m.key for m in a.models if m.key in a.compared_metrics]
    by_variant: dict[str, dict[str, dict[str, Any]]] = {}
    for key in keys:
        for row in a.compared_metrics[key]:
            by_variant.setdefault(row["variant"], {})[key] = row
    rows = []
    for variant, cells in by_variant.items():
        unit = next(iter(cells.values()))["unit"]
        values = []
        for key in keys:
            cell = cells.get(key) or {}
            value = cell.get("value")
            shown = MISSING if value is None else (_f(value, 0) if unit in ("ms", "turns") else _f(value, 3))
            values.append(f"{shown} (n={cell.get('n')})" if cell.get("n") is not None else shown)
        rows.append([variant, unit, *values])
    return ["## Turn-taking under other benchmarks' definitions (`--metrics`)", "",
            "Each source's definition recomputed from the campaign's audio (docs/metrics-compared.md), pooled "
            "over its sessions: means weighted by each session's n, totals summed.", "",
            *_table(["variant", "unit", *(m.campaign.display_name for m in a.models if m.key in keys)], rows), ""]


def _intervals(a: Analysis) -> list[str]:
    k = a.k
    rows = []
    for m in a.models:
        if m.ci_note:  # too few tasks: the reason once, not a row of made-up certainty
            rows.append([m.campaign.display_name, str(m.reliability.n), m.ci_note,
                         *([MISSING] * ((2 if k > 1 else 0) + len(GATES)))])
            continue
        by_k = [_ci(m.ci.get("pass_at_k_pct")), _ci(m.ci.get("reliable_at_k_pct"))] if k > 1 else []
        rows.append([m.campaign.display_name, str(m.reliability.n), _ci(m.ci.get("pass1_pct")), *by_k,
                     *(_ci(m.ci.get(f"{g}_pct")) for g in GATES)])
    header = ["Model", "n", "pass@1 %", *([f"pass@{k} %", f"Reliable@{k} %"] if k > 1 else []), *(f"{g} %" for g in GATES)]
    withheld = [f"Withheld for a campaign of fewer than {MIN_CI_TASKS} tasks.", ""] if any(m.ci_note for m in a.models) else []
    return ["## Confidence intervals (ours: 95 %, bootstrap over tasks)", "", *withheld, *_table(header, rows)]


def _repetitions(a: Analysis) -> list[str]:
    k = a.k
    rows = [[m.campaign.display_name, *map(str, m.reliability.rep_pass), *map(str, m.reliability.distribution)]
            for m in a.models]
    header = ["Model", *(f"rep{r}" for r in range(k)), *(f"{j}/{k}" for j in range(k + 1))]
    return [f"## Per-repetition pass@1 and k-of-{k} distribution", "", *_table(header, rows)]


def _completeness(a: Analysis) -> list[str]:
    """Ours: the denominator of each campaign, the scored-cells-only reading beside it, and every gap."""
    rows = []
    for m in a.models:
        r = m.reliability
        failures = sum(cell.counted_as == "failure" for cell in r.unscored)
        rows.append([m.campaign.display_name, "yes" if r.complete else "**INCOMPLETE**", str(r.n_planned),
                     str(r.n_scored), str(failures), str(len(r.unscored) - failures), _f(r.pct(r.pass1_mean), 1),
                     _f(r.scored_only_pass1_pct, 1)])
    header = ["Model", "complete", "cells planned", "cells scored", "unscored: failures", "unscored: left out",
              "pass@1 %", "pass@1 % (scored cells only)"]
    lines = ["## Completeness (ours)", "",
             "Every planned (task, repetition) cell counts: one without a usable score (not run, infrastructure, "
             "harness error, provider refused, stopped, an error row, a grade still pending the judge) is a failure "
             "in the leaderboard until `apex-voice regrade` settles it; only a published run missing a repetition "
             "is left out with its task, as published. The scored-cells-only pass@1 is beside it for reference, "
             "never instead of it.", "", *_table(header, rows)]
    for m in a.models:
        if m.reliability.unscored:
            lines += [f"Unscored cells of {m.campaign.display_name}:", "",
                      *(f"- {cell} — {'counted as a failure' if cell.counted_as == 'failure' else 'left out'}"
                        for cell in m.reliability.unscored), ""]
    return lines


def _gates(a: Analysis) -> list[str]:
    rows = []
    for m in a.models:
        agg = m.aggregates
        cells = [f"{_f(agg.gate_rate(g), 1)} ({agg.gate_pass.get(g, 0)})" if agg.gate_total.get(g) else MISSING
                 for g in GATES]
        rows.append([m.campaign.display_name, str(agg.runs), *cells])
    return ["## PTS gate pass rates (%, all runs)", "", *_table(["Model", "runs", *GATES], rows)]


def _latency(a: Analysis) -> list[str]:
    rows = []
    for m in a.models:
        f = m.aggregates.figures()
        rows.append([m.campaign.display_name, _f(f["rsl_p50"], 0), _f(f["rsl_p95"], 0), _f(f["ttr_p50"], 1),
                     _f(f["ttr_p95"], 1), _f(f["tool_calls_mean"], 1), _f(f["tool_ratio_mean"], 2),
                     _f(f["tool_ratio_p50"], 2)])
    header = ["Model", "RSL p50 ms", "RSL p95 ms", "TTR p50 s", "TTR p95 s", "tool calls", "tool ratio mean",
              "tool ratio p50"]
    return ["## Latency and tool-use efficiency", "", *_table(header, rows)]


def _duplex(a: Analysis) -> list[str]:
    rows = []
    for m in a.models:
        d = m.model_json()["duplex"]
        rows.append([m.campaign.display_name, _f(d["overlap_pct"], 1), _f(d["yield_pct"], 1),
                     str(d["n_yield_no_opportunity"]), _f(d["stop_p50_ms"], 0),
                     _f(d["stop_p95_ms"], 0), _f(d["yield_pct_audio"], 1), _f(d["stop_latency_p50_ms"], 0),
                     _f(d["stop_latency_p95_ms"], 0), str(d["n_stop_latency"]), _f(d["afa_corrected"], 1),
                     _f(d["afa_other"], 1), _f(d["gap"], 1, signed=True), _f(d["attrib_pct"], 1)])
    header = ["Model", "overlap %", "yield % (isl_ms)", "no floor to yield", "stop p50 ms (isl_ms)", "stop p95 ms (isl_ms)",
              "yield % (audio)", "stop p50 ms (audio)", "stop p95 ms (audio)", "n stops (audio)", "AFA corrected %",
              "AFA other %", "gap (pp)", "attrib %"]
    return ["## Full-duplex: floor control and correction uptake", "",
            "Stop latency twice: *isl_ms* is the published reading (barge-in records, samples > 10 ms); "
            "*audio* is ours, measured on the agent audio as played (`stop_latency_ms`). A barge-in that met no floor "
            "to yield (the agent silent or playing non-speech, or its audio finishing on its own) is no failure to "
            "yield: it is left out of both yield % and counted under *no floor to yield*.", "",
            *_table(header, rows)]


def _hearing(a: Analysis) -> list[str]:
    rows = []
    for m in a.models:
        h = m.aggregates.figures()["hearing"]
        rows.append([m.campaign.display_name, str(h["responses"]), str(h["mismatched_responses"]),
                     str(h["mismatched_runs"])])
    header = ["Model", "responses", "mismatched responses", "runs with a mismatch"]
    return ["## What the user heard", "",
            "A response is *mismatched* when words it played are not carried by local ASR of its played audio: "
            "those words were never heard (`docs/duplex.md`, \"Only what played is heard\").", "",
            *_table(header, rows)]


def _interaction(a: Analysis) -> list[str]:
    rows = []
    for m in a.models:
        i = m.aggregates.figures()["interaction"]
        rows.append([m.campaign.display_name, _f(i["L_R_p50_ms"], 0), _f(i["L_Y_p50_ms"], 0),
                     f"{_f(None if i['R_Y'] is None else 100 * i['R_Y'], 1)} (n={i['R_Y_n']})",
                     f"{_f(None if i['I_A'] is None else 100 * i['I_A'], 1)} (n={i['I_A_n']})"])
    header = ["Model", "L_R p50 ms", "L_Y p50 ms", "R_Y %", "I_A %"]
    return ["## Interaction metrics (ours, τ-voice definitions)", "",
            "L_R: user-turn end to agent response start (per-run medians); L_Y: barge-in to the agent's audio "
            "stopping; R_Y: barge-ins yielded within 2.0 s; I_A: responses that started while the user was still "
            "speaking, of the answered turns. Measured on the played audio.", "", *_table(header, rows)]


def _slices(a: Analysis) -> list[str]:
    if not a.slices:
        return []
    lines = ["## Taxonomy slices", "", "`success% (AFA%)`", ""]
    for axis, rows in a.slices.items():
        body = []
        for row in rows:
            cells = []
            for m in a.models:
                cell = row.get(m.key) or {}
                success, afa = cell.get("success"), cell.get("afa")
                cells.append(MISSING if success is None else f"{100 * success:.0f}% ({_f(None if afa is None else 100 * afa, 0)}%)")
            body.append([f"{row['label']} ({row['n']})", *cells])
        lines += [f"### {AXES[axis]}", "", *_table(["slice", *(m.campaign.display_name for m in a.models)], body)]
    return lines


def comparison_sentence(a: Analysis) -> str | None:
    """``--compare A B`` in one sentence (``results.md`` and the terminal print the same)."""
    c = a.comparison
    if c is None:
        return None
    if c.ci_note:
        intervals = f"no intervals ({c.ci_note})"
        ci, ci_k = "", ""
    else:
        intervals, ci, ci_k = "", f" (95 % CI {_ci(c.pass1_diff_ci_pp)})", f", 95 % CI {_ci(c.pass_at_k_diff_ci_pp)}"
    # pass@k's difference in the unit of its interval (pp), with the count of tasks beside it.
    k_pp = 100.0 * c.pass_at_k_diff / c.n_tasks if c.n_tasks else None
    # With one repetition pass@k is pass@1: its difference is said once.
    by_k = (f"pass@{a.k} difference {_f(k_pp, 1, signed=True)} pp ({c.pass_at_k_diff:+d} of {c.n_tasks} tasks{ci_k}); "
            if a.k > 1 else "")
    return (f"{c.a} vs {c.b}: on the {c.n_tasks} tasks both completed: pass@1 {_f(c.pass1_a_pct, 1)} % vs "
            f"{_f(c.pass1_b_pct, 1)} %, difference {_f(c.pass1_diff_pp, 1, signed=True)} pp{ci}; {by_k}"
            f"per task {c.wins} wins, {c.losses} losses, "
            f"{c.ties} ties; sign test p = {_f(c.sign_test_p, 3)}" + (f"; {intervals}." if intervals else "."))


def _comparison(a: Analysis) -> list[str]:
    sentence = comparison_sentence(a)
    if sentence is None or a.comparison is None:
        return []
    return [f"## Paired comparison: {a.comparison.a} vs {a.comparison.b} (ours)", "", sentence, ""]


def _committed_writes(a: Analysis) -> list[str]:
    affected = [m for m in a.models if m.reference_reading is not None]
    if not affected:
        return []
    k = a.k
    rows = [[m.campaign.display_name, str(m.committed_writes_runs), _f(m.reliability.pass1_mean, 1),
             _f(ref.pass1_mean, 1), str(m.reliability.pass_at_k), str(ref.pass_at_k)]
            for m in affected if (ref := m.reference_reading) is not None]
    header = ["Model", "runs with refused writes", "pass@1 (ours)", "pass@1 (reference reading)", f"pass@{k} (ours)",
              f"pass@{k} (reference reading)"]
    return ["## Writes after COMMITTED: our reading and the reference's", "",
            "We refuse writes to a COMMITTED artifact; the reference accepts them. The reference reading re-grades "
            "those runs with the refused writes applied (docs/metrics.md).", "", *_table(header, rows)]


def _cost(a: Analysis) -> list[str]:
    rows = []
    for m in a.models:
        f = m.aggregates.figures()
        if f["cost_runs"]:
            rows.append([m.campaign.display_name, str(f["cost_runs"]), _f(f["cost_usd_total"], 2), _f(f["cost_per_pass_usd"], 2)])
    if not rows:
        return []
    return ["## Cost (ours; runs with provider usage)", "", *_table(["Model", "runs", "total USD", "USD per pass"], rows)]


def scope_line(a: Analysis) -> str:
    """What the figures cover: tasks and conditions, saying so when the campaigns differ in them."""
    conditions = a.conditions
    if len(conditions) == 1:
        condition = f"condition {conditions[0]}"
    else:
        condition = "conditions " + ", ".join(
            f"{c} ({', '.join(m.key for m in a.models if m.campaign.condition == c)})" for c in conditions)
    tasks = f"{a.n_tasks} task{'' if a.n_tasks == 1 else 's'}"
    if not a.same_tasks:
        tasks += " (the campaigns cover different tasks: " + ", ".join(f"{m.key} {len(m.tasks)}" for m in a.models) + ")"
    return f"{tasks}, {condition}, k = {a.k}"


def results_markdown(a: Analysis) -> str:
    n = max((m.reliability.n for m in a.models), default=0)
    head = ["# APEX-Voice results", "",
            f"Generated {a.generated_at} by apex-voice {__version__}: {scope_line(a)}; "
            f"counts are out of n (tasks with all {a.k} repetitions counted; here up to {n}).", ""]
    notes = [f"> {note}" for note in a.notes]
    sections = [_leaderboard(a), _noise_floor(a), _completeness(a), _intervals(a), _repetitions(a), _gates(a), _latency(a),
                _duplex(a), _hearing(a),
                _slices(a),
                _interaction(a), _compared_metrics(a),
                _committed_writes(a), _comparison(a), _cost(a)]
    return "\n".join(head + (notes + [""] if notes else []) + [line for s in sections for line in s])


def _csv(rows: list[list[Any]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()


def _task_rows(a: Analysis, value: Callable[[ModelSummary, str], str], suffix: str) -> str:
    facts = a.facts or {}
    oracle_tasks = {t for t, f in facts.items() if f.oracle_tool_calls}
    scored = {t for m in a.models for t in m.reliability.outcomes}
    header = ["task_id", "oracle_tool_calls", *(f"{m.key}{suffix}" for m in a.models)]
    rows: list[list[Any]] = [header]
    for task in sorted(oracle_tasks | scored):
        oracle = facts[task].oracle_tool_calls if task in facts else ""
        rows.append([task, oracle, *(value(m, task) for m in a.models)])
    return _csv(rows)


def _passes(m: ModelSummary, task: str) -> str:
    outcome = m.reliability.outcomes.get(task)
    return "" if outcome is None else str(sum(outcome))


def _tool_ratio(m: ModelSummary, task: str) -> str:
    ratio = m.aggregates.tool_ratio_by_task.get(task)
    return "" if ratio is None else f"{ratio:.3f}"


def _slices_csv(a: Analysis) -> str:
    rows: list[list[Any]] = [["axis", "label", "n", "model", "success", "afa"]]
    for axis, axis_rows in (a.slices or {}).items():
        for row in axis_rows:
            for m in a.models:
                cell = row.get(m.key) or {}
                rows.append([axis, row["label"], row["n"], m.key,
                             *("" if cell.get(x) is None else f"{cell[x]:.4f}" for x in ("success", "afa"))])
    return _csv(rows)


def write_tables(a: Analysis, out_dir: Path) -> list[Path]:
    """Write every table file into ``out_dir``; returns the paths written."""
    out_dir = Path(out_dir)
    files = {
        "results.md": results_markdown(a),
        RESULTS_JSON: json.dumps(a.results_json(), indent=2, default=str) + "\n",
        "per_task.csv": _task_rows(a, _passes, f"_passes_of_{a.k}"),
        "tooluse_by_task.csv": _task_rows(a, _tool_ratio, "_tool_ratio"),
    }
    if a.slices is not None:
        files["slices.csv"] = _slices_csv(a)
    written = []
    for name, text in files.items():
        path = out_dir / name
        atomic_write_text(path, text)
        written.append(path)
    return written
