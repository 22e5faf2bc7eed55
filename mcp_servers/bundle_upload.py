"""A public bundle uploaded as JSON (``POST /control/load``) instead of read from a mounted directory.

A pooled server boots before anyone knows which task it will serve; the harness then sends the
five bundle files as ``{"files": {name: text}}``. They are checked by name, written to a private
temporary directory and read with :meth:`PublicBundle.read`, so an uploaded bundle is validated by
exactly the code (and error messages) that validates a mounted one.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from .public_bundle import BUNDLE_FILES, PublicBundle, PublicBundleError

__all__ = ["TaskAlreadyLoadedError", "bundle_from_files"]


class TaskAlreadyLoadedError(RuntimeError):
    """A second task was offered to a server: each server serves exactly one session."""


def bundle_from_files(files: dict[str, str]) -> PublicBundle:
    """The bundle made of ``files`` (file name -> JSON text); exactly the bundle's files, no paths."""
    missing = sorted(set(BUNDLE_FILES) - set(files))
    unexpected = sorted(set(files) - set(BUNDLE_FILES))
    if missing or unexpected:
        raise PublicBundleError(
            f"uploaded bundle: files must be exactly {', '.join(BUNDLE_FILES)}"
            f" (missing: {', '.join(missing) or 'none'}; unexpected: {', '.join(unexpected) or 'none'})"
        )
    with tempfile.TemporaryDirectory(prefix="apexvoice-bundle-") as tmp:
        for name, text in files.items():
            (Path(tmp) / name).write_text(text, encoding="utf-8")
        try:
            return PublicBundle.read(Path(tmp))
        except PublicBundleError as exc:
            raise PublicBundleError(str(exc).replace(tmp, "uploaded bundle")) from None
