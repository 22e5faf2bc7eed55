"""PNG plots of an :class:`~harness.results.analysis.Analysis` with matplotlib's Agg backend (no display).

matplotlib is imported here only, when plots are asked for, so ``apex-voice --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path

from harness.atomic_write import atomic_path
from harness.grading.report import GATES

from .analysis import Analysis

__all__ = ["write_plots"]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(plt, fig, path: Path) -> None:
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)


def _percent_axis(ax) -> None:
    """0–100 % with head room above for the legend, so it never hides a bar."""
    ax.set_ylim(0, 125)
    ax.set_yticks(range(0, 101, 20))


def _leaderboard(plt, a: Analysis, path: Path) -> None:
    names = [m.campaign.display_name for m in a.models]
    metrics = [("pass@1 %", "pass1_pct", lambda r: r.pct(r.pass1_mean)),
               (f"pass@{a.k} %", "pass_at_k_pct", lambda r: r.pct(r.pass_at_k)),
               (f"Reliable@{a.k} %", "reliable_at_k_pct", lambda r: r.pct(r.reliable_at_k))]
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(names) + 2), 4))
    width = 0.8 / len(metrics)
    for i, (label, ci_key, value) in enumerate(metrics):
        xs = [j + (i - 1) * width for j in range(len(names))]
        ys = [value(m.reliability) or 0.0 for m in a.models]
        errs = [[y - (m.ci.get(ci_key) or (y, y))[0] for y, m in zip(ys, a.models, strict=True)],
                [(m.ci.get(ci_key) or (y, y))[1] - y for y, m in zip(ys, a.models, strict=True)]]
        ax.bar(xs, ys, width, label=label, yerr=errs, capsize=3)
    ax.set_xticks(range(len(names)), names, rotation=15, ha="right")
    ax.set_ylabel("% of tasks")
    _percent_axis(ax)
    ax.set_title("Leaderboard (95 % bootstrap intervals over tasks)")
    ax.legend(ncols=3, loc="upper center")
    _save(plt, fig, path)


def _gates(plt, a: Analysis, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(a.models) + 2), 4))
    width = 0.8 / len(GATES)
    for i, gate in enumerate(GATES):
        xs = [j + (i - 1.5) * width for j in range(len(a.models))]
        ax.bar(xs, [m.aggregates.gate_rate(gate) or 0.0 for m in a.models], width, label=gate)
    ax.set_xticks(range(len(a.models)), [m.campaign.display_name for m in a.models], rotation=15, ha="right")
    ax.set_ylabel("% of runs passing the gate")
    _percent_axis(ax)
    ax.set_title("PTS gate pass rates (all runs)")
    ax.legend(ncols=4, loc="upper center")
    _save(plt, fig, path)


def _afa_vs_pts(plt, a: Analysis, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for m in a.models:
        afa = m.aggregates.figures()["afa_mean"]
        pass1 = m.reliability.pct(m.reliability.pass1_mean)
        if afa is None or pass1 is None:
            continue
        ax.scatter([100 * afa], [pass1], s=60)
        ax.annotate(m.campaign.display_name, (100 * afa, pass1), textcoords="offset points", xytext=(-5, 6),
                    ha="right" if afa > 0.5 else "left", fontsize=8)
    ax.set_xlabel("mean AFA % (artifact field accuracy)")
    ax.set_ylabel("pass@1 % (PTS)")
    ax.set_xlim(-5, 110)
    ax.set_ylim(-5, 110)
    ax.set_title("Field accuracy vs passing the whole task")
    _save(plt, fig, path)


def _slices(plt, a: Analysis, path: Path) -> bool:
    if not a.slices:
        return False
    labels, grid = [], []
    for axis, rows in a.slices.items():
        for row in rows:
            labels.append(f"{axis}: {row['label']} ({row['n']})")
            grid.append([(row.get(m.key) or {}).get("success") for m in a.models])
    if not labels:
        return False
    values = [[float("nan") if v is None else 100 * v for v in line] for line in grid]
    fig, ax = plt.subplots(figsize=(2 + 1.5 * len(a.models), 1 + 0.3 * len(labels)))
    image = ax.imshow(values, aspect="auto", cmap="viridis", vmin=0, vmax=100)
    ax.set_xticks(range(len(a.models)), [m.campaign.display_name for m in a.models], rotation=20, ha="right")
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    fig.colorbar(image, ax=ax, label="success %")
    ax.set_title("Taxonomy slices (success %)")
    _save(plt, fig, path)
    return True


def _latency(plt, a: Analysis, path: Path) -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    names = [m.campaign.display_name for m in a.models]
    left.boxplot([m.aggregates.rsl_medians or [float("nan")] for m in a.models], tick_labels=names)
    left.set_ylabel("ms")
    left.set_title("Response-start latency (per-run medians)")
    right.boxplot([m.aggregates.stop_latency_ms or m.aggregates.isl_ms or [float("nan")] for m in a.models],
                  tick_labels=names)
    right.set_ylabel("ms")
    right.set_title("Stop latency after a barge-in (audio; isl_ms if none)")
    for ax in (left, right):
        ax.tick_params(axis="x", labelrotation=15)
    _save(plt, fig, path)


def write_plots(a: Analysis, out_dir: Path) -> list[Path]:
    """Write the PNGs into ``out_dir`` (the slices heatmap only when slices exist)."""
    plt = _pyplot()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, draw in (("leaderboard.png", _leaderboard), ("gates.png", _gates), ("afa_vs_pts.png", _afa_vs_pts),
                       ("latency.png", _latency)):
        draw(plt, a, out_dir / name)
        written.append(out_dir / name)
    if _slices(plt, a, out_dir / "slices.png"):
        written.append(out_dir / "slices.png")
    return written
