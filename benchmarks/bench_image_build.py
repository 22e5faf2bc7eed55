"""Image build cost: cold base build (when it had to happen), first build, cached rebuild, sizes.

Run: .venv/bin/python benchmarks/bench_image_build.py
Prints figures only; nothing here asserts on time.
"""

from __future__ import annotations

import time

from sandbox.image_build import build_images, connect_docker

__all__ = ["main"]

MEGABYTE = 1_000_000


def _quiet(_line: str) -> None:
    """Build progress is not part of the figures."""


def main() -> None:
    client = connect_docker()
    started = time.monotonic()
    first = build_images(client=client, report=_quiet)
    first_seconds = time.monotonic() - started
    started = time.monotonic()
    second = build_images(client=client, report=_quiet)
    cached_seconds = time.monotonic() - started

    if first.base.built:
        print(f"cold base build ({first.base.reference}): {first.base.seconds:.1f} s")
    else:
        print(f"base {first.base.reference} already present (no cold build measured)")
    for result in first.images:
        state = "cached" if result.cached else "built"
        print(f"first call, {result.name}: {state} in {result.seconds:.1f} s")
    print(f"first call total: {first_seconds:.1f} s")
    print(f"cached rebuild total: {cached_seconds:.2f} s (all cached: {second.all_cached})")
    print(f"cached/first ratio: {cached_seconds / first_seconds:.3f}")
    references = [first.base.reference, *(result.reference for result in second.images)]
    for reference in references:
        size = client.images.get(reference).attrs["Size"]
        print(f"size {reference}: {size / MEGABYTE:.1f} MB")


if __name__ == "__main__":
    main()
