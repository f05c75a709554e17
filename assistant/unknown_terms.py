"""Terms a question names that the library never mentions: "How do I import a MusicXML file into
LilyPond?" asked of manuals that say nothing of MusicXML.

A near-domain question shares most of its words with the library (LilyPond, import, file), so the
fitted decision scores it like an answerable one. What gives it away is one rare term that no chunk
holds. A term here is a word of an English question that is not ordinary English (not one whole
token of the bundled MiniLM's 30,522-piece English vocabulary: "musicxml", "sbuild", "vulkan" are
split into pieces, "phone" and "import" are not) and that the library holds neither as written, nor
as the start of a word (an inflection), nor one typo away with the same first letter ("densitiy",
"lillypond", "verison" are typos of library words; "pbuilder" is not "builder"). A word that is one
typo from an English word or joins two is ordinary ("superbowl"), unless the question writes it in
camel case: "MuseScore" names a product. A question with
such a term is not answered from the library: the trace says which term, and a user reads "your
documents never mention …".

In a German question only a name written in camel case counts ("eine MusicXML-Datei"): German
compounds ("Gitarrentabulaturen") are rarely written in the library as the question joins them, and
the word list is English. Not for short words (< 4 letters).
"""

from __future__ import annotations

import functools
import logging
import re
from bisect import bisect_left
from collections.abc import Sequence
from pathlib import Path

from rapidfuzz import process
from rapidfuzz.distance import OSA

from assistant.llm.words import CAMEL_NAME, STOP, WORD
from assistant.word_match import german

log = logging.getLogger(__name__)

MIN_LETTERS = 4
TYPO_ZIPF = 1.6  # a word English text writes at least this often is a word, not a typo ("jupyter" 1.65, "cirus" 1.2)
COMMON_ZIPF = 3.0  # … and this often, an ordinary English word even when the word list lacks it ("complicate" 3.3)


@functools.lru_cache(maxsize=1)
def common_words() -> frozenset[str]:
    """The whole words of the bundled MiniLM's English vocabulary (empty when it is not installed:
    then no term counts as unknown)."""
    try:
        from models.weights import minilm_path

        vocab = Path(minilm_path("sentence-transformers/all-MiniLM-L6-v2")) / "vocab.txt"
        words = vocab.read_text(encoding="utf-8").split()
    except Exception as exc:  # noqa: BLE001 - without the list the rule is off, never an error
        log.warning("no English word list for the unknown-term rule: %s", exc)
        return frozenset()
    return frozenset(w for w in words if w.isalpha() and not w.startswith("##"))


def known(word: str, vocabulary: Sequence[str]) -> bool:
    """`word` (lower-case) is in the sorted `vocabulary`, starts one of its words, or is one typo
    (optimal string alignment) from one of them with the same first letter."""
    i = bisect_left(vocabulary, word)
    if i < len(vocabulary) and vocabulary[i].startswith(word):
        return True
    if word.endswith("s") and known_exact(word[:-1], vocabulary):  # a plural of a library word
        return True
    lo = bisect_left(vocabulary, word[0])
    hi = bisect_left(vocabulary, word[0] + "\U0010ffff")
    near = [w for w in vocabulary[lo:hi] if abs(len(w) - len(word)) <= 1]
    return process.extractOne(word, near, scorer=OSA.distance, score_cutoff=1) is not None


def known_exact(word: str, vocabulary: Sequence[str]) -> bool:
    i = bisect_left(vocabulary, word)
    return i < len(vocabulary) and vocabulary[i].startswith(word)


def ordinary(word: str, common: frozenset[str]) -> bool:
    """An English word after all: two of the list's words of 4 letters or more joined ("superbowl",
    "wastewater"), a form of one ("classifies"), a word English text writes often (Zipf ≥
    `COMMON_ZIPF`), or one typo from a word of the list ("plaayer", "cirus") when it is rarely written
    itself (Zipf < `TYPO_ZIPF`): "Vulkan" and "Jupyter", in between, are names, not typos."""
    if any(word[:i] in common and word[i:] in common for i in range(4, len(word) - 3)):
        return True
    if any(base in common for base in _bases(word)):  # "classifies", "renderers": an English word's forms
        return True
    zipf = _zipf(word)
    if zipf >= COMMON_ZIPF:  # "complicate", "covid": English text writes it often
        return True
    if zipf >= TYPO_ZIPF:
        return False
    near = _by_length(common).get(len(word), ()) + _by_length(common).get(len(word) - 1, ()) + _by_length(common).get(len(word) + 1, ())
    return process.extractOne(word, near, scorer=OSA.distance, score_cutoff=1) is not None


