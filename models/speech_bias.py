"""Which of the library's terms a recognition pass is given, and how (faster-whisper's `hotwords`
or `initial_prompt`).

Both go into the decoder's prompt, which holds about 224 tokens, so a pass gets the terms that fit
`speech.bias.max_tokens`, in this order: first the terms that look like words already heard (the
hint: an earlier pass's text; "PS to edit" → "pstoedit", "a psi" → "asy", "fresco Baldi" →
"Frescobaldi": `matching_terms` compares one to three words heard with each term by spelling —
letters and digits only — and by sound — eSpeak NG's phonemes, through the phonemizer Piper
bundles), then the library's best terms (the vocabulary's order). The terms only bias the decoder: a term not spoken is not written,
which the bench checks on speech about other things (`bench/spoken_terms.py`).
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from models.settings import BiasSettings

log = logging.getLogger(__name__)
_NON_ALNUM = re.compile(r"[\W_]+", re.UNICODE)
_WORDS = re.compile(r"[\w'\\.-]+", re.UNICODE)
_WORD_SPANS = re.compile(r"[\w'.-]+", re.UNICODE)  # a word as heard, with its inner hyphens and dots
MIN_KEY = 4  # a term shorter than this (spelled) is never matched by its spelling ("asy": by its sound)
_FAMILY = re.compile(r"(?:\d+|s)$")  # a numbered or plural variant of another term
EVERYDAY_ZIPF = 3.0  # a word heard this common in English is kept as heard ("scoring", "melody")
ACRONYM_SLIPS = 2  # letters heard wrong in a spelled-out name ("ANCDXT" for AMC-TXT: M/N, T/D sound alike)
_CAPS_WORD = re.compile(r"^[A-Z][A-Z0-9-]{3,}$")
_DOTTED = re.compile(r"^(?:[A-Z]\.){2,}$")  # "F.O.", "P.D.F.": capital letters said one by one
JOIN_LETTERS = 6  # words heard apart are written as one term only when they spell this many letters ("in it" ≠ "init")
MIN_SOUND = 3  # phonemes a term or words need to be matched by sound
_NOT_SOUND = re.compile(r"[ˈˌːʲ\s,.;:!?'\-]+")  # stress, length and pauses: not what tells words apart
# how a one-letter name is heard as a word ("an R session" → "an our session")
LETTER_SOUNDS = {"our": "R", "are": "R", "see": "C", "sea": "C", "bee": "B", "jay": "J", "kay": "K",
                 "queue": "Q", "cue": "Q", "tea": "T", "tee": "T"}  # fmt: skip


@dataclass(frozen=True)
class Bias:
    """What one pass is given."""

    hotwords: str | None
    initial_prompt: str | None
    terms: tuple[str, ...]  # in the order given
    hinted: tuple[str, ...] = ()  # of those, the terms matched to the words heard

    def kwargs(self, prefixed: bool = False) -> dict[str, str]:
        """faster-whisper's keyword arguments. A pass with a prefix ignores `hotwords`, so there
        they are given as the prompt."""
        out = {}
        if self.hotwords and not prefixed:
            out["hotwords"] = self.hotwords
        prompt = self.initial_prompt or (self.hotwords if prefixed else None)
        if prompt:
            out["initial_prompt"] = prompt
        return out


def spelled(text: str) -> str:
    """A term or phrase as letters and digits only, lower-cased ("\\tieUp" → "tieup")."""
    return _NON_ALNUM.sub("", text).lower()


def sound(text: str) -> str | None:
    """How eSpeak NG (American English) says `text`, as phonemes without stress or pauses; None
    when Piper's phonemizer is not installed. It shares Piper's lock: the phonemizer is one global."""
    try:
        import piper.voice as pv  # noqa: PLC0415
        from piper.phonemize_espeak import EspeakPhonemizer  # noqa: PLC0415

        with pv._ESPEAK_PHONEMIZER_LOCK:
            if pv._ESPEAK_PHONEMIZER is None:
                pv._ESPEAK_PHONEMIZER = EspeakPhonemizer(pv.ESPEAK_DATA_DIR)
            said = pv._ESPEAK_PHONEMIZER.phonemize("en-us", text.replace("_", " ").replace("\\", " "))
    except Exception:  # noqa: BLE001 - matching by spelling goes on
        log.debug("no phonemizer", exc_info=True)
        return None
    return _NOT_SOUND.sub("", "".join("".join(part) for part in said))


class TermIndex:
    """The library's terms, their spellings and sounds, for matching words heard."""

    def __init__(self, terms: Sequence[str]) -> None:
        self.terms = tuple(terms)
        self.keys: dict[str, str] = {}
        for t in self.terms:
            key = spelled(t)
            if len(key) >= MIN_KEY:
                self.keys.setdefault(key, t)
        self._key_list = list(self.keys)  # matched by spelling (one-letter names by their sound only)
        self._acronyms = [k for k, t in self.keys.items() if _CAPS_WORD.match(t)]  # "AMC-TXT", "UTF-8"
        self.letters = {t for t in self.terms if len(t) == 1 and t.isupper()}
        # capitals-only names of any length, for letters heard one by one ("F.O." → "FO")
        self._caps = {t.lower(): t for t in self.terms if len(t) >= 2 and t.isalpha() and t.isupper()}
        for letter in self.letters:
            self.keys.setdefault(letter.lower(), letter)
        self.rank = {t: i for i, t in reversed(list(enumerate(self.terms)))}  # the vocabulary's order
        self.sounds: dict[str, str] = {}  # phonemes → term (~0.25 ms a term)
        for t in self.terms:
            said = sound(t) if len(t) > 1 else None
            if said is not None and len(said) >= MIN_SOUND:
                self.sounds.setdefault(said, t)
        self._sound_list = list(self.sounds)

    def matching_terms(self, text: str, min_ratio: float, limit: int, nonword_ratio: float | None = None) -> list[str]:
        """Terms whose spelling or sound is within `min_ratio` (rapidfuzz ratio, 0-100) of one to
        three consecutive words of `text`, or a one-letter name a word of `text` sounds like ("our":
        "R"); best match first, then the vocabulary's order; a term already written is left out.
        Words holding one no English word list has ("Asimptope", "lilycont": Whisper unsure of what it
        heard) need only `nonword_ratio` (default: `min_ratio`)."""
        if not text or not self._key_list:
            return []
        from rapidfuzz import fuzz, process  # noqa: PLC0415

        words = _WORDS.findall(text)
        written = {spelled(w) for w in words}
        found: dict[str, float] = {}
        for w in words:  # a one-letter name heard as a word that sounds like it
            letter = LETTER_SOUNDS.get(w.lower())
            if letter in self.letters and letter not in words:
                found[letter.lower()] = 100.0
        by_sound: dict[str, float] = {}
        odd = [nonword_ratio is not None and spelled(w) not in self.keys and _nonword(w) for w in words]
        for n in (1, 2, 3):
            for i in range(len(words) - n + 1):
                phrase = words[i : i + n]
                cutoff = min(min_ratio, nonword_ratio) if nonword_ratio is not None and any(odd[i : i + n]) else min_ratio
                query = spelled("".join(phrase))
                if len(query) >= MIN_KEY:
                    for key, score, _ in process.extract(
                        query, self._key_list, scorer=fuzz.ratio, score_cutoff=cutoff, limit=3
                    ):
                        if key not in written:
                            found[key] = max(found.get(key, 0.0), float(score))
                said = sound(" ".join(phrase)) if self._sound_list else None
                if said is not None and len(said) >= MIN_SOUND:
                    for key, score, _ in process.extract(
                        said, self._sound_list, scorer=fuzz.ratio, score_cutoff=cutoff, limit=3
                    ):
                        term = self.sounds[key]
                        if spelled(term) not in written:
                            by_sound[term] = max(by_sound.get(term, 0.0), float(score))
        scored = {self.keys[k]: v for k, v in found.items()}
        for term, score in by_sound.items():
            scored[term] = max(scored.get(term, 0.0), score)
        chosen: list[str] = []
        stems: set[str] = set()
        for term in sorted(scored, key=lambda t: (-scored[t], self.rank.get(t, len(self.rank)))):
            stem = _FAMILY.sub("", spelled(term))  # "block2", "block3": one family, one slot
            if stem not in stems:
                stems.add(stem)
                chosen.append(term)
        return chosen[:limit]


    def write(self, text: str) -> str:
        """`text` with the words that spell one of the terms written as the library writes it: one
        word whose letters and digits are the term's ("AMCTXT", "post-inst" → "AMC-TXT", "postinst"),
        or two or three that together are, for a name written with capitals inside ("lily pond" →
        "LilyPond", "DEB build options" → "DEB_BUILD_OPTIONS"); a word heard as capitals a few letters
        from one of the library's capitals-only names (`_acronym_heard`); and capitals heard one by
        one ("F.O.") that spell one of them ("FO"). Otherwise only spelling, never
        sound: what was heard is kept, its spacing and punctuation are the library's. Ordinary words stay as heard:
        "melody" is not LilyPond's "\\melody", nor "line width" Asymptote's "linewidth"."""
        if not text or not self.keys:
            return text
        words = list(_WORD_SPANS.finditer(text))
        out: list[str] = []
        pos = i = 0
        while i < len(words):
            for n in (3, 2, 1):
                span = words[i : i + n]
                if len(span) < n or (n > 1 and not all(text[a.end() : b.start()] == " " for a, b in zip(span, span[1:], strict=False))):
                    continue
                key = spelled("".join(w.group() for w in span))
                term = self.keys.get(key) if len(key) >= (JOIN_LETTERS if n > 1 else MIN_KEY) else None
                if term is not None and len(term) > 1 and spelled(term) == key and _rewritable(span[0].group(), term, n):
                    start, end = span[0].start(), span[-1].end()
                    lead = len(span[0].group()) - len(span[0].group().lstrip("'.-"))
                    tail = len(span[-1].group()) - len(span[-1].group().rstrip("'.-"))
                    out.append(text[pos : start + lead] + term)
                    pos = end - tail
                    i += n
                    break
            else:
                word = words[i].group()
                term = self._acronym_heard(word)
                if term is None and _DOTTED.match(word):  # "in F.O. output": letters heard one by one
                    term = self._caps.get(word.replace(".", "").lower())
                    if term is not None and text[words[i].end() :].strip() == "":
                        term += "."  # its last dot also ended the sentence
                if term is not None:
                    out.append(text[pos : words[i].start()] + term)
                    pos = words[i].end()
                i += 1
        return "".join(out) + text[pos:]

    def _acronym_heard(self, word: str) -> str | None:
        """The library's one capitals-only name that `word`, letters heard as capitals and not a term
        itself, is at most `ACRONYM_SLIPS` letters from ("ANC-KXT", "MCDXT" → "AMC-TXT"): spelled-out
        letters are the words Whisper mishears most, and capitals say it heard letters."""
        if not _CAPS_WORD.match(word) or not self._acronyms:
            return None
        key = spelled(word)
        if key in self.keys:
            return None
        from rapidfuzz.distance import OSA  # noqa: PLC0415

        near = [k for k in self._acronyms if abs(len(k) - len(key)) <= 1 and OSA.distance(key, k) <= ACRONYM_SLIPS]
        return self.keys[near[0]] if len(near) == 1 else None


