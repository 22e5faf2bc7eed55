"""The base image every apex-voice image builds FROM, found locally or made without a registry.

Order: the requested image if it is local; a pull if it names someone else's image (works on
machines with a registry); otherwise our own Debian base, imported from an mmdebstrap tarball.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors
from docker.models.images import Image

from sandbox.debian_rootfs import build_rootfs_tar

__all__ = [
    "DEFAULT_BASE_IMAGE",
    "BaseImage",
    "PythonTarget",
    "ensure_base_image",
    "probe_python",
]

#: Bump the suffix whenever the rootfs recipe (``debian_rootfs.PACKAGES``...) changes.
DEFAULT_BASE_IMAGE = "apex-voice/base:bookworm-py311-r2"
IMPORT_CHANGES = (
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "ENV LANG=C.UTF-8",
    'CMD ["python3"]',
)
PYTHON_PROBE = "import platform, sys; print(sys.version_info[0], sys.version_info[1], platform.machine())"


@dataclass(frozen=True)
class BaseImage:
    """The resolved base: its reference for FROM, its id for cache keys, and what it cost."""

    reference: str
    image_id: str
    built: bool
    seconds: float


@dataclass(frozen=True)
class PythonTarget:
    """What a wheel must match: CPython minor version and machine architecture."""

    major: int
    minor: int
    machine: str

    def __str__(self) -> str:
        return f"Python {self.major}.{self.minor} on {self.machine}"


def _local_image(client: docker.DockerClient, reference: str) -> Image | None:
    try:
        return client.images.get(reference)
    except docker.errors.ImageNotFound:
        return None


def _pulled_image(client: docker.DockerClient, reference: str, report: Callable[[str], None]) -> Image | None:
    report(f"base: {reference} is not local, trying to pull it")
    try:
        return client.images.pull(reference)
    except docker.errors.APIError as error:
        report(f"base: cannot pull {reference} ({error.explanation or error}); using {DEFAULT_BASE_IMAGE}")
        return None


def _import_debian_base(client: docker.DockerClient, work_dir: Path, report: Callable[[str], None]) -> Image:
    work_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="base-rootfs-", dir=work_dir) as scratch:
        tarball = build_rootfs_tar(Path(scratch) / "rootfs.tar", report)
        repository, tag = DEFAULT_BASE_IMAGE.rsplit(":", 1)
        report(f"base: docker import {tarball} -> {DEFAULT_BASE_IMAGE}")
        client.api.import_image(
            src=str(tarball), repository=repository, tag=tag, changes=list(IMPORT_CHANGES)
        )
    return client.images.get(DEFAULT_BASE_IMAGE)


def ensure_base_image(
    client: docker.DockerClient, requested: str, work_dir: Path, report: Callable[[str], None]
) -> BaseImage:
    """Return a local base image, building apex-voice's own Debian base only when nothing else exists."""
    started = time.monotonic()
    found = _local_image(client, requested)
    if found is None and requested != DEFAULT_BASE_IMAGE:
        found = _pulled_image(client, requested, report)
    if found is not None:
        report(f"base: using {requested} ({found.short_id})")
        return BaseImage(requested, found.id, built=False, seconds=time.monotonic() - started)
    own = _local_image(client, DEFAULT_BASE_IMAGE)
    built = own is None
    if own is None:
        report(f"base: building {DEFAULT_BASE_IMAGE} from Debian packages (about 40 s)")
        own = _import_debian_base(client, work_dir, report)
    report(f"base: using {DEFAULT_BASE_IMAGE} ({own.short_id})")
    return BaseImage(DEFAULT_BASE_IMAGE, own.id, built=built, seconds=time.monotonic() - started)


def probe_python(client: docker.DockerClient, reference: str) -> PythonTarget:
    """Ask the image's own `python3` what it is (wheels built on the host must match it)."""
    try:
        output = client.containers.run(
            reference, ["python3", "-c", PYTHON_PROBE], remove=True, network_disabled=True
        )
    except docker.errors.ContainerError as error:
        raise RuntimeError(f"base image {reference} has no working python3: {error}") from error
    major, minor, machine = output.decode().split()
    return PythonTarget(int(major), int(minor), machine)