def _bases(word: str) -> list[str]:
    """The forms an English inflection may come from ("classifies" → "classify", "renderers" → "renderer")."""
    out = []
    for suffix, repl in (("ies", "y"), ("ied", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"), ("er", ""), ("ers", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            out.append(word[: -len(suffix)] + repl)
    return out


def _zipf(word: str) -> float:
    """How often English text writes `word` (wordfreq's Zipf scale; 0 when unknown or not installed)."""
    try:
        from wordfreq import zipf_frequency
    except ImportError:  # the rule then forgives every typo, as without the frequencies
        return 0.0
    return float(zipf_frequency(word, "en"))


@functools.lru_cache(maxsize=1)
def _by_length(common: frozenset[str]) -> dict[int, tuple[str, ...]]:
    out: dict[int, list[str]] = {}
    for w in common:
        out.setdefault(len(w), []).append(w)
    return {n: tuple(ws) for n, ws in out.items()}


def unknown_terms(question: str, vocabulary: Sequence[str] | None, common: frozenset[str] | None = None) -> list[str]:
    """The question's rare terms that the library never mentions (none without a vocabulary or without
    the English word list; in a German question, only its camel-case names)."""
    if not vocabulary:
        return []
    names = list(dict.fromkeys(w.lower() for w in WORD.findall(question) if CAMEL_NAME.search(w)))  # in the question's order
    if german(question):  # only a product's name written in camel case ("eine MusicXML-Datei")
        return [w for w in names if len(w) >= MIN_LETTERS and w.isalpha() and not known(w, vocabulary)]
    common = common_words() if common is None else common
    if not common:
        return []
    out: list[str] = []
    for w in dict.fromkeys(WORD.findall(question.lower())):
        if len(w) < MIN_LETTERS or not w.isalpha() or w in STOP or w in common:
            continue
        # a name written in camel case ("MuseScore") is a name, even when its pieces are English words
        if not known(w, vocabulary) and (w in names or not ordinary(w, common)):
            out.append(w)
    return out


# a question whether something exists or a tool can do something: "is there an android app …?", "can the
# stylesheets turn my docbook into markdown?", "Gibt es LilyPond als App fürs iPad?"; not what the
# user may do ("can I still travel …?", "kann ich …"): that is asked in the user's words, not the library's
_ASKS_EXISTS = re.compile(
    r"^\s*(?:[^:?]{0,40}:\s*)?(is there|are there|can (?!i\b|we\b|you\b|one\b)\w+(?: \w+){0,3}? (?:open|read|"
    r"import|export|turn|convert|produce|make|run|create|write|output|use|handle|do)|"
    r"does \w+(?: \w+)? (?:have|support|offer)|do \w+ (?:have|support|offer)|gibt es|unterstützt)\b",
    re.I,
)


def absent_asked(question: str, vocabulary: Sequence[str] | None, evidence: Sequence[str] = ()) -> list[str]:
    """For a question whether something exists or can be done, the words of what it asks about
    that the library never mentions (up to an inflection or a typo, `known`), and the evidence does
    not write as two words ("countdown": "count down"). Any word counts, not only a rare one:
    whether there is an Android app is not answered by a manual that never says "Android"."""
    m = _ASKS_EXISTS.search(question)
    if not vocabulary or m is None:
        return []
    apart = " ".join(" ".join(e.lower().split()) for e in evidence)
    compounds = german(question)  # German joins what the library may write as parts ("Infozentrale")
    out = []
    for w in dict.fromkeys(WORD.findall(question[m.end() :].lower())):
        if len(w) < MIN_LETTERS or not w.isalpha() or w in STOP or known(w, vocabulary):
            continue
        if any(known(b, vocabulary) for b in _bases(w) + ([w[:-2]] if w.endswith("ly") else [])):
            continue  # "internationally", "renderers": a form of a library word
        if any(f"{w[:i]} {w[i:]}" in apart for i in range(3, len(w) - 2)):
            continue
        if compounds and any(_part(w[:i], vocabulary) and known(w[i:], vocabulary) for i in range(4, len(w) - 3)):
            continue
        out.append(w)
    return out


def _part(head: str, vocabulary: Sequence[str]) -> bool:
    """A German compound's first part, with or without its linking s ("Schwangerschafts-")."""
    return known(head, vocabulary) or (head.endswith("s") and known(head[:-1], vocabulary))
