"""``apex-voice models``: every agent ``run --model`` accepts, and the credentials each still needs."""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Annotated

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.table import Column, Table

from harness.agents.registry import (
    ENTRY_POINT_GROUP,
    MODELS,
    PREFIX_FACTORIES,
    ModelSpec,
    UnknownModelError,
    get_model,
)

__all__ = ["ModelRow", "models"]


class ModelRow(BaseModel):
    """One line of ``apex-voice models --json``."""

    key: str
    display_name: str
    provider: str
    provider_model: str
    clock: str
    tool_modes: list[str]
    required_env: list[str]
    missing_credentials: list[str]
    max_concurrent_sessions: int | None

    @classmethod
    def of(cls, spec: ModelSpec) -> ModelRow:
        return cls(
            key=spec.key,
            display_name=spec.display_name,
            provider=spec.provider,
            provider_model=spec.provider_model,
            clock=spec.clock,
            tool_modes=list(spec.tool_modes),
            required_env=list(spec.required_env),
            missing_credentials=list(spec.missing_credentials()),
            max_concurrent_sessions=spec.max_concurrent_sessions,
        )


def _specs() -> list[ModelSpec]:
    specs = list(MODELS.values())
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            specs.append(get_model(point.name))
        except (UnknownModelError, ImportError, AttributeError) as exc:
            typer.echo(f"warning: entry point {point.name!r} cannot be loaded: {exc}", err=True)
    return specs


def models(
    json_output: Annotated[bool, typer.Option("--json", help="One JSON record per model on stdout.")] = False,
) -> None:
    """List the agents ``run --model`` accepts: provider, provider model id, clock, tool modes and
    the environment variables still missing (any one of a model's variables suffices)."""
    rows = [ModelRow.of(spec) for spec in _specs()]
    if json_output:
        for row in rows:
            typer.echo(row.model_dump_json())
        return
    # Keys and model ids are what a user types: they never fold; the credentials column does.
    keys = Column("key", no_wrap=True, min_width=max((len(r.key) for r in rows), default=3))
    model_ids = Column("provider model", no_wrap=True, min_width=max((len(r.provider_model or "") for r in rows), default=5))
    table = Table(keys, "provider", model_ids, "clock", "tools", "missing credentials")
    for row in rows:
        missing = " or ".join(row.missing_credentials)
        table.add_row(row.key, row.provider, row.provider_model or "–", row.clock, ", ".join(row.tool_modes),
                      f"[red]{missing}[/]" if missing else "[green]none[/]")
    console = Console()
    console.print(table)
    console.print(
        f"Also: any OpenAI-Realtime-compatible server as {' or '.join(p + 'HOST:PORT/PATH' for p in PREFIX_FACTORIES)} "
        "(no key), or an adapter class as package.module:Class.",
        highlight=False,
    )
