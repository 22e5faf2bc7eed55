"""What the decoding keeps of Whisper's text: repeats of words already heard, and the fragments of
words broken off, are dropped."""

from harness.audio.agent_asr import drop_false_starts, drop_repeats


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


def test_a_repeat_misheard_the_second_time_is_still_a_repeat():
    """From a bot's read-back over a phone line: the repeat's "red" broke the user's read-back pattern."""
    assert drop_repeats(["Let me read that back.", "Let me red that back", "The incident happened on Thursday."]) == [
        "Let me read that back.", "The incident happened on Thursday."]
    assert drop_repeats(["I've changed it to $1,200 for the year.", "I've change it to 1,200 dollars"]) == [
        "I've changed it to $1,200 for the year."]
    assert drop_repeats(["which is $50 per paycheck,", "which is 50 dollars per paycheck"]) == ["which is $50 per paycheck,"]


def test_new_words_that_begin_like_earlier_ones_are_kept():
    pieces = ["Your dental plan is the PPO.", "Your vision plan is the basic one.", "Yes.", "Yes, of course I will."]
    assert drop_repeats(pieces) == pieces


def test_a_repeat_spanning_several_earlier_pieces_is_dropped():
    """Pipecat bot run, a whole response heard at once: the opening question came round again."""
    pieces = ["To start,", "could I have your full name and your employee ID?", "To start could I of your full-name and"]
    assert drop_repeats(pieces) == pieces[:2]


def test_a_false_start_is_dropped():
    """From the Pipecat bot's retro over a phone line: "the s- summary" broke the read-back pattern."""
    assert drop_false_starts("Let me read back the s- summary.") == "Let me read back the summary."
    assert drop_false_starts("I- I think so, th- That's right") == "I think so, That's right"


def test_a_hyphen_before_another_word_is_not_a_false_start():
    """From the oracle's negotiation: Whisper writes "net 45" as "net- 45"; "net" was said."""
    assert drop_false_starts("the counter-offer with net- 45 terms") == "the counter-offer with net- 45 terms"
    assert drop_false_starts("at f- 53 cents, s-") == "at f- 53 cents, s-"


def test_words_with_hyphens_are_kept():
    text = "Schedule a follow-up on the X-ray, e-mail it, and call 555-0100 - today."
    assert drop_false_starts(text) == text
