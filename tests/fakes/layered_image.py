"""A test image made of a few files over an image already on the engine: offline, no pull.

Tagged ``REPOSITORY:<hash>`` by a hash of the base image's id, the Dockerfile and the files, so a
rebuild with nothing changed is the engine's cache; older tags of the repository (builds over an
older base, or of older files) are removed.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path
from typing import Any

__all__ = ["build_layered_image"]


def build_layered_image(client: Any, *, base: str, repository: str, files: dict[str, Path], instructions: str) -> str:
    """``repository:<hash>``: ``files`` (context path → host file) over ``base`` (which must exist),
    then ``instructions`` (Dockerfile lines after ``FROM``, which copy from the context)."""
    dockerfile = f"FROM {base}\n{instructions}".encode()
    digest = hashlib.sha256(dockerfile + client.images.get(base).id.encode())
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        for name, path in sorted(files.items()):
            data = path.read_bytes()
            digest.update(name.encode() + b"\0" + data)
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(dockerfile)
        tar.addfile(info, io.BytesIO(dockerfile))
    tag = f"{repository}:{digest.hexdigest()[:12]}"
    context.seek(0)
    for chunk in client.api.build(fileobj=context, custom_context=True, tag=tag, network_mode="none", pull=False,
                                  rm=True, forcerm=True, decode=True):
        if "error" in chunk:
            raise RuntimeError(f"building {tag} failed: {chunk['error'].strip()}")
    for image in client.images.list(name=repository):
        for old in image.tags:
            if old != tag:
                client.images.remove(old, noprune=False)
    return tag
