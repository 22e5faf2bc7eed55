"""What the fitted-window decoding keeps of Whisper's text: repeats of words already heard are dropped."""

from harness.audio.agent_asr import drop_repeats


def test_whisper_going_round_again_is_dropped():
    assert drop_repeats(["Let me read that back.", "Let"]) == ["Let me read that back."]
    assert drop_repeats(["May 14th.", "May 14th"]) == ["May 14th."]
    assert drop_repeats(["What's your policy number?", "What"]) == ["What's your policy number?"]
    assert drop_repeats(["in that order,", "in that order,", "in t"]) == ["in that order,"]


def test_new_words_are_kept_even_after_a_repeat():
    pieces = ["Thank you,", "Ms. Varga Holloway.", "Thank you,", "I have your policy up."]
    assert drop_repeats(pieces) == ["Thank you,", "Ms. Varga Holloway.", "I have your policy up."]


def test_pieces_without_words_are_dropped_and_the_rest_stripped():
    assert drop_repeats([" $ ", "", " 30,000 boxes. "]) == ["30,000 boxes."]


def test_a_repeat_never_adds_words():
    """Whatever the pieces, what is kept is a sub-list of them: dropping cannot credit an agent."""
    pieces = ["yes,", "yes,", "of course.", "Of course", "the claim is open."]
    kept = drop_repeats(pieces)
    assert kept == ["yes,", "of course.", "the claim is open."]
    assert all(piece in [p.strip() for p in pieces] for piece in kept)
