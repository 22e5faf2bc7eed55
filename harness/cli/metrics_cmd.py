"""``apex-voice metrics RECORDING``: τ-Voice, EVA and Full-Duplex-Bench turn-taking beside ours."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from harness.metrics.compared.campaign import CampaignMetrics, campaign_metrics
from harness.metrics.compared.report import MetricRow, MetricsReport, compare, open_recording
from harness.metrics.compared.trace import RecordingError
from harness.results.run_tree import is_campaign

from .console import cli_console

__all__ = ["metrics"]


def _format(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    return f"{value:.0f}" if unit == "ms" else f"{value:.3f}"


def _table(title: str, rows: list[MetricRow]) -> Table:
    table = Table(title=title, title_justify="left")
    for name, justify in (("measure", "left"), ("variant", "left"), ("value", "right"), ("unit", "left"), ("n", "right"), ("note", "left")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    previous = None
    for row in rows:
        table.add_row("" if row.measure == previous else row.measure, row.variant, _format(row.value, row.unit), row.unit,
                      "" if row.n is None else str(row.n), row.note)
        previous = row.measure
    return table


def _print(report: MetricsReport) -> None:
    console = cli_console()
    console.print(_table(f"{report.recording} ({report.duration_ms / 1000:.1f} s, {report.source_rate} Hz)", report.rows))
    speech = report.speech
    console.print(f"speech: {speech['user_segments']} user and {speech['agent_segments']} agent segments"
                  + (f"; session events: {speech['backchannels']} back-channels, {speech['tool_calls']} tool calls"
                     if report.session else "; no session events (a foreign recording)"))
    for reason in report.unavailable.values():
        console.print(f"left out: {reason}")


def _print_campaign(report: CampaignMetrics) -> None:
    console = cli_console()
    console.print(_table(f"{report.campaign}: {report.sessions} sessions (pooled: weighted by n; totals summed)",
                         report.rows))
    for cell, reason in report.skipped.items():
        console.print(f"skipped: {cell}: {reason}")


def metrics(
    recording: Annotated[Path | None, typer.Argument(
        help="A stereo file (left user, right agent), one of our session or cell directories "
             "(its audio/stereo.wav and events.jsonl), or a campaign directory (every cell, per task and pooled).")] = None,
    user: Annotated[Path | None, typer.Option("--user", help="The user's channel as a mono file (with --agent).")] = None,
    agent: Annotated[Path | None, typer.Option("--agent", help="The agent's channel as a mono file (with --user).")] = None,
    asr: Annotated[bool, typer.Option("--asr/--no-asr", help="Run Whisper tiny.en for FDB v1's word timings (a few seconds a minute of audio).")] = True,
    json_output: Annotated[bool, typer.Option("--json", help="The whole report as JSON on stdout.")] = False,
) -> None:
    """Turn-taking metrics of τ-Voice, EVA and Full-Duplex-Bench v1/v1.5, each in its source's
    definition, beside ours — all from one two-channel recording. Any common sample rate.

    On one of our sessions, ours is read from its events and equals result.json; the others are
    computed from the audio. docs/metrics-compared.md gives every definition. Exit 0 when the
    table was computed, 2 when the recording cannot be read.
    """
    if recording is not None and (user is not None or agent is not None):
        typer.echo("error: give a RECORDING or --user and --agent, not both", err=True)
        raise typer.Exit(2)
    if recording is None and (user is None or agent is None):
        typer.echo("error: give a RECORDING (stereo file or session directory) or both --user and --agent", err=True)
        raise typer.Exit(2)
    if recording is not None and recording.is_dir() and is_campaign(recording):
        pooled = campaign_metrics(recording, asr=asr)
        if not pooled.sessions:
            typer.echo(f"error: {recording}: no session with events.jsonl in any cell", err=True)
            raise typer.Exit(2)
        if json_output:
            typer.echo(pooled.model_dump_json(indent=2))
        else:
            _print_campaign(pooled)
        return
    try:
        report = compare(open_recording(recording, user=user, agent=agent), asr=asr)
    except (RecordingError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if json_output:
        typer.echo(report.model_dump_json(indent=2))
    else:
        _print(report)
