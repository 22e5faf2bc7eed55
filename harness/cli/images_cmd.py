"""``apex-voice images build``: the sandbox images, built offline when no registry is reachable."""

from __future__ import annotations

import json
from typing import Annotated

import typer

__all__ = ["IMAGE_NAMES", "app"]

#: The images `build` makes, in order (``sandbox.image_build.IMAGE_SPECS``, which imports the Docker SDK:
#: named here so `--help` stays fast; a test keeps the two equal).
IMAGE_NAMES = ("mcp-server", "native-oracle", "adapter-host", "harness")

app = typer.Typer(
    help="Build the Docker images the sandbox uses (offline-capable).", no_args_is_help=True, add_completion=False
)


@app.command("build")
def build(
    only: Annotated[
        list[str] | None, typer.Option("--only", help=f"Build just this image ({', '.join(IMAGE_NAMES)}); repeatable.")
    ] = None,
    base_image: Annotated[
        str | None,
        typer.Option(
            "--base-image",
            envvar="BASE_IMAGE",
            help="Base image to build FROM (e.g. python:3.12-slim where a registry is reachable). "
            "Default: apex-voice's own Debian base, built with mmdebstrap if absent.",
        ),
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the build summary as JSON.")] = False,
) -> None:
    """Ensure the base image, then build every apex-voice image (or those named by --only), and
    remove the superseded builds and the intermediate stages a build leaves untagged.

    Unchanged images are reused (a content hash is stored as a label), so a second run is quick.
    Progress goes to stderr. Exit code 1 when a build fails, 2 for an unknown image name.
    """
    import docker.errors

    from sandbox.image_build import ImageBuildError, build_images, connect_docker

    try:
        client = connect_docker()
        client.ping()
    except docker.errors.DockerException as exc:
        typer.echo(f"error: no Docker engine answers: {str(exc).splitlines()[0][:200]}", err=True)
        raise typer.Exit(1) from None
    try:
        summary = build_images(only or None, base_image=base_image, client=client)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except ImageBuildError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    if json_output:
        typer.echo(
            json.dumps(
                {
                    "base": {"reference": summary.base.reference, "built": summary.base.built},
                    "images": [
                        {"name": r.name, "reference": r.reference, "cached": r.cached, "seconds": round(r.seconds, 2)}
                        for r in summary.images
                    ],
                }
            )
        )
