"""The turn policies alone: scripted frame states in, moves out (no session)."""

from __future__ import annotations

import pytest

from harness.conditions import ConditionDef, conditions
from harness.session.session_config import DuplexConfig
from harness.session.turn_policy import (
    IDLE_TIMEOUT_MS,
    TURN_GAP_MS,
    FrameState,
    FullDuplex,
    TurnBased,
    TurnLedger,
    TurnMove,
    turn_policy,
)
from harness.tasks.loader import load_task
from harness.user.flow_engine import UserPlan
from tests.conftest import DEMO_DATA

IDLE = FrameState(user_busy=False, overlays_waiting=False, agent_busy=False, agent_hung_up=False,
                  agent_acted=True, last_agent_audio_ms=1000, last_user_end_ms=0)


def _plan(plan_id: str, action: str) -> UserPlan:
    return UserPlan(id=plan_id, speech_act="ANSWER", fact_ids=[], floor_action=action, urgency="normal",
                    event_id=None, style={}, state_id="s")


@pytest.mark.parametrize("policy", [FullDuplex(), TurnBased()], ids=["C2", "C1"])
def test_the_user_answers_once_the_agent_has_been_silent_for_the_turn_gap(policy):
    moves = [policy.decide(IDLE, t) for t in range(1000, 1000 + TURN_GAP_MS + 40, 20)]
    assert moves[-3:] == [TurnMove.WAIT, TurnMove.TURN, TurnMove.TURN]
    assert moves.index(TurnMove.TURN) * 20 == TURN_GAP_MS


@pytest.mark.parametrize("busy", ["user_busy", "overlays_waiting", "agent_busy"])
def test_nothing_moves_while_anyone_holds_or_is_about_to_take_the_floor(busy):
    state = IDLE._replace(agent_hung_up=True, **{busy: True})
    assert FullDuplex().decide(state, 10_000) is TurnMove.WAIT


def test_an_agent_that_hung_up_ends_the_call_once_it_is_done():
    assert FullDuplex().decide(IDLE._replace(agent_hung_up=True), 1020) is TurnMove.END


def test_an_idle_agent_gets_its_nudge_after_the_idle_timeout():
    state = IDLE._replace(agent_acted=False, last_user_end_ms=5000)
    assert FullDuplex().decide(state, 5000 + IDLE_TIMEOUT_MS - 20) is TurnMove.WAIT
    assert FullDuplex().decide(state, 5000 + IDLE_TIMEOUT_MS) is TurnMove.TURN


def test_turn_based_speaks_nothing_over_the_agent_and_drops_back_channels():
    flow = load_task(DEMO_DATA / "tasks" / "demo_field_tech_interview_001").flow
    assert FullDuplex().overlay_events(flow) and TurnBased().overlay_events(flow) == set()
    plans = [_plan("a", "TAKE_FLOOR"), _plan("b", "BACKCHANNEL"), _plan("c", "BARGE_IN")]
    assert [p.id for p in TurnBased().turn_plans(plans)] == ["a", "c"]
    assert [p.id for p in FullDuplex().turn_plans(plans)] == ["a", "b", "c"]


def test_every_voice_condition_has_a_policy_and_an_unknown_one_is_refused():
    voice = [name for name, c in conditions().items() if c.session == "voice"]
    assert voice == ["C1", "C2", "C3"]  # no plugin installed in this environment
    assert isinstance(turn_policy("C1"), TurnBased) and not isinstance(turn_policy("C2"), TurnBased)
    with pytest.raises(ValueError, match="unknown voice condition 'C9'; expected one of C1, C2, C3"):
        DuplexConfig(speech=None, condition="C9")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown voice condition 'C0'"):  # a text condition has no turn policy
        turn_policy("C0")


def test_a_condition_registers_its_turn_taking_and_is_checked_where_it_is_declared():
    assert [c.turn_taking for c in conditions().values()] == [None, "turn_based", "full_duplex", "full_duplex"]
    assert ConditionDef("X", "x", "x", session="voice").turn_taking == "full_duplex"  # the default
    with pytest.raises(ValueError, match="condition 'X': turn_taking must be one of full_duplex, turn_based, "
                                         "got 'impatient'"):
        ConditionDef("X", "x", "x", session="voice", turn_taking="impatient")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="condition 'T': a text condition takes no turn_taking"):
        ConditionDef("T", "t", "t", session="text", turn_taking="turn_based")
    with pytest.raises(ValueError, match="condition 'S': session must be text or voice, got 'video'"):
        ConditionDef("S", "s", "s", session="video")  # type: ignore[arg-type]


def test_an_answer_owed_is_given_up_after_the_idle_timeout_at_the_time_asked():
    ledger = TurnLedger()
    ledger.owe_answer(1000)
    ledger.give_up_waiting(1000 + IDLE_TIMEOUT_MS)
    assert ledger.answer_owed_since == 1000
    ledger.give_up_waiting(1000 + IDLE_TIMEOUT_MS + 20)
    assert ledger.answer_owed_since is None
    ledger.owe_answer(2000)
    ledger.answered(2500)
    assert ledger.answer_owed_since is None and ledger.answered_at_ms == 2500
    ledger.agent_acted = True
    ledger.user_held_floor(3000)
    assert (ledger.agent_acted, ledger.last_user_end_ms) == (False, 3000)


def test_only_the_degraded_audio_condition_takes_an_acoustics_chain():
    voice = [name for name, c in conditions().items() if c.session == "voice"]
    assert [c for c in voice if turn_policy(c).degraded_audio] == ["C3"]
    with pytest.raises(ValueError, match="condition C3 needs an acoustics chain"):
        DuplexConfig(speech=None, condition="C3")  # type: ignore[arg-type]
