"""PNG plots of an :class:`~harness.results.analysis.Analysis` with matplotlib's Agg backend (no display).

matplotlib is imported here only, when plots are asked for, so ``apex-voice --help`` stays fast.
Every label says its n; long model names wrap (never clip: figures are saved tight); a campaign
of too few tasks for a bootstrap interval gets no error bar, and the title says so.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.atomic_write import atomic_path
from harness.grading.report import GATES

from .analysis import Analysis, ModelSummary
from .bootstrap import MIN_CI_TASKS
from .leaderboard import Reliability
from .slices import AXES

__all__ = ["write_plots"]

#: Characters per line of a model's label under a bar (longer names wrap, never clip).
LABEL_WIDTH = 22
#: Characters per line of a title.
TITLE_WIDTH = 70
#: A slice of fewer tasks than this is drawn faded: one task makes a solid 0 % or 100 % cell.
FEW_TASKS = 3


def _pyplot() -> Any:  # matplotlib.pyplot, imported only when plots are asked for
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(plt: Any, fig: Any, path: Path) -> None:
    fig.tight_layout()
    with atomic_path(path) as tmp:
        # Tight: whatever the labels need is kept in the image, however long a model's name.
        fig.savefig(tmp, dpi=120, format="png", bbox_inches="tight")
    plt.close(fig)


def _wrapped(text: str, width: int = LABEL_WIDTH) -> str:
    return "\n".join(textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False)) or text


def _names(a: Analysis, n_of: Callable[[ModelSummary], str] = lambda m: f"n={m.reliability.n}") -> list[str]:
    """Each model's label: its name (wrapped), its n, and INCOMPLETE when planned cells are unscored."""
    return [f"{_wrapped(m.campaign.display_name)}\n{n_of(m)}" + ("" if m.reliability.complete else " INCOMPLETE")
            for m in a.models]


def _titled(a: Analysis, title: str, *, intervals: bool = False) -> str:
    lines = [title]
    withheld = [m.campaign.display_name for m in a.models if m.ci_note is not None]
    if intervals and withheld:
        lines.append(f"no interval for {', '.join(withheld)}: fewer than {MIN_CI_TASKS} tasks")
    incomplete = [m.campaign.display_name for m in a.models if not m.reliability.complete]
    if incomplete:
        lines.append(f"INCOMPLETE (planned cells unscored, see results.md): {', '.join(incomplete)}")
    return "\n".join(_wrapped(line, TITLE_WIDTH) for line in lines)


def _grouped_bars(plt: Any, a: Analysis, path: Path, series: list[tuple[str, list[float], list[tuple[float, float] | None]]],
                  *, ylabel: str, title: str, names: list[str]) -> None:
    """One group of bars per model, one bar per series (``label, values, intervals``), in percent."""
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(names) + 2), 4))
    width = 0.8 / len(series)
    for i, (label, values, intervals) in enumerate(series):
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(names))]
        # Clipped at 0: a figure over every planned cell can sit outside an interval drawn from fewer
        # (an incomplete campaign), and matplotlib refuses a negative error bar outright.
        low = [max(0.0, v - (ci or (v, v))[0]) for v, ci in zip(values, intervals, strict=True)]
        high = [max(0.0, (ci or (v, v))[1] - v) for v, ci in zip(values, intervals, strict=True)]
        has_ci = any(ci is not None for ci in intervals)
        bars = ax.bar(xs, values, width, label=label, yerr=[low, high] if has_ci else None, capsize=3)
        # Every bar says its value, so a 0 % bar is seen as 0, not as missing.
        ax.bar_label(bars, labels=[f"{v:.0f}" for v in values], fontsize=7, padding=2)
    ax.set_xticks(range(len(names)), names, rotation=0 if len(names) <= 4 else 15, ha="center" if len(names) <= 4 else "right")
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 125)  # head room above 100 % for the legend, so it never hides a bar
    ax.set_yticks(range(0, 101, 20))
    ax.set_title(title, fontsize=10)
    ax.legend(ncols=len(series), loc="upper center")
    _save(plt, fig, path)


