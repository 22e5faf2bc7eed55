"""Oracle agents whose words are right and whose audio says something else (issue 33, break 1).

Each is the oracle with another synthesizer: its transcript is the reference wording, word for
word, while the audio it plays, in the oracle's own voice, carries other words. Importable as ``module:Class`` for
``apex-voice run --model ... --trust-adapter``: not being privileged, it is given no reference
policy, so it reads the task's ``reference/policy.yaml`` from disk, as such an adapter can.
"""

from __future__ import annotations

import dataclasses

from harness.agents.oracle_voice import OracleVoiceAgent
from harness.agents.realtime import SessionConfig
from harness.audio.agent_voice import synthesize_agent_lines
from harness.audio.clip import Clip
from harness.tasks.dataset import BUNDLED_DATA, resolve_data
from harness.tasks.loader import load_task

#: Unrelated words, as much as any line needs: spoken instead of the reference wording.
UNRELATED = (
    "The river ran past the old mill where the children fed the ducks each summer morning, and the "
    "baker on the corner sold warm rolls to the fishermen before the tide came in. Clouds gathered "
    "over the hills by noon, the church bell rang twice, and a small brown dog chased the gulls along "
    "the harbour wall until the rain began. In the evening the lamps were lit along the quay, the "
    "boats knocked gently against the pier, and somebody in the square played an old song on a violin "
    "while the swallows circled the tower and the last bus left for the valley towns. "
) * 4


def unrelated_words(text: str) -> str:
    """As many characters of :data:`UNRELATED` as ``text`` has, cut at a word."""
    return UNRELATED[: len(text)].rsplit(" ", 1)[0] + "."


async def _unrelated_voice(texts: list[str]) -> dict[str, Clip]:
    others = await synthesize_agent_lines([unrelated_words(t) for t in texts])
    return {t: _claiming(others[unrelated_words(t)], t) for t in texts}


async def _shuffled_voice(texts: list[str]) -> dict[str, Clip]:
    """Turn k's words over turn k+1's audio (the last over the first)."""
    clips = await synthesize_agent_lines(texts)
    return {t: _claiming(clips[texts[(k + 1) % len(texts)]], t) for k, t in enumerate(texts)}


def _claiming(clip: Clip, text: str) -> Clip:
    return Clip(clip.pcm, text, clip.source, [])


class _ReadsThePolicy(OracleVoiceAgent):
    """An oracle that finds its task's reference policy on disk when it is not given one."""

    async def connect(self, config: SessionConfig) -> None:
        if config.reference_policy is None:
            for task_dir in resolve_data(BUNDLED_DATA).task_dirs:
                bundle = load_task(task_dir)
                if f"Task: {bundle.task.title}." in config.instructions:
                    config = dataclasses.replace(config, reference_policy=bundle.policy)
                    break
        await super().connect(config)


class UnrelatedSpeechOracle(_ReadsThePolicy):
    """The reference wording over unrelated words, spoken."""

    model_id = "oracle+unrelated-speech"

    def __init__(self) -> None:
        super().__init__(synthesizer=_unrelated_voice)


class ShuffledClipsOracle(_ReadsThePolicy):
    """The reference wording of turn k over the audio of turn k+1."""

    model_id = "oracle+shuffled-clips"

    def __init__(self) -> None:
        super().__init__(synthesizer=_shuffled_voice)


def wrong_number_voice(line: str, said: str, instead: str):
    """A synthesizer whose audio for ``line`` says ``instead`` where the words say ``said``."""

    async def voice(texts: list[str]) -> dict[str, Clip]:
        spoken = [t.replace(said, instead) if t == line else t for t in texts]
        clips = await synthesize_agent_lines(spoken)
        return {t: _claiming(clips[s], t) for t, s in zip(texts, spoken, strict=True)}

    return voice