def _english_zipf(word: str) -> float | None:
    """How often English text writes `word` (wordfreq's Zipf scale, 0 for a word it never saw);
    None without wordfreq, and then no rule that asks trusts a word list."""
    try:
        from wordfreq import zipf_frequency  # noqa: PLC0415
    except ImportError:
        return None
    return float(zipf_frequency(word.lower(), "en"))


def _nonword(word: str) -> bool:
    """A word of letters that no English word list has ("Asimptope"; not "x11"). The caller leaves
    out a word that spells a term ("LilyPond" heard right)."""
    w = word.strip("'.-")
    if len(w) < MIN_KEY or not w.replace("-", "").isalpha():
        return False
    return all(_english_zipf(part) == 0.0 for part in w.split("-") if part)


_NAME = re.compile(r"[a-z][A-Z]|[A-Z]{2}")  # "LilyPond", "AMC-TXT", "DEB_BUILD_OPTIONS": a name, not words


def _rewritable(first: str, term: str, n: int) -> bool:
    """Whether heard words may be written as `term`: words joined only into a name with capitals
    inside; one word only when it is not an everyday English word (Zipf < `EVERYDAY_ZIPF`)."""
    if n > 1:
        return _NAME.search(term) is not None
    if not term[:1].isalnum() and first.isalpha():
        return False  # "clef" said is a word, not LilyPond's command "\\clef"
    zipf = _english_zipf(first)
    return zipf is not None and zipf < EVERYDAY_ZIPF


