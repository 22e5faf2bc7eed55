"""``apex-voice metrics RECORDING``: τ-Voice, EVA and Full-Duplex-Bench turn-taking beside ours."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from harness.metrics.compared.report import MetricsReport, compare, open_recording
from harness.metrics.compared.trace import RecordingError

from .console import cli_console

__all__ = ["metrics"]


def _format(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    return f"{value:.0f}" if unit == "ms" else f"{value:.3f}"


def _print(report: MetricsReport) -> None:
    console = cli_console()
    table = Table(title=f"{report.recording} ({report.duration_ms / 1000:.1f} s, {report.source_rate} Hz)", title_justify="left")
    for name, justify in (("measure", "left"), ("variant", "left"), ("value", "right"), ("unit", "left"), ("n", "right"), ("note", "left")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for row in report.rows:
        table.add_row(row.measure, row.variant, _format(row.value, row.unit), row.unit,
                      "" if row.n is None else str(row.n), row.note)
    console.print(table)
    speech = report.speech
    console.print(f"speech: {speech['user_segments']} user and {speech['agent_segments']} agent segments"
                  + (f"; session events: {speech['backchannels']} back-channels, {speech['tool_calls']} tool calls"
                     if report.session else "; no session events (a foreign recording)"))


def metrics(
    recording: Annotated[Path | None, typer.Argument(
        help="A stereo file (left user, right agent), or one of our session or cell directories "
             "(its audio/stereo.wav and events.jsonl).")] = None,
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
    try:
        report = compare(open_recording(recording, user=user, agent=agent), asr=asr)
    except (RecordingError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if json_output:
        typer.echo(report.model_dump_json(indent=2))
    else:
        _print(report)
