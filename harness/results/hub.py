"""Fetch the dataset (or the published runs) from the Hugging Face Hub and check it against SHA256SUMS.

``huggingface_hub.snapshot_download`` does the transfer: a pinned revision, files already present
(and unchanged) are not fetched again, an interrupted file resumes. Afterwards every file listed in
the snapshot's ``SHA256SUMS`` is hashed; a file that differs or is missing is named, never ignored.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

__all__ = [
    "DEFAULT_DATASET_REPO",
    "DEFAULT_RUNS_REPO",
    "HF_REPO_ENV",
    "ChecksumReport",
    "download_snapshot",
    "verify_checksums",
]

DEFAULT_DATASET_REPO = "puneetUMD/APEX-Voice"
DEFAULT_RUNS_REPO = "puneetUMD/APEX-Voice-runs"
#: Overrides the dataset repository (as the reference does).
HF_REPO_ENV = "APEX_VOICE_HF_REPO"
CHECKSUM_FILE = "SHA256SUMS"
_CHUNK = 1 << 20


@dataclass
class ChecksumReport:
    checked: int = 0
    mismatched: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    #: Entries naming a path outside the snapshot (absolute, ``..``): never opened.
    unsafe: list[str] = field(default_factory=list)
    #: ``SHA256SUMS`` itself is absent: nothing could be verified.
    no_manifest: bool = False

    @property
    def ok(self) -> bool:
        return not (self.mismatched or self.missing or self.unsafe or self.no_manifest)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _safe(rel: str) -> bool:
    parts = PurePosixPath(rel).parts
    return bool(parts) and not PurePosixPath(rel).is_absolute() and ".." not in parts


def verify_checksums(root: Path) -> ChecksumReport:
    """Hash every file ``root/SHA256SUMS`` lists; report each one that differs, is missing or unsafe."""
    report = ChecksumReport()
    manifest = Path(root) / CHECKSUM_FILE
    if not manifest.is_file():
        report.no_manifest = True
        return report
    for line in manifest.read_text(encoding="utf-8").splitlines():
        digest, sep, rel = line.partition("  ")
        if not sep:
            continue
        if not _safe(rel):
            report.unsafe.append(rel)
            continue
        target = Path(root) / rel
        report.checked += 1
        if not target.is_file():
            report.missing.append(rel)
        elif _sha256(target) != digest.strip().lower():
            report.mismatched.append(rel)
    return report


def download_snapshot(repo_id: str, *, revision: str, local_dir: Path | None, repo_type: str = "dataset") -> Path:
    """The snapshot's directory; resumes into ``local_dir`` (or the Hub cache) what is already there."""
    from huggingface_hub import snapshot_download  # only this command pays for the import

    path = snapshot_download(
        repo_id=repo_id,
        repo_type=repo_type,
        revision=revision,
        local_dir=str(local_dir) if local_dir is not None else None,
        # Read at call time (the library reads HF_ENDPOINT once, at its import).
        endpoint=os.environ.get("HF_ENDPOINT") or None,
    )
    return Path(path)