def _leaderboard(plt: Any, a: Analysis, path: Path) -> None:
    metrics: list[tuple[str, str, Callable[[Reliability], float | None]]] = [
        ("pass@1 %", "pass1_pct", lambda r: r.pct(r.pass1_mean))]
    if a.k > 1:  # with k = 1 all three are the same figure: one bar, not three alike
        metrics += [(f"pass@{a.k} %", "pass_at_k_pct", lambda r: r.pct(r.pass_at_k)),
                    (f"Reliable@{a.k} %", "reliable_at_k_pct", lambda r: r.pct(r.reliable_at_k))]
    series = [(label, [value(m.reliability) or 0.0 for m in a.models], [m.ci.get(key) for m in a.models])
              for label, key, value in metrics]
    _grouped_bars(plt, a, path, series, ylabel="% of tasks", names=_names(a),
                  title=_titled(a, "Leaderboard (95 % bootstrap intervals over tasks)", intervals=True))


def _gates(plt: Any, a: Analysis, path: Path) -> None:
    no_intervals: list[tuple[float, float] | None] = [None] * len(a.models)
    series = [(gate, [m.aggregates.gate_rate(gate) or 0.0 for m in a.models], no_intervals) for gate in GATES]
    _grouped_bars(plt, a, path, series, ylabel="% of runs passing the gate", names=_names(a, _runs),
                  title=_titled(a, "PTS gate pass rates (all runs)"))


def _runs(m: ModelSummary) -> str:
    return f"runs={m.aggregates.runs}"


