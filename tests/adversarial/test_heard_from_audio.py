"""Heard means the audio said it (issue 33, break 1): a claimed word is heard only where ASR of the
audio that played carries it. The attacks run the real session code (and the real CLI) on the
bundled benefits task: the reference wording over other audio must not pass."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from harness.agents.oracle_voice import OracleVoiceAgent
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.campaign.session_record import record_from_session
from harness.cli.main import app
from harness.events import EventType
from harness.results.result_record import ResultRecord
from harness.session.duplex_runner import DuplexConfig, run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.session.heard_speech import BLANK
from harness.tasks.loader import load_task
from tests.adversarial.mismatched_speech import ShuffledClipsOracle, UnrelatedSpeechOracle, wrong_number_voice
from tests.conftest import DEMO_DATA

pytestmark = pytest.mark.slow  # every session here runs local ASR over its agent's audio

TASK_ID = "demo_benefits_enrollment_001"
BENEFITS = DEMO_DATA / "tasks" / TASK_ID
#: The line after the user's correction; it plays whole (the read-back before it is cut by the
#: correction before its amount has played, in the agent voice).
CHANGED = ("Sorry about that. I've changed it to 1,200 dollars for the year, which is 50 dollars per paycheck. "
           "The form is complete: PPO Choice for you and your two children starting March 1st. Shall I submit "
           "your enrollment now?")


async def _session(agent, hearing="asr"):
    bundle = load_task(BENEFITS)
    speech = open_speech_source(BENEFITS, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    result = await run_duplex_session(bundle, agent, InProcessEnvironment(bundle.public_bundle()),
                                      DuplexConfig(speech=speech, session_dir=None, privileged=True, hearing=hearing))
    return result, record_from_session(result, rep=0, model=agent.model_id, wall_s=0.0)


def _payloads(result, type_):
    return [e.payload for e in result.events.events if e.type == type_]


def _pattern_acts(result):
    return [p["act"] for p in _payloads(result, EventType.AGENT_ACT) if p["source"] == "pattern"]


async def test_the_honest_oracle_is_heard_and_passes_as_when_its_words_are_taken_on_trust():
    heard, record = await _session(OracleVoiceAgent())
    trusted, _ = await _session(OracleVoiceAgent(), hearing="claimed")
    assert heard.pts == 1 and heard.outcome == "SUCCESS"
    # The same acts, in the same order, as when every claimed word is taken as heard.
    assert _pattern_acts(heard) == _pattern_acts(trusted) and _pattern_acts(heard)
    # Word for word: every response heard whole, but for the one it cut itself when the user barged in.
    rows = _payloads(heard, EventType.SPEECH_AGREEMENT)
    assert record.speech_agreement["verdicts"] == {"cut": 1, "speech": len(rows) - 1}
    assert record.speech_agreement["mismatched_responses"] == 0
    assert all(r["unheard_chars"] == 0 for r in rows if r["verdict"] == "speech")
    assert all(row["asr_text"] for row in rows)
    assert _payloads(heard, EventType.RUN_START)[0]["hearing"] == "asr"


async def test_the_reference_wording_over_unrelated_speech_is_not_heard_and_fails():
    result, record = await _session(UnrelatedSpeechOracle())
    assert result.pts == 0 and result.outcome == "FAILURE"
    assert _pattern_acts(result) == []
    agreement = record.speech_agreement
    assert agreement["mismatched_responses"] == agreement["responses"] >= 1
    assert agreement["heard_ratio"] < 0.2, agreement  # scattered words the other speech shares at most
    # Before issue 33: every response was "speech" and 1,075 of 1,166 characters were heard.
    assert set(agreement["verdicts"]) == {"mismatch"}


async def test_each_turns_words_over_the_next_turns_clip_are_not_heard_and_fail():
    result, record = await _session(ShuffledClipsOracle())
    assert result.pts == 0 and result.outcome == "FAILURE"
    agreement = record.speech_agreement
    assert agreement["mismatched_responses"] == agreement["responses"] >= 1
    assert agreement["heard_ratio"] < 0.3, agreement


async def test_one_wrong_number_in_a_right_sentence_is_not_heard_and_the_rest_is():
    agent = OracleVoiceAgent(synthesizer=wrong_number_voice(CHANGED, "1,200", "1,900"))
    result, record = await _session(agent)
    texts = [p["text"] for p in _payloads(result, EventType.AGENT_TEXT) if "changed it to" in p["text"]]
    assert len(texts) == 1
    heard = texts[0]
    # The amount the audio did not say is blanked, character for character; the rest of the line is heard.
    assert heard == CHANGED.replace("1,200", BLANK * 5), heard
    row = next(r for r in _payloads(result, EventType.SPEECH_AGREEMENT) if r["mismatched_chars"])
    assert row["verdict"] == "mismatch" and row["mismatched_chars"] == len("1,200")
    assert "1,900" in row["asr_text"] or "1900" in row["asr_text"]
    assert record.speech_agreement["mismatched_responses"] == 1


def test_the_cli_scores_a_trusted_adapter_whose_audio_says_other_words_as_failed(tmp_path):
    out = tmp_path / "runs"
    runner = CliRunner()
    result = runner.invoke(app, ["run", "--model", "tests.adversarial.mismatched_speech:UnrelatedSpeechOracle",
                                 "--only", TASK_ID, "--sandbox", "local", "--repeats", "1", "--out", str(out),
                                 "--trust-adapter"])
    records = [ResultRecord.model_validate(json.loads(p.read_text())) for p in out.glob("*/rep*/result.json")]
    assert len(records) == 1, (result.exit_code, result.output)
    record = records[0]
    assert record.pts == 0 and record.error is None
    assert record.speech_agreement["mismatched_responses"] == record.speech_agreement["responses"] >= 1
    tables = tmp_path / "results"
    shown = runner.invoke(app, ["results", str(out), "--out", str(tables)])
    assert shown.exit_code == 0, shown.output
    (model,) = json.loads((tables / "results.json").read_text())["models"].values()
    assert model["hearing"]["mismatched_responses"] == record.speech_agreement["responses"]
    assert model["hearing"]["mismatched_runs"] == 1
    assert "## What the user heard" in (tables / "results.md").read_text()