def writes_new_term(before: str, after: str, terms: Sequence[str]) -> bool:
    """Whether `after` writes one of `terms` (its letters and digits, as whole words) that `before`
    does not: only then is a second pass worth more than the first."""
    old, new = _tokens(before), _tokens(after)
    return any(_contains(new, t) and not _contains(old, t) for t in map(_tokens, terms))


TERM_WORDS = 3  # words heard that one term may stand for ("PS to edit" → "pstoedit")
_CAMEL_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def keeps_the_rest(before: str, after: str, terms: Sequence[str]) -> bool:
    """Whether `after` still says what `before` said besides the terms it writes anew: aligned word
    by word, at most one of `before`'s words is dropped or becomes words that are no new term. A
    pass given a term can write the term alone ("What does dpkg Shlip Bet stew?" → "dpkg-shlibdeps",
    "What port goes into MSNTPRC …" → "msmtprc …"): then the first pass stands."""
    old, new = _tokens(before), _tokens(after)
    fresh = [(t, max(TERM_WORDS, len(_CAMEL_PARTS.findall(term)))) for term in terms
             if _contains(new, t := _tokens(term)) and not _contains(old, t)]  # fmt: skip
    lost = 0
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op in ("delete", "replace"):
            # a new term stands for up to TERM_WORDS words heard ("PS to edit"), or its parts ("two voices per staff")
            held = sum(span for t, span in fresh if _contains(new[j1:j2], t))
            lost += max(0, (i2 - i1) - (j2 - j1) - (held - 1 if held else 0))
    return lost <= 1


