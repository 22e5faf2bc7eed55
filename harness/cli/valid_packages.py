"""``run``'s gate before anything runs: only packages that load and pass lint measure a model.

A package that fails validation (a gold predicate kind misspelled, a commit tool without its
``commit_action_type``) would otherwise run and be reported as the model's FAILURE (issue 33,
break 8). ``run`` refuses it with the problem, or with ``--skip-invalid`` lists it as not run.
"""

from __future__ import annotations

from pathlib import Path

import typer

from harness.tasks.bundle import TaskBundle
from harness.tasks.checksums import ChecksumManifest
from harness.tasks.lint import CheckedPackage, check_package

__all__ = ["not_run_lines", "valid_packages_or_exit"]


def valid_packages_or_exit(
    task_dirs: list[Path], checksums: ChecksumManifest | None, *, skip_invalid: bool
) -> tuple[list[TaskBundle], list[CheckedPackage]]:
    """The packages that load and pass lint, and those that do not (never run: a broken task is no
    model's failure). Without ``--skip-invalid`` one invalid package refuses the whole run (exit 2)."""
    checked = [check_package(task_dir, checksums=checksums) for task_dir in task_dirs]
    invalid = [c for c in checked if not c.ok]
    for package in invalid:
        typer.echo(f"{'not run' if skip_invalid else 'error'}: {package.task_dir.name}: {package.problems[0]}"
                   + (f" (and {len(package.problems) - 1} more)" if len(package.problems) > 1 else ""), err=True)
    if invalid and not skip_invalid:
        typer.echo(f"error: {len(invalid)} task package(s) fail validation and cannot measure a model: fix them "
                   "(`apex-voice validate` lists every problem) or pass --skip-invalid to run the others", err=True)
        raise typer.Exit(2)
    bundles = [c.bundle for c in checked if c.bundle is not None and c.ok]
    if not bundles:
        typer.echo("error: no valid task package left to run", err=True)
        raise typer.Exit(2)
    return bundles, invalid


def not_run_lines(invalid: list[CheckedPackage]) -> list[str]:
    """The packages ``--skip-invalid`` left out: listed as not run, never counted as the model's failures."""
    return [f"not run (invalid package, --skip-invalid): {p.task_dir.name}: {p.problems[0]}" for p in invalid]
