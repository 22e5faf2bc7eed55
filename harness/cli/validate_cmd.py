"""``apex-voice validate``: load, lint and dry-run every selected task package."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import Progress
from rich.text import Text

from harness.validate import ValidationReport, validate_task

from .console import cli_console
from .data_option import DATA_HELP, ONLY_HELP, open_data
from .interrupts import run_interruptible
from .plain_progress import wants_plain_progress
from .results_table import task_table

if TYPE_CHECKING:
    from sandbox.backend import SandboxBackend

__all__ = ["validate"]


def validate(
    data: Annotated[Path | None, typer.Option("--data", "-d", help=DATA_HELP)] = None,
    only: Annotated[list[str] | None, typer.Option("--only", help=ONLY_HELP)] = None,
    json_output: Annotated[bool, typer.Option("--json", help="One JSON report per task per line.")] = False,
    sandbox: Annotated[
        str,
        typer.Option(
            "--sandbox",
            help="Where the task's tools run: 'none' (in this process, fastest), or through the MCP server "
            "in a 'local' subprocess, a 'docker' container, 'auto' (docker when available), or an installed "
            "backend or package.module:Class (docs/plugins.md). "
            "Results are identical; the sandboxed modes also check the server.",
        ),
    ] = "none",
) -> None:
    """Check task packages: they load, pass the cross-file lint, the oracle reaches PTS 1 and an
    inactive agent does not.

    Exit code 0 when every package is valid, 1 when some is not, 2 for a usage error.
    """
    source, task_dirs = open_data(data, only)
    backend = None if sandbox == "none" else _backend_or_exit(sandbox)
    plain = wants_plain_progress(sys.stdout, sys.stderr)
    reports = run_interruptible(_validate_all(source.checksums, task_dirs, backend,
                                              show_progress=not json_output and not plain, plain=plain))
    if json_output:
        for report in reports:
            typer.echo(report.model_dump_json())
    else:
        _print_table(reports)
    raise typer.Exit(0 if all(r.ok for r in reports) else 1)


def _backend_or_exit(name: str) -> SandboxBackend:  # imported lazily: `validate --sandbox none` needs none
    """The chosen sandbox backend, or exit 1 with one line when it cannot start here (no engine)."""
    from sandbox.backend import get_backend
    from sandbox.errors import SandboxUnavailableError, UnknownBackendError

    try:
        backend = get_backend(name)
        reason = backend.available()
        if reason is None:
            backend.prepare()
    except UnknownBackendError as exc:
        typer.echo(f"error: --sandbox: {exc} (or none)", err=True)
        raise typer.Exit(2) from None
    except SandboxUnavailableError as exc:
        reason = str(exc)
    if reason is not None:
        typer.echo(f"error: --sandbox {name}: {reason}", err=True)
        raise typer.Exit(1)
    return backend


async def _validate_all(
    checksums, task_dirs: list[Path], backend, *, show_progress: bool, plain: bool = False
) -> list[ValidationReport]:
    """Validate each task in turn: a live bar on a terminal; piped or in a CI log (``plain``), a
    line per task on stderr as it finishes (a bar there shows nothing until the end)."""
    reports: list[ValidationReport] = []
    try:
        with Progress(console=cli_console(stderr=True), transient=True, disable=not show_progress) as progress:
            bar = progress.add_task("validating", total=len(task_dirs))
            for index, task_dir in enumerate(task_dirs, 1):
                progress.update(bar, description=f"validating {task_dir.name}")
                started = time.monotonic()
                report = await _validate_one(task_dir, checksums, backend)
                reports.append(report)
                progress.advance(bar)
                if plain:
                    verdict = "valid" if report.ok else "INVALID"
                    print(f"[{index}/{len(task_dirs)}] {task_dir.name}: {verdict}, {time.monotonic() - started:.1f} s",
                          file=sys.stderr, flush=True)
    finally:
        if backend is not None:
            await backend.aclose()
    return reports


async def _validate_one(task_dir: Path, checksums, backend) -> ValidationReport:
    if backend is None:
        return await validate_task(task_dir, checksums=checksums)
    from harness.session.mcp_environment import SandboxedEnvironments

    # One sandbox per session (oracle, no-op), torn down before the next task.
    async with SandboxedEnvironments(backend) as make_env:
        return await validate_task(task_dir, checksums=checksums, make_env=make_env)


def _mark(flag: bool) -> str:
    return "[green]yes[/]" if flag else "[red]no[/]"


def _print_table(reports: list[ValidationReport]) -> None:
    console = cli_console()
    headers = ["task", "loads", "lint", "oracle PTS 1", "no-op fails", "valid"]
    rows = [[r.task_id, _mark(r.loaded), _mark(r.lint_ok), _mark(r.oracle_pass), _mark(r.noop_fail), _mark(r.ok)]
            for r in reports]
    # Task ids break only after an underscore, never mid-word, and the marks keep their columns.
    console.print(task_table(headers, rows, console.width))
    for r in reports:
        if not r.ok:
            console.print(Text.assemble(("FAIL", "red"), f" {r.task_id}: " + "; ".join(r.problems)), soft_wrap=True)
        for warning in r.warnings:
            console.print(Text.assemble(("warn", "yellow"), f" {r.task_id}: {warning}"), soft_wrap=True)
    valid = sum(r.ok for r in reports)
    console.print(f"{valid}/{len(reports)} task packages valid", highlight=False)
