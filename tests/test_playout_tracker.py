"""The playout estimate behind a provider's truncation: what is still playing, and at what cost."""

from harness.agents.providers.playout import PlayoutTracker

SECOND = 48_000  # bytes of one second of 24 kHz PCM16


def test_a_barge_in_finds_the_item_playing_after_thousands_that_played_out():
    playout = PlayoutTracker()
    for k in range(5000):
        playout.audio(f"old{k}", "r0", SECOND // 100, now_ms=k * 10)  # 10 ms each, played back to back
    playout.audio("now", "r1", SECOND, now_ms=60_000)
    assert playout.playing(60_500) == ("now", "r1", 500)
    assert playout._cursor == 5000  # the played-out items are behind the cursor: not scanned again
    playout.cleared(60_500)
    assert playout.playing(60_600) is None and playout.played_ms("now", 70_000) == 500


def test_more_audio_for_an_item_that_played_out_reopens_it_in_order():
    playout = PlayoutTracker()
    playout.audio("a", "r1", SECOND, now_ms=0)
    playout.audio("b", "r2", SECOND, now_ms=0)  # plays 1000–2000 ms
    assert playout.playing(1500) == ("b", "r2", 500)
    playout.report("a", 200)  # the runner says only 200 ms of "a" played: it is playing again
    assert playout.playing(1500) == ("a", "r1", 200)
    playout.cleared(1500)
    assert playout.playing(1600) is None
    assert (playout.played_ms("a", 9000), playout.played_ms("b", 9000)) == (200, 500)
