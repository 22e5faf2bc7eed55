"""Pre-rendering a package's user speech into ``user/audio/`` (reference §1.18 layout).

Every realization-bank variant, the four closing lines and the nudge get a clip, so sessions replay
bit-identical user speech without a synthesizer. A package whose index already holds the same
texts from the same engine, voice and renderer is skipped (unless forced); ``meta.json`` is
written last, so an interrupted render is never mistaken for a finished one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib.metadata import version as package_version
from pathlib import Path

from harness.atomic_write import atomic_write_json, atomic_write_text
from harness.tasks.bundle import TaskBundle
from harness.tasks.loader import load_task
from harness.tasks.package_paths import AUDIO_INDEX_FILE, AUDIO_META_FILE
from harness.tasks.runner_lines import CLOSING_LINES, NUDGE_LINE

from . import espeak
from .audio_files import write_pcm16
from .clip import Clip
from .frames import SAMPLE_RATE

__all__ = ["RENDERER_VERSION", "ClipPlan", "PackageRender", "clip_file_name", "planned_clips", "render_package"]

RENDERER_VERSION = "1"
#: meta.json keys that must match for existing clips to be reused.
_FRESHNESS_KEYS = ("engine", "engine_version", "voice", "rate_wpm", "renderer_version")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_ENCODING_NOTE = (
    "PCM16 = trunc(clip(x, -1, 1) * 32767); decode q as (q + 0.5*sign(q)) / 32767 to re-encode exactly; "
    "pcm16_sha256 hashes the little-endian int16 samples"
)


@dataclass(frozen=True)
class ClipPlan:
    """One clip a package needs: its file name, kind and exact text."""

    file: str
    kind: str
    text: str
    user_plan_id: str | None = None
    variant_id: str | None = None


@dataclass(frozen=True)
class PackageRender:
    task_id: str
    skipped: bool
    clips_written: int = 0
    audio_seconds: float = 0.0


def clip_file_name(variant_id: str) -> str:
    """``open#v1`` → ``open_v1.flac``: unsafe runs become ``_``, outer ``_`` stripped."""
    return _UNSAFE.sub("_", variant_id).strip("_") + ".flac"


def planned_clips(bundle: TaskBundle) -> list[ClipPlan]:
    """Every clip the package needs, in bank order, then closing lines, then the nudge."""
    plans = [
        ClipPlan(clip_file_name(v.variant_id), "variant", v.text, entry.user_plan_id, v.variant_id)
        for entry in bundle.realization_bank.values()
        for v in entry.variants
    ]
    plans += [ClipPlan(f"_closing_{i}.flac", "closing", text) for i, text in enumerate(CLOSING_LINES)]
    plans.append(ClipPlan("_nudge.flac", "nudge", NUDGE_LINE))
    seen: dict[str, str] = {}
    for plan in plans:
        owner = seen.setdefault(plan.file, plan.variant_id or plan.kind)
        if owner != (plan.variant_id or plan.kind):
            raise ValueError(
                f"task {bundle.task_id!r}: variant ids {owner!r} and {plan.variant_id!r} both map to clip {plan.file}"
            )
    return plans


def _meta(voice: str) -> dict[str, object]:
    return {
        "engine": "espeak-ng",
        "engine_version": espeak.engine_version(),
        "voice": voice,
        "rate_wpm": espeak.DEFAULT_RATE_WPM,
        "renderer_version": RENDERER_VERSION,
        "sample_rate": SAMPLE_RATE,
        "encoding": _ENCODING_NOTE,
        "versions": {name: package_version(name) for name in ("numpy", "soundfile", "scipy", "espeakng-loader")},
    }


def _up_to_date(task_dir: Path, plans: list[ClipPlan], meta: dict[str, object]) -> bool:
    index_path, meta_path = task_dir / AUDIO_INDEX_FILE, task_dir / AUDIO_META_FILE
    if not (index_path.is_file() and meta_path.is_file()):
        return False
    try:
        recorded = json.loads(meta_path.read_text(encoding="utf-8"))
        texts = {json.loads(line)["text"] for line in index_path.read_text(encoding="utf-8").splitlines() if line.strip()}
    except (ValueError, KeyError, TypeError):
        return False
    same_engine = all(recorded.get(key) == meta[key] for key in _FRESHNESS_KEYS)
    return same_engine and texts == {p.text for p in plans}


def _index_row(plan: ClipPlan, clip: Clip, voice: str) -> dict[str, object]:
    ids = {"user_plan_id": plan.user_plan_id, "variant_id": plan.variant_id} if plan.kind == "variant" else {}
    return {
        "file": plan.file,
        "kind": plan.kind,
        **ids,
        "text": plan.text,
        "voice": voice,
        "sample_rate": SAMPLE_RATE,
        "num_samples": clip.num_samples,
        "pcm16_sha256": clip.sha256(),
        "word_timestamps": [w.to_json() for w in clip.word_timestamps],
    }


async def render_package(task_dir: Path, *, force: bool = False, cache_dir: Path | None = None) -> PackageRender:
    """(Re)build ``user/audio/`` of one package; stale ``.flac`` files there are removed."""
    bundle = load_task(Path(task_dir))
    voice = espeak.user_voice(bundle.persona.get("voice_id"))
    plans = planned_clips(bundle)
    meta = _meta(voice)
    if not force and _up_to_date(bundle.task_dir, plans, meta):
        return PackageRender(bundle.task_id, skipped=True)
    clips = await espeak.synthesize([p.text for p in plans], voice, cache_dir=cache_dir)
    audio_dir = (bundle.task_dir / AUDIO_INDEX_FILE).parent
    for plan in plans:
        write_pcm16(audio_dir / plan.file, clips[plan.text].pcm)
    wanted = {p.file for p in plans}
    for stale in audio_dir.glob("*.flac"):
        if stale.name not in wanted:
            stale.unlink()
    rows = [json.dumps(_index_row(p, clips[p.text], voice)) for p in plans]
    atomic_write_text(audio_dir / "index.jsonl", "".join(row + "\n" for row in rows))
    atomic_write_json(bundle.task_dir / AUDIO_META_FILE, meta)
    samples = sum(clips[p.text].num_samples for p in plans)
    return PackageRender(bundle.task_id, skipped=False, clips_written=len(plans), audio_seconds=samples / SAMPLE_RATE)

