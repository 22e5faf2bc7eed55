"""spoken_words: which claimed words the recognised words of the played audio carry."""

from __future__ import annotations

from harness.audio.spoken_words import MAX_GAP_WORDS, align, normalise

CLAIM = "Let me read that back: your health FSA election is 1,500 dollars for the year, which works out to 62.50 per paycheck."


def _carried(claim: str, heard: str, *, final: bool = True) -> list[str]:
    words = claim.split()
    return [w for w, ok in zip(words, align(words, heard, final=final).carried, strict=True) if ok]


def test_numbers_amounts_and_ordinals_are_compared_as_words():
    assert normalise("$1,500 on May 12th, 62.50") == normalise("1500 dollars on May twelfth, sixty-two point five zero")
    assert normalise("Q-88412") == ["q", "eighty", "eight", "thousand", "four", "hundred", "twelve"]


def test_the_same_words_recognised_are_all_carried():
    heard = "Let me read that back. Your health FSA election is $1,500 for the year, which works out to 62.50 per paycheck."
    assert _carried(CLAIM, heard) == CLAIM.split()


def test_a_few_misrecognised_words_between_recognised_ones_are_carried_when_the_whole_agrees():
    heard = "Let me read that Mac. Your health FFA election is $1,500 for the year, which works out to 62.50 per page check."
    assert _carried(CLAIM, heard) == CLAIM.split()


def test_one_wrong_number_in_a_right_sentence_is_not_carried_and_the_rest_is():
    heard = "Let me read that back. Your health FSA election is $1,900 for the year, which works out to 62.50 per paycheck."
    words = CLAIM.split()
    assert _carried(CLAIM, heard) == [w for w in words if w != "1,500"]


def test_a_claimed_word_with_no_recognised_counterpart_is_not_carried():
    heard = "Let me read that back. Your health FSA election is $1,500 for the year, which works out to 62.50 per paycheck."
    claim = CLAIM.replace("election is", "election is not")
    assert "not" not in _carried(claim, heard)


def test_other_words_under_the_claim_carry_nothing_on_their_place():
    heard = "The river ran past the old mill where the children fed the ducks each summer morning and the baker sold rolls."
    carried = _carried(CLAIM, heard)
    assert align(CLAIM.split(), heard, final=True).agreement < 0.3
    assert set(carried) <= {"the"}  # only words the other speech really has


def test_a_long_stretch_is_not_carried_on_its_place():
    claim = "Please confirm that you approve the release of the repair order today"
    heard = "Please confirm that we will never ever send any order today"
    carried = _carried(claim, heard)
    gap = "you approve the release of the repair".split()
    assert len(gap) > MAX_GAP_WORDS and not set(gap) & set(carried)


def test_words_after_the_last_recognised_one_wait_for_more_audio_until_the_response_is_over():
    words = CLAIM.split()
    partial = align(words, "Let me read that back. Your health FSA", final=False)
    assert partial.reached == 8 and all(partial.carried[:8]) and not any(partial.carried[8:])
    assert align(words, "Let me read that back. Your health FSA", final=True).reached == len(words)
