"""The LLM act observer: closed-list labels, cached, and a rerun of a C2 session that asks nothing."""

from __future__ import annotations

import json

import pytest

from harness.agents.oracle_voice import OracleVoiceAgent
from harness.agents.realtime import TranscriptDelta
from harness.audio.agent_voice import synthesize_agent_lines
from harness.audio.clip import Clip
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.chat_completions import ChatCompletions
from harness.events import EventType
from harness.first_writer_store import FirstWriterStore
from harness.session.duplex_runner import DuplexConfig, run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.loader import load_task
from harness.user.llm_act_observer import LlmActClassifier, observer_prompt
from tests.conftest import DEMO_DATA
from tests.fakes.chat_completions import FakeError, serve_chat_completions
from tests.scripted_voice_agent import TransformedAgent

BENEFITS = DEMO_DATA / "tasks" / "demo_benefits_enrollment_001"


def _classifier(fake, tmp_path) -> LlmActClassifier:
    cache = FirstWriterStore(tmp_path / "observer.sqlite3")
    return LlmActClassifier(ChatCompletions(model="fake-4o", base_url=fake.base_url, api_key="k"), cache)


def _candidates(body) -> list[str]:
    prompt = body["messages"][0]["content"]
    return json.loads(prompt.split("Acts: ", 1)[1].split("\n", 1)[0])


async def test_labels_come_only_from_the_closed_list_and_are_cached(tmp_path):
    with serve_chat_completions(lambda body: '["ASK:phone", "MADE_UP"]') as fake:
        classifier = _classifier(fake, tmp_path)
        assert await classifier.classify("How can we reach you?", ["ASK:phone", "ASK:email"]) == ["ASK:phone"]
        assert await classifier.classify("How can we reach you?", ["ASK:email", "ASK:phone"]) == ["ASK:phone"]
    assert classifier.calls == 1 and classifier.cache_hits == 1
    body = fake.requests[0]
    assert body["temperature"] == 0.0 and body["messages"][0]["content"] == observer_prompt(
        ["ASK:email", "ASK:phone"], "How can we reach you?")


async def test_an_outage_gives_no_labels_and_is_not_cached(tmp_path):
    def down(body):
        raise FakeError(503)

    with serve_chat_completions(down) as fake:
        classifier = _classifier(fake, tmp_path)
        assert await classifier.classify("Your phone?", ["ASK:phone"]) == []
        assert await classifier.classify("Your phone?", ["ASK:phone"]) == []
    assert classifier.errors == 2 and len(classifier.cache) == 0


async def _session(classifier, agent):
    bundle = load_task(BENEFITS)
    speech = open_speech_source(BENEFITS, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    return await run_duplex_session(bundle, agent, InProcessEnvironment(bundle.public_bundle()), DuplexConfig(speech=speech,
                                    session_dir=None, privileged=True, observer=classifier))


PARAPHRASE = "And what number can we ring you on?"


async def _paraphrasing_voice(texts: list[str]) -> dict[str, Clip]:
    """The oracle's lines, but it asks for the phone number in words no pattern knows, and says
    them: the user hears what the audio carries (issue 33), so the paraphrase is spoken, not claimed."""
    spoken = [PARAPHRASE if "phone" in text.lower() else text for text in texts]
    clips = await synthesize_agent_lines(spoken)
    return {text: clips[said] for text, said in zip(texts, spoken, strict=True)}


def _paraphrased(event):
    """Its words say what its audio says (the transcript comes from the policy's line)."""
    if isinstance(event, TranscriptDelta) and "phone" in event.text.lower():
        return [TranscriptDelta(PARAPHRASE)]
    return [event]


def _paraphrasing_oracle() -> TransformedAgent:
    return TransformedAgent(OracleVoiceAgent(synthesizer=_paraphrasing_voice), _paraphrased)


@pytest.mark.slow
async def test_a_paraphrase_is_heard_through_the_classifier_and_a_rerun_asks_nothing(tmp_path):
    def label(body):
        prompt = body["messages"][0]["content"]
        return '["ASK:phone"]' if "ring you on" in prompt and "ASK:phone" in _candidates(body) else "[]"

    with serve_chat_completions(label) as fake:
        classifier = _classifier(fake, tmp_path)
        first = await _session(classifier, _paraphrasing_oracle())
        calls = len(fake.requests)
        rerun = _classifier(fake, tmp_path)  # a fresh process would read the same cache file
        second = await _session(rerun, _paraphrasing_oracle())
    assert calls > 0 and len(fake.requests) == calls and rerun.calls == 0
    classified = [e for e in first.events.events if e.type == EventType.AGENT_ACT and e.payload["source"] == "classifier"]
    assert [e.payload["act"] for e in classified] == ["ASK:phone"]
    assert first.events.events[0].payload["observer"] == "llm:fake-4o"

    def stream(result):
        return [(e.type, e.media_time_ms, e.payload) for e in result.events.events]

    assert stream(first) == stream(second)
