"""``apex-voice results RUNS_DIR... --out DIR``: the paper's tables and plots from campaign directories."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Column, Table
from rich.text import Text

from harness.grading.judge import CachedVerdicts, SemanticJudge
from harness.grading.judge_cache import JudgeCache
from harness.results.analysis import Analysis, ModelSummary, analyse
from harness.results.bootstrap import MIN_CI_TASKS
from harness.results.denominator import has_plan
from harness.results.identity import identity_note, keep_apart, plan_notes, repetitions
from harness.results.noise_floor import noise_line
from harness.results.run_tree import Campaign, find_campaigns, is_campaign, load_campaign
from harness.results.tables import RESULTS_JSON, comparison_sentence, scope_line, write_tables
from harness.results.task_facts import TaskFacts, load_task_facts
from harness.tasks.dataset import BUNDLED_DATA, DATA_ENV_VAR, resolve_data

from .console import cli_console
from .data_option import DATA_HELP, open_data
from .interrupts import run_interruptible
from .out_dir import writable_dir_or_exit

__all__ = ["results"]


def results(
    runs_dirs: Annotated[list[Path] | None, typer.Argument(help="Campaign directories, one per model (as `run --out` writes them).")] = None,
    runs_root: Annotated[Path | None, typer.Option("--runs-root", help="Use every campaign directory below this one.")] = None,
    run: Annotated[list[str] | None, typer.Option("--run", "-r", help="KEY=DIR: add (or rename) a campaign.")] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Where the tables and plots go.")] = Path("results"),
    data: Annotated[Path | None, typer.Option("--data", "-d", help=DATA_HELP + " Needed for slices, correction uptake and tool ratios.")] = None,
    repeats: Annotated[int | None, typer.Option("--repeats", help="k: repetitions per task counted for pass@k (default: the smallest repeat count the campaigns were run with).")] = None,
    compare_keys: Annotated[tuple[str, str] | None, typer.Option("--compare", help="Paired per-task comparison of two model keys.")] = None,
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="Write PNG plots (matplotlib).")] = True,
    metrics: Annotated[str | None, typer.Option("--metrics", help="Also τ-Voice, EVA and Full-Duplex-Bench turn-taking, "
                                                "each in its source's definition, from every session's audio: a comma "
                                                "list of tau-voice, eva, fdb, ours (fdb runs Whisper; "
                                                "docs/metrics-compared.md).")] = None,
    by: Annotated[str | None, typer.Option("--by", help="tool-path: instead of the paper's tables, the same tasks side "
                                           "by side per tool path (bridge, mcp-agent, mcp-provider): PTS and tool-call "
                                           "round trips, in tool_paths.md and tool_paths.json.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print results.json (with --by tool-path: "
                                              "tool_paths.json) to stdout instead of the table; the files are "
                                              "written all the same, the `wrote` lines go to stderr.")] = False,
) -> None:
    """Aggregate campaigns into results.md, results.json, per_task.csv, tooluse_by_task.csv,
    slices.csv and PNG plots, with the published definitions plus confidence intervals.

    Exit code 0 when the files were written for complete campaigns, 1 when they were written but a
    campaign is incomplete (unscored or pending cells: the figures are not final), 2 for a usage error.
    """
    if repeats is not None and repeats < 1:
        _usage(f"--repeats must be at least 1, got {repeats}")
    if by not in (None, "tool-path"):
        _usage(f"--by {by!r}: the only grouping is tool-path")
    families = _metric_families(metrics)
    campaigns, apart = _campaigns(runs_dirs or [], runs_root, run or [])
    writable_dir_or_exit(out, what="the tables and plots")
    if by == "tool-path":
        _tool_paths(campaigns, out, [*apart, *_differences(campaigns, beside=("tool_mode",))], as_json=json_output)
        return
    repeats = repeats or min(repetitions(c) for c in campaigns)
    keys = [c.key for c in campaigns]
    if compare_keys is not None:
        unknown = [key for key in compare_keys if key not in keys]
        if unknown:
            _usage(f"--compare: no campaign named {', '.join(unknown)} (campaigns: {', '.join(keys)})")
    facts, note = _facts(data, campaigns)
    judge = SemanticJudge.from_env() or CachedVerdicts(JudgeCache())
    analysis = run_interruptible(analyse(campaigns, repeats, facts=facts, judge=judge, compare_keys=compare_keys))
    analysis.notes[:0] = [*apart, *_differences(campaigns, k=repeats, beside=("condition",))]
    if families:
        analysis.compared_metrics = _compared_metrics(campaigns, families)
    if note:
        analysis.notes.append(note)

    written = write_tables(analysis, out)
    if plots:
        written += _plots(analysis, out)
    for path in written:
        typer.echo(f"wrote {path}", err=json_output)
    for campaign in campaigns:
        for problem in campaign.problems:
            typer.echo(f"warning: {problem}", err=True)
    if judge.errors:
        typer.echo(f"warning: {judge.errors} judge verdict(s) unavailable; those fields count as failed in the "
                   "published re-grade", err=True)
    if json_output:
        typer.echo((out / RESULTS_JSON).read_text(encoding="utf-8"), nl=False)
    else:
        _print_summary(analysis)
    if not analysis.complete:  # the files are written, but the figures are not final: cells are missing
        raise typer.Exit(1)


def _metric_families(metrics: str | None) -> list[str]:
    from harness.metrics.compared.campaign import FAMILIES

    names = [name.strip() for name in (metrics or "").split(",") if name.strip()]
    unknown = [name for name in names if name not in FAMILIES]
    if unknown:
        _usage(f"--metrics: unknown {', '.join(unknown)} (choose from {', '.join(FAMILIES)})")
    return names


def _compared_metrics(campaigns: list[Campaign], families: list[str]) -> dict[str, list[dict]]:
    """Every campaign's sessions through `apex-voice metrics`, the chosen families' rows pooled."""
    from harness.metrics.compared.campaign import campaign_metrics, select_rows

    found: dict[str, list[dict]] = {}
    for campaign in campaigns:
        pooled = campaign_metrics(campaign.path, asr="fdb" in families)
        for cell, reason in pooled.skipped.items():
            typer.echo(f"warning: --metrics: {campaign.key}: {cell}: {reason}", err=True)
        found[campaign.key] = [row.model_dump(mode="json") for row in select_rows(pooled.rows, families)]
    return found


def _tool_paths(campaigns: list[Campaign], out: Path, notes: list[str], *, as_json: bool = False) -> None:
    from harness.atomic_write import atomic_write_text
    from harness.results.tool_paths import compare_tool_paths

    report = compare_tool_paths(campaigns).model_copy(update={"notes": notes})
    table = report.markdown()
    as_text = report.model_dump_json(indent=2) + "\n"
    for name, text in (("tool_paths.md", table), ("tool_paths.json", as_text)):
        atomic_write_text(out / name, text)
        typer.echo(f"wrote {out / name}", err=as_json)
    typer.echo(as_text if as_json else table, nl=not as_json)


def _differences(campaigns: list[Campaign], *, k: int | None = None, beside: tuple[str, ...] = ()) -> list[str]:
    """The header's lines on what the compared campaigns measured differently: identity fields but
    ``beside``, repetitions beside ``k``, and — without ``k`` (tool paths, whose table has no scope
    line) — different task sets."""
    note = identity_note(campaigns, beside=beside)
    return [*([note] if note else []), *plan_notes(campaigns, k)]


def _plots(analysis: Analysis, out: Path) -> list[Path]:
    try:
        from harness.results.plots import write_plots

        return write_plots(analysis, out)
    except ImportError as exc:
        typer.echo(f"warning: no plots ({exc.name} is not installed: pip install 'apex-voice[results]')", err=True)
        return []


def _usage(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _campaigns(runs_dirs: list[Path], runs_root: Path | None, named: list[str]) -> tuple[list[Campaign], list[str]]:
    """The campaigns to report, those sharing a model key kept apart, and the notes saying so."""
    paths = list(runs_dirs)
    if runs_root is not None:
        if not runs_root.is_dir():
            _usage(f"--runs-root {runs_root} is not a directory")
        paths += find_campaigns(runs_root)
    campaigns: list[Campaign] = []
    expanded: list[str] = []
    for path in paths:
        if not path.is_dir():
            _usage(f"{path} is not a directory")
        inner = [] if is_campaign(path) else find_campaigns(path)
        if inner:  # a folder of campaigns (the compose stack's runs/compose beside runs/<model>): each one
            expanded.append(f"{path} holds campaigns, each reported: {', '.join(str(p) for p in inner)}")
        campaigns += [load_campaign(p) for p in inner or [path]]
    for item in named:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            _usage(f"--run {item!r}: expected KEY=DIR")
        if not Path(value).is_dir():
            _usage(f"--run {item!r}: {value} is not a directory")
        campaigns.append(load_campaign(Path(value), key=key))
    if not campaigns:
        _usage("no campaigns: give campaign directories, --runs-root DIR or --run KEY=DIR")
    empty = [c for c in campaigns if not c.runs and not has_plan(c)]
    if empty:
        _usage(f"no result.json under {', '.join(str(c.path) for c in empty)} "
               "(expected <task>/rep<k>/result.json)")
    kept, notes = keep_apart(campaigns)
    return kept, [*expanded, *notes]


def _facts(data: Path | None, campaigns: list[Campaign]) -> tuple[dict[str, TaskFacts] | None, str | None]:
    """Task facts from ``--data`` / ``$APEX_VOICE_DATA``, else from the bundled demo suite if it covers the runs."""
    if data is not None or os.environ.get(DATA_ENV_VAR):
        source, task_dirs = open_data(data, None)
    else:
        source = resolve_data(BUNDLED_DATA)
        task_dirs = source.task_dirs
        if not {t for c in campaigns for t in c.runs} <= set(source.task_ids):
            return None, None
    facts, problems = load_task_facts(task_dirs, source.checksums)
    missing = sorted({t for c in campaigns for t in c.runs} - set(facts))
    note = None
    if missing:
        note = (f"{len(missing)} task(s) of the runs are not in {source.root} (e.g. {missing[0]}): they are "
                "left out of the slices and correction uptake.")
    for problem in problems:
        typer.echo(f"warning: {problem}", err=True)
    return facts, note


#: Unscored cells listed per campaign under the table; results.json lists them all.
LISTED_UNSCORED = 10


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _interval(summary: ModelSummary) -> str:
    ci = summary.ci.get("pass1_pct")
    if summary.ci_note is not None:
        return f"n/a (n={summary.reliability.n}: fewer than {MIN_CI_TASKS} tasks cannot carry a bootstrap interval)"
    return "–" if ci is None else f"[{ci[0]:.1f}, {ci[1]:.1f}]"


def _print_summary(analysis: Analysis) -> None:
    """Rates (not counts) out of every planned cell, with each campaign's completeness beside them.

    Every name is printed as text, never as markup: a key kept apart as ``oracle[condition=C3]``
    shows its brackets."""
    k = analysis.k
    scored_only = not analysis.complete
    headers = ["model", "n", "scored / planned", "pass@1 %"]  # spaces: a narrow column wraps, never folds a word
    if k > 1:
        headers += [f"pass@{k} %", f"Reliable@{k} %"]
    if scored_only:
        headers.append("pass@1 % scored only")
    # The model's key is what --compare takes: whole on one line; the headers fold instead.
    key_width = max((len(m.key) for m in analysis.models), default=5)
    table = Table(Column("model", no_wrap=True, min_width=key_width),
                  *(Column(h, overflow="fold") for h in headers[1:]),
                  Column("status", no_wrap=True, min_width=len("INCOMPLETE")))
    for m in analysis.models:
        r = m.reliability
        row = [m.key, str(r.n), f"{r.n_scored}/{r.n_planned}", _pct(r.pct(r.pass1_mean))]
        if k > 1:
            row += [_pct(r.pct(r.pass_at_k)), _pct(r.pct(r.reliable_at_k))]
        if scored_only:
            row.append(_pct(r.scored_only_pass1_pct))
        status = Text("complete") if r.complete else Text("INCOMPLETE", style="red")
        table.add_row(*map(Text, row), status)
    console = cli_console()
    console.print(Text(f"results: {scope_line(analysis)}"), soft_wrap=True)
    console.print(table)
    for m in analysis.models:
        cells = m.reliability.unscored
        for cell in cells[:LISTED_UNSCORED]:
            what = "counted as a failure" if cell.counted_as == "failure" else "left out"
            console.print(Text(f"unscored: {m.key}: {cell} — {what}"), soft_wrap=True)
        if len(cells) > LISTED_UNSCORED:
            console.print(Text(f"unscored: {m.key}: … and {len(cells) - LISTED_UNSCORED} more (results.json)"))
    # The intervals under the table (it fits 80 columns): one line, the withheld ones with their reason.
    console.print(Text("pass@1 % 95% CI (bootstrap over tasks): "
                       + "; ".join(f"{m.key} {_interval(m)}" for m in analysis.models)), soft_wrap=True)
    for m in analysis.models:
        console.print(Text(f"noise floor: {noise_line(m.key, m.noise)}"), soft_wrap=True)
    sentence = comparison_sentence(analysis)
    if sentence is not None:
        console.print(Text(f"compare: {sentence}"), soft_wrap=True)
    if analysis.pair_noise is not None:
        console.print(Text(f"noise floor: {analysis.pair_noise.sentence}"), soft_wrap=True)
    for note in analysis.notes:
        console.print(Text(f"note: {note}"), soft_wrap=True)
