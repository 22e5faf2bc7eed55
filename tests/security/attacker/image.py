"""Build the hostile agent's image offline, and one tiny image per attack plan on top of it.

The agent launcher passes an agent image nothing but the session (no environment, no command), so
each test's plan (mode, addresses to try, needles to look for) is baked into an image of its own:
one ``ENV`` layer over the attacker image, built in well under a second. Both builds run with
network ``none`` and never pull: ``FROM`` names only images built on this machine.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any

from sandbox.base_image import DEFAULT_BASE_IMAGE

__all__ = ["ATTACKER_REPOSITORY", "PLAN_LABEL", "build_attacker", "build_plan_image", "remove_plan_images"]

ATTACKER_DIR = Path(__file__).resolve().parent
ATTACKER_REPOSITORY = "apex-voice/attacker-test"
#: Carried by every plan image, so a test session can remove what it built.
PLAN_LABEL = "org.apex-voice.attack-plan"


def _build(client: Any, tag: str, **kwargs: Any) -> str:
    for chunk in client.api.build(
        tag=tag, network_mode="none", pull=False, rm=True, forcerm=True, decode=True, **kwargs
    ):
        if "error" in chunk:
            raise RuntimeError(f"building {tag} failed: {chunk['error'].strip()}")
    return tag


def build_attacker(client: Any, base_image: str = DEFAULT_BASE_IMAGE) -> str:
    """``apex-voice/attacker-test:<hash of its sources>`` (the engine's layer cache makes a rebuild cheap)."""
    digest = hashlib.sha256()
    for name in ("Dockerfile", "attacker.py"):
        digest.update((ATTACKER_DIR / name).read_bytes())
    digest.update(base_image.encode())
    tag = f"{ATTACKER_REPOSITORY}:{digest.hexdigest()[:12]}"
    return _build(
        client, tag, path=str(ATTACKER_DIR), dockerfile="Dockerfile", buildargs={"BASE_IMAGE": base_image}
    )


def build_plan_image(client: Any, attacker: str, plan: dict[str, Any]) -> str:
    """An image that runs ``attacker`` with ``plan`` (see attacker.py for its keys)."""
    encoded = base64.b64encode(json.dumps(plan, sort_keys=True).encode()).decode()
    # Per process: parallel test workers each build, use and remove their own plan images.
    tag = f"{ATTACKER_REPOSITORY}:plan-{hashlib.sha256((attacker + encoded).encode()).hexdigest()[:12]}-{os.getpid()}"
    dockerfile = (
        f"FROM {attacker}\nENV APEX_ATTACK_B64={encoded}\nLABEL {PLAN_LABEL}={plan.get('mode', 'probe')}\n"
    )
    return _build(client, tag, fileobj=io.BytesIO(dockerfile.encode()))


def remove_plan_images(client: Any) -> None:
    """This process's plan images (another test worker's stay, in use)."""
    for image in client.images.list(filters={"label": PLAN_LABEL}):
        for tag in image.tags:
            if tag.endswith(f"-{os.getpid()}"):
                client.images.remove(tag, noprune=False)
