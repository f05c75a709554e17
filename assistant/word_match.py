"""Tolerant word matching for the answerability features: is a question's word in a text, or in
the library at all, allowing for a typo, an inflection or a compound?

A typed or transcribed question misspells names ("Beriods" for "beroids", "Quaranäne"), and German
joins words ("Corona" in "Coronavirus", "Masken" in "Gesichtsmasken"): an exact match counts those
words as missing, and the question looks out of scope. Words are the stems of
`assistant.llm.extractive.content_words`.

- `in_bag`: the word itself, a typo of it (optimal string alignment distance ≤ 1 from 4 letters,
  ≤ 2 from 8), or a compound part (one word ends or starts with the other, both ≥ `PART` letters);
- `in_library`: the same against the library's sorted word list (`Retrieval.vocabulary`, every
  lower-cased word of every chunk): a library word starting with the stem (an inflection), or a
  typo sharing the first letter (the list is searched by prefix, so a lookup stays cheap at any
  library size).
- `strict` (a German question, `german`): a typo only from 5 letters and with the same first letter.
  The light English stemmer leaves German stems short and inflected, and those sit one edit from
  unrelated words ("ball" / "all", "letzt" / "setzt", "wollt" / "sollt", "best" / "test"): on the
  dev sets' fit half, a question about something else then matched a FAQ chunk by such words.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence

from rapidfuzz import process
from rapidfuzz.distance import OSA

from assistant.llm.words import WORD

PART = 6  # letters: a shorter word inside another is a coincidence ("rat" in "separate"), not a part
# function words of one language and not the other: which language a question is in (`german`)
GERMAN_MARKERS = frozenset("""der die das den dem des ein eine einer eines einem einen und oder ist sind war waren
    wird werden wurde wurden hat haben hatte ich wir sie er es welche welcher welches welchen welchem wer wen
    wem wann wo warum wie nicht kein keine auch nur noch bei nach um über unter vor durch gibt gab sich man
    kann können muss soll darf im am auf mit für aus von zu zum zur vom beim ins""".split())
ENGLISH_MARKERS = frozenset("""the and or of to is are were be been do does did has have had what which who
    whom whose when where why how not can could would should will may might there this that these those with
    from for by on at a it its""".split())


def german(text: str) -> bool:
    """Whether `text` has more German than English function words."""
    words = WORD.findall(text.lower())
    return sum(w in GERMAN_MARKERS for w in words) > sum(w in ENGLISH_MARKERS for w in words)


def typos_allowed(word: str, strict: bool = False) -> int:
    return 0 if len(word) < (5 if strict else 4) else (1 if len(word) < 8 else 2)


def in_bag(word: str, bag: set[str], words: Sequence[str] | None = None, strict: bool = False) -> bool:
    """Whether `word` (a stem) is in `bag` (a text's stems) up to a typo or a compound part;
    `words`: the same bag as a sequence (passed when matching many words against one bag);
    `strict`: the German typo rule (see the module docstring)."""
    if word in bag:
        return True
    listed = words if words is not None else list(bag)
    k = typos_allowed(word, strict)
    near = [w for w in listed if w[:1] == word[:1]] if strict and k else listed
    if k and process.extractOne(word, near, scorer=OSA.distance, score_cutoff=k) is not None:
        return True
    if len(word) >= PART:
        return any(
            len(w) >= PART and (w.endswith(word) or word.endswith(w) or w.startswith(word) or word.startswith(w))
            for w in listed
        )
    return False


def covered(question: Iterable[str], bag: set[str], strict: bool = False) -> set[str]:
    """The question's stems that `bag` holds (`in_bag`)."""
    listed = list(bag)
    return {w for w in question if in_bag(w, bag, listed, strict)}


def in_library(word: str, vocabulary: Sequence[str]) -> bool:
    """Whether the library's sorted word list holds `word` (a stem), a word it starts (an
    inflection: "warschau" → "warschaus"), or a typo of it with the same first letter."""
    if not word:
        return False
    i = bisect_left(vocabulary, word)
    if i < len(vocabulary) and vocabulary[i].startswith(word):
        return True
    k = typos_allowed(word)
    if not k:
        return False
    lo = bisect_left(vocabulary, word[0])
    hi = bisect_left(vocabulary, word[0] + "\U0010ffff")
    near = [w for w in vocabulary[lo:hi] if abs(len(w) - len(word)) <= k]
    return process.extractOne(word, near, scorer=OSA.distance, score_cutoff=k) is not None
