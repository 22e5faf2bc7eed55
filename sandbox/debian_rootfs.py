"""A minimal Debian root filesystem with python3, built by mmdebstrap.

Machines without a container registry cannot pull a base image, but they reach Debian's archive.
The recipe follows docs/offline-base-image.md (measured ~30 s): the `essential` variant (dpkg and
/bin/sh, no apt), docs/man/locales excluded, the merged-usr hook (so perl is not pulled in), and
the -updates and -security suites so the image carries current security fixes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_SUITE",
    "DebianMirrors",
    "RootfsBuildError",
    "build_rootfs_tar",
    "ensure_mmdebstrap",
    "mirrors_from_deb822",
    "mmdebstrap_command",
]

DEFAULT_SUITE = "bookworm"
DEFAULT_MAIN_MIRROR = "http://deb.debian.org/debian"
DEFAULT_SECURITY_MIRROR = "http://deb.debian.org/debian-security"
APT_SOURCES = Path("/etc/apt/sources.list.d/debian.sources")
MERGED_USR_HOOK = Path("/usr/share/mmdebstrap/hooks/merged-usr")
#: libstdc++6: the harness's numpy, scipy and espeak-ng wheels link against it.
PACKAGES = ("python3", "python3-venv", "ca-certificates", "libstdc++6")
SLIM_DPKG_OPTIONS = (
    "path-exclude=/usr/share/man/*",
    "path-exclude=/usr/share/info/*",
    "path-exclude=/usr/share/locale/*",
    "path-include=/usr/share/locale/locale.alias",
    "path-exclude=/usr/share/doc/*",
    "path-include=/usr/share/doc/*/copyright",
)


class RootfsBuildError(RuntimeError):
    """The Debian root filesystem could not be built (tool missing or mmdebstrap failed)."""


@dataclass(frozen=True)
class DebianMirrors:
    """Archive URIs: the host's configured mirror is usually the fastest (and sometimes the only) one."""

    main: str = DEFAULT_MAIN_MIRROR
    security: str = DEFAULT_SECURITY_MIRROR


def mirrors_from_deb822(text: str, suite: str = DEFAULT_SUITE) -> DebianMirrors:
    """Pick the main and security URIs serving `suite` from a deb822 sources file.

    Stanzas for other distributions (an Ubuntu host's archive) are ignored, so the defaults apply.
    """
    main, security = DEFAULT_MAIN_MIRROR, DEFAULT_SECURITY_MIRROR
    for stanza in text.split("\n\n"):
        fields = dict(
            line.split(":", 1) for line in stanza.splitlines() if ":" in line and not line.startswith("#")
        )
        uris = fields.get("URIs", "").split()
        suites = fields.get("Suites", "").split()
        if not uris:
            continue
        if suite in suites:
            main = uris[0]
        if f"{suite}-security" in suites:
            security = uris[0]
    return DebianMirrors(main=main, security=security)


def host_mirrors(suite: str = DEFAULT_SUITE) -> DebianMirrors:
    """The host's apt mirrors for `suite`, or deb.debian.org when the host has none configured."""
    if not APT_SOURCES.is_file():
        return DebianMirrors()
    return mirrors_from_deb822(APT_SOURCES.read_text(encoding="utf-8"), suite)


def mmdebstrap_command(target: Path, mirrors: DebianMirrors, suite: str = DEFAULT_SUITE) -> list[str]:
    """The exact mmdebstrap invocation (kept separate so it can be shown, hashed and tested)."""
    return [
        "mmdebstrap",
        "--variant=essential",
        f"--include={','.join(PACKAGES)}",
        f"--hook-dir={MERGED_USR_HOOK}",
        *(f"--dpkgopt={option}" for option in SLIM_DPKG_OPTIONS),
        suite,
        str(target),
        f"deb {mirrors.main} {suite} main",
        f"deb {mirrors.main} {suite}-updates main",
        f"deb {mirrors.security} {suite}-security main",
    ]


def ensure_mmdebstrap(report: Callable[[str], None]) -> None:
    """Install mmdebstrap with apt-get when it is missing and we are root; otherwise explain how."""
    if shutil.which("mmdebstrap") and MERGED_USR_HOOK.is_dir():
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise RootfsBuildError(
            "mmdebstrap is not installed: run `apt-get install -y mmdebstrap` as root, "
            "or set BASE_IMAGE to a local image that has python3"
        )
    report("base: installing mmdebstrap with apt-get")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "mmdebstrap"]):
        completed = subprocess.run(command, env=env, check=False)
        if completed.returncode != 0:
            raise RootfsBuildError(f"`{' '.join(command)}` failed with exit code {completed.returncode}")


def build_rootfs_tar(target: Path, report: Callable[[str], None], suite: str = DEFAULT_SUITE) -> Path:
    """Write the root filesystem tarball to `target` (mmdebstrap's own progress goes to stderr)."""
    ensure_mmdebstrap(report)
    command = mmdebstrap_command(target, host_mirrors(suite), suite)
    report(f"base: {' '.join(command)}")
    target.parent.mkdir(parents=True, exist_ok=True)
    completed = subprocess.run(command, stdout=subprocess.DEVNULL, check=False)
    if completed.returncode != 0 or not target.is_file():
        raise RootfsBuildError(f"mmdebstrap failed with exit code {completed.returncode} building {target}")
    return target
