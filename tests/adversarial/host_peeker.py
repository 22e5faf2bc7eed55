"""An adapter whose import-time code looks at the host and writes into its own package directory.

Its host imports it twice: once before the campaign, when the CLI probes it (``--check``), then in
every session. Where it can read one of the paths it is given (``APEXVOICE_HOST_PATHS``, passed with
``--adapter-env``: a file planted on the host outside its package, a task's ``gold.yaml``) it refuses
to load, naming what it saw (``saw the host: <path>``); a probe that ran it on the host fails so.
Wherever it runs it first tries to leave a file (``APEXVOICE_WRITE_MARK``) in its package directory,
the directory every session's container mounts: a way to carry what it read into the sessions.
Otherwise it is the honest bridge caller.
"""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path
from typing import ClassVar

from .isolation_adapters import BridgeCaller

_mark = os.environ.get("APEXVOICE_WRITE_MARK")
if _mark:
    with suppress(OSError):  # a read-only mount refuses it
        (Path(__file__).parent / _mark).write_text("written at import\n")
for _path in filter(None, os.environ.get("APEXVOICE_HOST_PATHS", "").split(os.pathsep)):
    with suppress(OSError):
        Path(_path).read_bytes()
        raise ImportError(f"saw the host: {_path}")


class HostPeeker(BridgeCaller):
    """The bridge caller, loaded only where its import-time look found nothing of the host."""

    model_id: ClassVar[str] = "host-peeker"
