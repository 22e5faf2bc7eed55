"""The ``apex-voice`` command line: a thin layer over the library (one module per verb).

Verbs are registered by name with the module that implements them and a one-line summary; a verb's
module (and its numpy/scipy/docker imports) is imported only when that verb runs, so ``--help`` and
``version`` start in a fraction of a second. To add a verb, add one line to ``COMMANDS``.
"""

from __future__ import annotations

import importlib
from typing import Any, NamedTuple

import typer
import typer.core

from harness import __version__

__all__ = ["COMMANDS", "app", "main"]


class LazyCommand(NamedTuple):
    #: ``module:attribute``: a command function, or a ``typer.Typer`` of subcommands.
    target: str
    summary: str


COMMANDS: dict[str, LazyCommand] = {
    "validate": LazyCommand("harness.cli.validate_cmd:validate", "Check task packages: load, lint, oracle and no-op dry runs."),
    "index": LazyCommand("harness.cli.index_cmd:index", "Write a dataset's task index."),
    "run": LazyCommand("harness.cli.run_cmd:run", "Run a campaign (resumable), then print its results table."),
    "models": LazyCommand("harness.cli.models_cmd:models", "List the agents --model can name, and missing credentials."),
    "render-audio": LazyCommand("harness.cli.render_audio_cmd:render_audio", "Render a task's user speech clips."),
    "watch": LazyCommand("harness.cli.watch_cmd:watch", "Watch a campaign another process is running, in the terminal UI."),
    "replay": LazyCommand("harness.cli.replay_cmd:replay", "Replay a finished session in the terminal UI."),
    "regrade": LazyCommand("harness.cli.regrade_cmd:regrade", "Re-grade saved sessions with the current graders."),
    "results": LazyCommand("harness.cli.results_cmd:results", "Aggregate campaigns into the published tables and plots."),
    "judge-cache": LazyCommand("harness.cli.judge_cache_cmd:app", "Export or import the judge's verdicts as published JSON."),
    "download": LazyCommand("harness.cli.download_cmd:download", "Download and verify a dataset snapshot."),
    "sandbox": LazyCommand("harness.cli.sandbox_cmd:app", "Start, probe and clean up task sandboxes."),
    "images": LazyCommand("harness.cli.images_cmd:app", "Build the Docker images the sandbox uses (offline-capable)."),
}


def _load(name: str, target: str) -> Any:
    module_name, _, attribute = target.partition(":")
    implementation: Any = getattr(importlib.import_module(module_name), attribute)
    holder = typer.Typer(add_completion=False)
    if isinstance(implementation, typer.Typer):
        holder.add_typer(implementation, name=name)  # stays a group even with one subcommand
    else:
        holder.command(name)(implementation)
        holder.callback()(lambda: None)  # a group of one, so the verb is looked up by name
    return typer.main.get_command(holder).commands[name]  # type: ignore[attr-defined]


class _LazyVerb(typer.core.TyperCommand):
    """Stands in for a verb in the help listing; running it loads and runs the real command."""

    def __init__(self, name: str, spec: LazyCommand) -> None:
        super().__init__(name, help=spec.summary, short_help=spec.summary)
        self.target = spec.target

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        return _load(self.name or "", self.target).make_context(info_name, args, parent=parent, **extra)


class _LazyGroup(typer.core.TyperGroup):
    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(name for name in super().list_commands(ctx) if name not in COMMANDS)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        spec = COMMANDS.get(cmd_name)
        return _LazyVerb(cmd_name, spec) if spec is not None else super().get_command(ctx, cmd_name)


app = typer.Typer(
    name="apex-voice",
    cls=_LazyGroup,
    help=(
        "Benchmark harness for realtime, full-duplex voice agents doing professional work.\n\n"
        "Start with `apex-voice run`: the oracle agent on the bundled demo suite, full duplex, no keys "
        "needed. `apex-voice validate` checks task packages; `apex-voice <command> --help` explains each."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """The verbs below; a callback keeps this a group even before the lazy verbs load."""


@app.command("version")
def version() -> None:
    """Print the harness and benchmark versions."""
    typer.echo(f"apex-voice {__version__} (benchmark v1.0)")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
