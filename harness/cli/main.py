"""The ``apex-voice`` command line: a thin layer over the library (one module per verb)."""

from __future__ import annotations

import typer

from harness import __version__

from . import (
    images_cmd,
    index_cmd,
    render_audio_cmd,
    replay_cmd,
    run_cmd,
    sandbox_cmd,
    validate_cmd,
    watch_cmd,
)

__all__ = ["app", "main"]

app = typer.Typer(
    name="apex-voice",
    help=(
        "Benchmark harness for realtime, full-duplex voice agents doing professional work.\n\n"
        "Start with `apex-voice run`: the oracle agent on the bundled demo suite, full duplex, no keys "
        "needed. `apex-voice validate` checks task packages; `apex-voice <command> --help` explains each."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

app.command("validate")(validate_cmd.validate)
app.command("index")(index_cmd.index)
app.command("run")(run_cmd.run)
app.command("render-audio")(render_audio_cmd.render_audio)
app.command("watch")(watch_cmd.watch)
app.command("replay")(replay_cmd.replay)
app.add_typer(sandbox_cmd.app, name="sandbox")
app.add_typer(images_cmd.app, name="images")


@app.command("version")
def version() -> None:
    """Print the harness and benchmark versions."""
    typer.echo(f"apex-voice {__version__} (benchmark v1.0)")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
