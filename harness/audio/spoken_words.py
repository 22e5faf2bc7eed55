"""Which of an agent's claimed words its played audio carries: a transcript aligned with an ASR of the audio.

The claim (the agent's transcript) and the evidence (local ASR of the samples that played) are
normalised the same way (lower case, no punctuation, numbers and amounts as words) and aligned
word by word. A claimed word is **carried** when the alignment matches it exactly. The recognizer
gets some words of real speech wrong (faster-whisper ``tiny.en`` misses about one word in six of
the espeak agent voice: "full name" heard as "phone name"), so where the evidence as a whole
agrees with the claim (at least ``MIN_AGREEMENT`` of its words matched), a short stretch of at
most ``MAX_GAP_WORDS`` claimed words *standing in the place of* other recognised words, between
matched ones, is carried too. A number is never carried that way: every word of it must be
recognised exactly, so one wrong digit in a right sentence is not heard (the words beside it are). A claimed word with no
recognised counterpart at all is not carried, and neither is anything of a claim the evidence
does not agree with (another sentence's audio under these words). The claim only places the
evidence; it never proves a word.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

__all__ = ["MAX_GAP_WORDS", "MIN_AGREEMENT", "Alignment", "align", "normalise", "word_spans"]

#: The share of claimed words (up to the evidence's reach) that must be recognised exactly before
#: any word is carried on its place alone. Measured on the demo suite's 90 agent lines in the espeak
#: agent voice (``benchmarks/bench_hearing.py``): an honest line agrees 0.5–1.0 (0.83 overall),
#: another line's audio under its words about 0.13.
MIN_AGREEMENT = 0.5
#: Longer stretches without a recognised word are not carried on their place.
MAX_GAP_WORDS = 4

_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
         "sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_ORDINAL = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
            "nine": "ninth", "twelve": "twelfth"}
_NUMBER = re.compile(r"\$?\d[\d,]*(?:\.\d+)?(?:st|nd|rd|th)?")
_NUMBER_WORDS = frozenset(
    [*_ONES, *_TENS[2:], "hundred", "thousand", "million", "point", "oh", *_ORDINAL.values()]
    + [w + "th" for w in _ONES[4:] if w not in ("five", "eight", "nine", "twelve")]
    + [t[:-1] + "ieth" for t in _TENS[2:]]
)


def _cardinal(n: int) -> str:
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else " " + _ONES[n % 10])
    for size, word in ((1_000_000_000, "billion"), (1_000_000, "million"), (1000, "thousand"), (100, "hundred")):
        if n >= size:
            rest = n % size
            return f"{_cardinal(n // size)} {word}" + (f" {_cardinal(rest)}" if rest else "")
    raise AssertionError(n)


def _ordinal(words: str) -> str:
    head, _, last = words.rpartition(" ")
    if last in _ORDINAL:
        last = _ORDINAL[last]
    elif last.endswith("y"):
        last = last[:-1] + "ieth"
    else:
        last += "th"
    return f"{head} {last}".strip()


#: Ordinal words and the cardinal each is said as a number of.
_CARDINAL_OF = {_ordinal(word): word for word in [*_ONES[1:], *_TENS[2:]]}


def _spell(match: re.Match[str]) -> str:
    token = match.group(0)
    dollars = token.startswith("$")
    number = token.lstrip("$").rstrip("stndrh").replace(",", "")
    whole, _, fraction = number.partition(".")
    if len(whole) > 12:  # a digit string, not an amount: say it digit by digit
        words = " ".join(_ONES[int(d)] for d in whole)
    else:
        words = _cardinal(int(whole or "0"))
    if fraction:
        words += " point " + " ".join(_ONES[int(d)] for d in fraction)
    return f" {words} dollars " if dollars else f" {words} "


def normalise(text: str) -> list[str]:
    """Lower-case words without punctuation, numbers and amounts spelled out ("$1,500" → one thousand
    five hundred dollars), ordinals as cardinals ("12th", "twelfth" → twelve: recognizers write "May
    12" for "May twelfth")."""
    text = _NUMBER.sub(_spell, text.lower().replace("-", " "))
    words = re.sub(r"[^a-z' ]+", " ", text).replace("'", "").split()
    return [_CARDINAL_OF.get(word, word) for word in words]


def word_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each whitespace-separated word of ``text``."""
    return [m.span() for m in re.finditer(r"\S+", text)]


@dataclass(frozen=True, slots=True)
class Alignment:
    """Per claimed word: carried by the audio or not; and how far the evidence reached.

    ``reached`` is the number of claimed words up to the last one matched exactly: words after it
    may still be carried by audio not yet recognised, so only a final alignment settles them.
    """

    carried: tuple[bool, ...]
    reached: int
    #: Share of the claimed words (up to ``reached``) the evidence matched exactly.
    agreement: float

    @property
    def mismatched(self) -> int:
        """Claimed words, among those the evidence reached, that the audio does not carry."""
        return sum(not c for c in self.carried[: self.reached])


def align(claimed: list[str], heard: str, *, final: bool) -> Alignment:
    """Which ``claimed`` words (as the agent wrote them) the recognised ``heard`` text carries.

    ``final``: the evidence is all there is (the response is over): claimed words after the last
    match are settled as not carried rather than left for later audio.
    """
    tokens: list[str] = []
    owner: list[int] = []
    for index, word in enumerate(claimed):
        for token in normalise(word):
            tokens.append(token)
            owner.append(index)
    evidence = normalise(heard)
    token_ok = [False] * len(tokens)
    last_match = -1
    gaps: list[tuple[int, int]] = []
    matcher = difflib.SequenceMatcher(a=tokens, b=evidence, autojunk=False)
    for tag, a0, a1, _, _ in matcher.get_opcodes():
        if tag == "equal":
            token_ok[a0:a1] = [True] * (a1 - a0)
            last_match = a1 - 1
        elif tag == "replace" and a1 - a0 <= MAX_GAP_WORDS:
            gaps.append((a0, a1))
    considered = len(tokens) if final else last_match + 1
    matched = sum(token_ok[:considered])
    agreement = matched / considered if considered else 0.0
    if agreement >= MIN_AGREEMENT:
        for a0, a1 in gaps:
            if a1 <= considered:
                for index in range(a0, a1):
                    token_ok[index] = tokens[index] not in _NUMBER_WORDS  # a number is never taken on its place
    carried = [True] * len(claimed)
    has_token = [False] * len(claimed)
    for ok, index in zip(token_ok, owner, strict=True):
        has_token[index] = True
        carried[index] = carried[index] and ok
    # A word with no letters or digits ("—", "&") stands or falls with the word before it.
    for index in range(len(claimed)):
        if not has_token[index]:
            carried[index] = carried[index - 1] if index else False
    if final or not tokens:
        reached = len(claimed)
    else:
        reached = owner[last_match] + 1 if last_match >= 0 else 0
    # Nothing after the evidence's reach counts as carried yet.
    return Alignment(tuple(c and i < reached for i, c in enumerate(carried)), reached, round(agreement, 4))
