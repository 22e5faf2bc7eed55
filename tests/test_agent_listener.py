"""The listener fires each act in heard words once, as the words become heard."""

from __future__ import annotations

import re
from types import SimpleNamespace

from harness.session.agent_listener import AgentListener
from harness.session.deferred import DeferredWork
from harness.session.heard_speech import HeardSlice
from harness.user.act_observer import ObservedAct


class _Driver:
    def __init__(self) -> None:
        self.scanned: list[str] = []
        self.fired: list[tuple[int, list[str]]] = []
        self.user = SimpleNamespace(acts_in=self._acts_in)

    def _acts_in(self, text: str) -> list[ObservedAct]:
        self.scanned.append(text)
        return [ObservedAct("CONFIRM", "plan", "pattern") for _ in re.finditer(r"dental plan", text, re.I)]

    async def fire_events(self, t: int, *, act_keys: list[str]) -> None:
        self.fired.append((t, act_keys))


def _slices(text: str, cuts: list[int], *, window: int) -> list[HeardSlice]:
    """What ``HeardSpeech`` releases: each new part, with up to ``window`` characters before it."""
    out, heard = [], 0
    for cut in cuts:
        start = max(0, heard - window)
        out.append(HeardSlice("r0", None, text[start:cut], heard - start))
        heard = cut
    return out


async def test_an_act_split_across_slices_fires_once_when_its_last_word_is_heard() -> None:
    text = "I updated the dental plan. Your dental plan is the premium one, and the dental plan starts in May."
    ends = [m.end() for m in re.finditer("dental plan", text)]
    cuts = [ends[0] - 4, ends[0] + 1, ends[1] - 3, ends[1], ends[2] - 2, len(text)]
    for window in (256, 30):  # the whole item in every window, or a window that moves
        driver = _Driver()
        listener = AgentListener(driver, DeferredWork(wait_at_boundary=True), None, None)  # type: ignore[arg-type]
        for t, heard in enumerate(_slices(text, cuts, window=window)):
            await listener._observe_streaming(heard, t)
        assert driver.fired == [(1, ["CONFIRM:plan"]), (3, ["CONFIRM:plan"]), (5, ["CONFIRM:plan"])]
        if window == 256:  # each old part is the window before it, already scanned (and the first, "")
            assert len(driver.scanned) == len(cuts) + 1
