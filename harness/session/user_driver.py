"""The simulated user in a voice session: what it observes of the agent, what it says and when.

It owns the simulator, the session effects (approvals, fired events, tool results observed), the
:class:`AgentActivity` collected since the user's last flow step — nothing else writes it — the
user channel its clips play on, and the duplex deliveries it speaks over the agent. It reads the
agent's floor (``floor_meter.py``) and never writes it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

from harness.audio.acoustics import AcousticChain
from harness.audio.speech_bank import Clip, SpeechSource
from harness.events import EventBus, EventType
from harness.tasks.bundle import TaskBundle
from harness.user.flow_engine import Observation, UserPlan
from harness.user.recovery import RecoveryMove
from harness.user.simulator import SimulatedUser

from .channels import UserChannel, UserUtterance
from .clocks import MediaClock
from .duplex_delivery import CONTINUE_ACTIONS, OVERLAY_FLOOR_ACTIONS, DeliveryTracker
from .environment_port import EnvironmentPort
from .floor_meter import FloorMeter
from .session_effects import AgentActivity, SessionEffects
from .tool_executor import CallDone
from .turn_policy import TurnPolicy

__all__ = ["UserDriver"]


class UserDriver:
    def __init__(self, bundle: TaskBundle, env: EnvironmentPort, log: EventBus, floor: FloorMeter,
                 clock: MediaClock, *, policy: TurnPolicy, seed: int, max_turns: int, condition: str) -> None:
        self.user = SimulatedUser(bundle, condition=condition, seed=seed)
        self.effects = SessionEffects(bundle, env, self.user, log)
        self.channel = UserChannel()
        self.deliveries = DeliveryTracker(bundle.events, log)
        self._log = log
        self._floor = floor
        self._clock = clock
        self._policy = policy
        self._overlay_event_ids = policy.overlay_events(bundle.flow)
        self._max_turns = max_turns
        self._activity = AgentActivity()
        self._held_plans: list[UserPlan] = []
        self._clips: dict[str, Clip] = {}
        self.turns = 0
        self.fallbacks = 0
        self._closing_said = False

    async def prepare(self, speech: SpeechSource, acoustics: AcousticChain | None, seed: int) -> None:
        """Every clip the user may speak, before the clock starts."""
        self._clips = await speech.prepare(self.user.speakable_texts())
        if acoustics is not None:
            # C3: every clip through the seeded degradations, once (same samples on a rerun).
            self._clips = await asyncio.to_thread(acoustics.degrade_clips, self._clips, seed=seed)

    # -- what the user observes ------------------------------------------------------------------

    def hear_text(self, text: str, t: int, **extra: str) -> list[str]:
        """The agent's (final) heard words: logged, observed as acts; the acts' keys."""
        return self.effects.hear_text(text, t, self._activity, **extra)

    def hear_classified(self, labels: list[str], t: int) -> list[str]:
        acts = [act.key for act in self.user.hear_classified(labels)]
        for key in acts:
            self._log.emit(EventType.AGENT_ACT, "agent", t, {"act": key, "source": "classifier"})
        self._activity.acts.extend(acts)
        return acts

    async def call_done(self, done: CallDone, t: int) -> None:
        """A call's result is in: logged, observed, and the events it triggers fired."""
        acts_before = len(self._activity.acts)
        record = done.record
        self.effects.take_result(record, t, self._activity, call_id=done.call_id, called_at_ms=done.called_at_ms,
                                 wall_latency_ms=done.wall_ms, cancelled=done.cancelled)
        await self.fire_events(t, act_keys=self._activity.acts[acts_before:], tool_calls=[record.name],
                               mutations=record.mutations,
                               commit_attempts=[record.commit_attempt] if record.commit_attempt else [])

    async def fire_events(self, t: int, *, act_keys: Iterable[str], tool_calls: Iterable[str] = (),
                          mutations: Iterable[str] = (), commit_attempts: Iterable[str] = ()) -> None:
        """Events fire as soon as their trigger is observed — mid-response, not at the turn's end."""
        fired = await self.effects.fire_events(t, self._activity, act_keys=act_keys, tool_calls=tool_calls,
                                               mutations=mutations, commit_attempts=commit_attempts,
                                               time_triggers=False)
        overlay = [e.event_id for e in fired if e.event_id in self._overlay_event_ids]
        if overlay:
            # Step the flow at once so a barge-in or back-channel can land while the agent speaks.
            for plan in self._next_plans(Observation(media_time_ms=t, fired_events=overlay), t):
                if plan.floor_action in OVERLAY_FLOOR_ACTIONS:
                    self.deliveries.schedule(plan, response_onset_ms=self._floor.onset_ms)
                else:
                    self._held_plans.append(plan)

    # -- the user's own audio --------------------------------------------------------------------

    async def started(self, utterance: UserUtterance, t: int, *, agent_speech: Callable[[], bool]) -> None:
        """An utterance began at ``t``; ``agent_speech`` says whether the agent audio playing is speech."""
        plan = utterance.plan
        if plan is not None:
            self._log.emit(EventType.USER_PLAN, "user", t, {"plan_id": plan.id, "speech_act": plan.speech_act,
                                                             "facts": list(plan.fact_ids), "floor_action": plan.floor_action})
        self._log.emit(EventType.USER_AUDIO_START, "user", t, {"text": utterance.text, "duration_ms": utterance.duration_ms,
                                                                "plan_id": plan.id if plan else None, **utterance.flags})
        if plan is not None and plan.speech_act in ("REVOKE", "DENY"):
            await self.effects.revoke(t)
        if utterance.flags.get("barge") or utterance.flags.get("backchannel"):
            self.deliveries.started(plan, onset_ms=t, duration_ms=utterance.duration_ms, floor=self._floor,
                                    speech=agent_speech())

    async def ended(self, utterance: UserUtterance, t: int) -> bool:
        """An utterance ended at ``t``; whether the user held the floor with it (a back-channel does not)."""
        plan = utterance.plan
        self._log.emit(EventType.USER_AUDIO_END, "user", t, {"text": utterance.text, "plan_id": plan.id if plan else None})
        # Approval takes effect when the user's "yes" has been heard, never at its onset.
        if plan is not None and plan.speech_act == "APPROVE":
            await self.effects.grant(t, plan.id)
        return not utterance.flags.get("backchannel")

    def start_due_overlays(self, t: int, *, agent_busy: bool) -> None:
        if self.channel.busy:
            return
        for plan in self.deliveries.due(t, self._floor, agent_busy=agent_busy):
            self._speak_plan(plan, overlay=True)

    # -- the user's turn ---------------------------------------------------------------------------

    def take_turn(self, t: int) -> str | None:
        """The user's turn at ``t``: its plans, else a recovery line; why the session ends, if it does."""
        heard, self._activity = self._activity, AgentActivity()
        obs = heard.observation(t, self.user.repetition_counts)
        plans = self._policy.turn_plans([*self._held_plans, *self._next_plans(obs, t)])
        self._held_plans = []
        if plans:
            self.turns += 1
            if self.turns > self._max_turns:
                return "max_turns"
            for plan in plans:
                self._speak_plan(plan)
            return None
        if self.user.done:
            return "flow_done"
        return self._recover(heard.acts, t)

    def _recover(self, last_acts: list[str], t: int) -> str | None:
        if self._closing_said:
            return "closing"
        decision = self.user.recover(last_acts)
        if decision.move is RecoveryMove.END or decision.text is None:
            return "nudges_exhausted"
        # A recovery line is a user turn too: --max-turns bounds a stalled agent's session.
        self.turns += 1
        if self.turns > self._max_turns:
            return "max_turns"
        payload = decision.user_plan_payload()
        if payload is not None:
            self._log.emit(EventType.USER_PLAN, "user", t, payload)
        if decision.move is RecoveryMove.RESTATE:
            self._speak(decision.text, recovered=True)
        elif decision.move is RecoveryMove.CLOSE:
            self._closing_said = True
            self._speak(decision.text, closing=True)
        else:
            self._speak(decision.text, nudge=True)
        return None

    def _next_plans(self, obs: Observation, t: int) -> list[UserPlan]:
        before = self.user.flow.current
        plans = self.user.next_plans(obs)
        if self.user.flow.current != before:
            self._log.emit(EventType.USER_STATE_TRANSITION, "user", t,
                           {"from_state": before, "to_state": self.user.flow.current})
        return plans

    def _speak(self, text: str, *, plan: UserPlan | None = None, **flags: bool) -> None:
        clip = self._clips[text]  # every speakable text was prepared before the clock started
        self.channel.enqueue(UserUtterance(pcm=clip.pcm, text=text, plan=plan, flags=flags))

    def _speak_plan(self, plan: UserPlan, *, overlay: bool = False) -> None:
        utterance = self.user.realize(plan)
        if utterance is None:
            self.fallbacks += 1
            self._log.emit(EventType.SIMULATOR_FALLBACK, "harness", self._clock.media_ms, {"user_plan_id": plan.id})
            return
        flags = {}
        if overlay:
            flags["backchannel" if plan.floor_action in CONTINUE_ACTIONS else "barge"] = True
        self._speak(utterance.text, plan=plan, **flags)
