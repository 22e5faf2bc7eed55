"""``apex-voice download``: the dataset (or the published runs) from the Hugging Face Hub, verified."""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from harness.results.hub import (
    DEFAULT_DATASET_REPO,
    DEFAULT_RUNS_REPO,
    HF_REPO_ENV,
    download_snapshot,
    verify_checksums,
)

__all__ = ["download"]

_SHOWN = 10


class What(str, Enum):
    dataset = "dataset"
    runs = "runs"


def download(
    what: Annotated[What, typer.Argument(help="The task dataset, or the published runs.")] = What.dataset,
    local_dir: Annotated[Path | None, typer.Option("--local-dir", help="Download here (default: the Hub cache).")] = None,
    revision: Annotated[str, typer.Option("--revision", help="Branch, tag or commit to pin.")] = "main",
    repo: Annotated[str | None, typer.Option("--repo", help=f"Repository id (dataset default: ${HF_REPO_ENV}, else {DEFAULT_DATASET_REPO}; runs: {DEFAULT_RUNS_REPO}).")] = None,
) -> None:
    """Download a snapshot with huggingface_hub (pinned revision; files already present are not
    fetched again, so an interrupted download resumes), then verify every file in its SHA256SUMS.

    Exit code 0 when the snapshot is complete and every file matches, 1 when a file differs or is
    missing (each is named) or the download failed, 2 for a usage error.
    """
    default = (os.environ.get(HF_REPO_ENV) or DEFAULT_DATASET_REPO) if what is What.dataset else DEFAULT_RUNS_REPO
    repo_id = repo or default
    from huggingface_hub.errors import (
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        path = download_snapshot(repo_id, revision=revision, local_dir=local_dir)
    except (RepositoryNotFoundError, RevisionNotFoundError) as exc:
        typer.echo(f"error: {repo_id}@{revision}: {type(exc).__name__}: {str(exc).splitlines()[0]}", err=True)
        raise typer.Exit(2) from None
    except LocalEntryNotFoundError:  # the hub did not answer and nothing of it is cached here
        typer.echo(f"error: downloading {repo_id}@{revision}: the Hugging Face Hub cannot be reached (no network?) "
                   "and no copy is cached; run again when online (a partial download resumes)", err=True)
        raise typer.Exit(1) from None
    except (HfHubHTTPError, OSError) as exc:
        typer.echo(f"error: downloading {repo_id}@{revision} failed (run again to resume): "
                   f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", err=True)
        raise typer.Exit(1) from None
    report = verify_checksums(path)
    typer.echo(f"{repo_id}@{revision} -> {path}")
    if report.no_manifest:
        typer.echo(f"error: {path} has no SHA256SUMS: its files cannot be verified", err=True)
        raise typer.Exit(1)
    for label, names in (("differs", report.mismatched), ("missing", report.missing),
                         ("outside the snapshot (not checked)", report.unsafe)):
        for name in names[:_SHOWN]:
            typer.echo(f"error: {name} {label} from SHA256SUMS", err=True)
        if len(names) > _SHOWN:
            typer.echo(f"error: … and {len(names) - _SHOWN} more {label}", err=True)
    if not report.ok:
        typer.echo(f"{report.checked} files checked: the snapshot is not the published one; delete the named "
                   "files and run again to fetch them afresh", err=True)
        raise typer.Exit(1)
    typer.echo(f"{report.checked} files match SHA256SUMS")
    if what is What.dataset:
        typer.echo(f"export APEX_VOICE_DATA={path}")