def _afa_vs_pts(plt: Any, a: Analysis, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for m in a.models:
        afa = m.aggregates.figures()["afa_mean"]
        pass1 = m.reliability.pct(m.reliability.pass1_mean)
        if afa is None or pass1 is None:
            continue
        ax.scatter([100 * afa], [pass1], s=60)
        ax.annotate(f"{_wrapped(m.campaign.display_name)} (n={m.reliability.n})", (100 * afa, pass1),
                    textcoords="offset points", xytext=(-5, 6),
                    ha="right" if afa > 0.5 else "left", fontsize=8)
    ax.set_xlabel("mean AFA % (artifact field accuracy)")
    ax.set_ylabel("pass@1 % (PTS)")
    ax.set_xlim(-5, 110)
    ax.set_ylim(-5, 110)
    ax.set_title(_titled(a, "Field accuracy vs passing the whole task"), fontsize=10)
    _save(plt, fig, path)


def _slices(plt: Any, a: Analysis, path: Path) -> bool:
    if not a.slices:
        return False
    labels, grid, sizes = [], [], []
    for axis, rows in a.slices.items():
        for row in rows:  # the axis by its title (``Knowledge burden``), not its key (``kburden``)
            labels.append(f"{AXES.get(axis, axis)}: {row['label']} (n={row['n']})")
            grid.append([(row.get(m.key) or {}).get("success") for m in a.models])
            sizes.append(int(row["n"]))
    if not labels:
        return False
    values = [[float("nan") if v is None else 100 * v for v in line] for line in grid]
    fig, ax = plt.subplots(figsize=(4 + 2.0 * len(a.models), 1.2 + 0.3 * len(labels)))
    image = ax.imshow(values, aspect="auto", cmap="viridis", vmin=0, vmax=100)
    for y, line in enumerate(values):
        few = sizes[y] < FEW_TASKS
        if few:  # too few tasks to mean much: veiled, so one task's 0 or 100 does not shout
            ax.axhspan(y - 0.5, y + 0.5, color="white", alpha=0.55, lw=0)
        for x, value in enumerate(line):
            if value == value:  # not NaN
                ax.text(x, y, f"{value:.0f}", ha="center", va="center", fontsize=7,
                        color="black" if few or value > 60 else "white")
    # Names wrapped and upright under wide columns: long model names never run into each other.
    ax.set_xticks(range(len(a.models)), _names(a), rotation=0, ha="center", fontsize=8)
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    fig.colorbar(image, ax=ax, label="success %")
    ax.set_title(_wrapped(f"Taxonomy slices (success %, per slice of n tasks; faded: n < {FEW_TASKS})", TITLE_WIDTH),
                 fontsize=10)
    _save(plt, fig, path)
    return True


def _latency(plt: Any, a: Analysis, path: Path) -> bool:
    if not any(m.aggregates.rsl_medians or m.aggregates.stop_latency_ms or m.aggregates.isl_ms for m in a.models):
        return False  # a text (C0) campaign has no audio: no empty chart
    fig, (left, right) = plt.subplots(1, 2, figsize=(max(10, 3.4 * len(a.models)), 4))
    names = [f"{_wrapped(m.campaign.display_name)}\nruns={len(m.aggregates.rsl_medians)}" for m in a.models]
    stops = [f"{_wrapped(m.campaign.display_name)}\nn={len(m.aggregates.stop_latency_ms or m.aggregates.isl_ms)}"
             for m in a.models]
    left.boxplot([m.aggregates.rsl_medians or [float("nan")] for m in a.models], tick_labels=names)
    left.set_ylabel("ms")
    left.set_title("Response-start latency (per-run medians)")
    right.boxplot([m.aggregates.stop_latency_ms or m.aggregates.isl_ms or [float("nan")] for m in a.models],
                  tick_labels=stops)
    right.set_ylabel("ms")
    right.set_title("Stop latency after a barge-in (audio; isl_ms if none)")
    for ax in (left, right):
        ax.tick_params(axis="x", labelsize=8)  # wrapped names, side by side: no rotation needed
        ax.set_ylim(bottom=0)  # from zero: a 20 ms spread is drawn as the 20 ms it is
    _save(plt, fig, path)
    return True


def _compared(plt: Any, a: Analysis, path: Path) -> bool:
    """``--metrics``: every millisecond variant side by side per model (a row's n under its name)."""
    if not a.compared_metrics:
        return False
    keys = [m.key for m in a.models if m.key in a.compared_metrics]
    variants = list(dict.fromkeys(r["variant"] for key in keys for r in a.compared_metrics[key] if r["unit"] == "ms"))
    if not variants:
        return False
    fig, ax = plt.subplots(figsize=(9, max(3.0, 0.45 * len(variants) * max(1, len(keys)))))
    height = 0.8 / max(1, len(keys))
    for offset, key in enumerate(keys):
        rows = {r["variant"]: r for r in a.compared_metrics[key]}
        values = [rows.get(v, {}).get("value") for v in variants]
        ax.barh([i + offset * height for i in range(len(variants))], [float("nan") if v is None else v for v in values],
                height=height, label=key)
    ax.set_yticks([i + height * (len(keys) - 1) / 2 for i in range(len(variants))],
                  [_wrapped(v, 48) for v in variants], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("ms")
    ax.set_title(_titled(a, "Turn-taking under each source's definition (--metrics)"))
    ax.legend(fontsize=8)
    _save(plt, fig, path)
    return True


def write_plots(a: Analysis, out_dir: Path) -> list[Path]:
    """Write the PNGs into ``out_dir`` (the latency chart only with audio, the slices only when they exist)."""
    plt = _pyplot()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, draw in (("leaderboard.png", _leaderboard), ("gates.png", _gates), ("afa_vs_pts.png", _afa_vs_pts)):
        draw(plt, a, out_dir / name)
        written.append(out_dir / name)
    for name, optional in (("latency.png", _latency), ("slices.png", _slices), ("compared_metrics.png", _compared)):
        if optional(plt, a, out_dir / name):  # only where there is data
            written.append(out_dir / name)
    return written