def _tokens(text: str) -> list[str]:
    return [t for t in _NON_ALNUM.split(text.lower()) if t]


def _contains(hay: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(hay[i : i + n] == needle for i in range(len(hay) - n + 1))


def choose_bias(
    index: TermIndex, settings: BiasSettings, count_tokens: Callable[[str], int], hint: str | None = None
) -> Bias | None:
    """The terms of one pass within the token budget, hint-matched ones first; None when off."""
    if settings.mode == "off" or not index.terms:
        return None
    hinted = index.matching_terms(hint or "", settings.hint_min_ratio, settings.hint_terms,
                                  settings.hint_nonword_ratio) if hint else []  # fmt: skip
    chosen: list[str] = []
    used = 0
    seen: set[str] = set()
    for term in [*hinted, *index.terms[: settings.max_terms]]:
        if term in seen:
            continue
        cost = count_tokens(term) + (1 if chosen else 0)  # the ", " between terms
        if used + cost > settings.max_tokens:
            if term in hinted:
                continue
            break
        chosen.append(term)
        seen.add(term)
        used += cost
    if not chosen:
        return None
    text = ", ".join(chosen)
    hot = text if settings.mode in ("hotwords", "both") else None
    prompt = text if settings.mode in ("prompt", "both") else None
    return Bias(hot, prompt, tuple(chosen), tuple(t for t in hinted if t in seen))
