"""Coverage of the frozen user speech: every reachable plan has wording, every wording has audio.

A plan without a bank variant makes the simulator fall back (the session outcome becomes
``SIMULATOR_FALLBACK``); a text without a pre-rendered clip needs live TTS, which breaks the
bit-identical replay of user speech.
"""

from __future__ import annotations

from collections.abc import Iterator

from harness.tasks.runner_lines import CLOSING_LINES, NUDGE_LINE

from .bundle import TaskBundle
from .lint_issue import LintIssue
from .package_paths import AUDIO_INDEX_FILE
from .reachable_plans import reachable_plans

__all__ = ["lint_realization"]


def lint_realization(bundle: TaskBundle) -> Iterator[LintIssue]:
    yield from _bank_covers_plans(bundle)
    yield from _audio_covers_texts(bundle)


def _bank_covers_plans(bundle: TaskBundle) -> Iterator[LintIssue]:
    bank_file = bundle.task.realization_bank
    reported: set[str] = set()
    for planned in reachable_plans(bundle.flow):
        entry = bundle.realization_bank.get(planned.plan_id)
        if (entry is None or not entry.variants) and planned.plan_id not in reported:
            reported.add(planned.plan_id)
            yield LintIssue(
                "error", bundle.task.user_program, planned.field,
                f"reachable plan {planned.plan_id!r} has no variant in {bank_file}",
            )


def _audio_covers_texts(bundle: TaskBundle) -> Iterator[LintIssue]:
    if bundle.audio_index is None:
        return
    recorded = {row.text for row in bundle.audio_index}
    needed = [
        (f"variant {variant.variant_id!r}", variant.text)
        for entry in bundle.realization_bank.values()
        for variant in entry.variants
    ]
    needed += [(f"closing line {index}", text) for index, text in enumerate(CLOSING_LINES)]
    needed.append(("nudge line", NUDGE_LINE))
    for what, text in needed:
        if text not in recorded:
            yield LintIssue("error", AUDIO_INDEX_FILE, None, f"no clip for {what} (text {text!r})")
