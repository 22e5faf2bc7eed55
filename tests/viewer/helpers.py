"""Helpers for the viewer's tests: where a recorded session is, and the system's Chromium."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

DEMO_TASK = "demo_benefits_enrollment_001"
#: Debian's Chromium (``apt-get install chromium``): the binary itself, not the ``/usr/bin`` wrapper.
CHROMIUM_PATHS = ("/usr/lib/chromium/chromium", "/usr/bin/chromium")


def session_dir(campaign_dir: Path) -> Path:
    return next(campaign_dir.glob(f"{DEMO_TASK}/rep0/*/events.jsonl")).parent


def chromium_path() -> str:
    """The system Chromium; skipped without one, a failure under CI=true (``.ci/run`` installs it)."""
    for path in CHROMIUM_PATHS:
        if os.access(path, os.X_OK):
            return path
    found = shutil.which("chromium")
    if found:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("CI=true but Chromium is not installed (Debian: apt-get install chromium)")
    pytest.skip("no Chromium (Debian: apt-get install chromium)")
