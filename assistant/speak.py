"""Spoken answers: cut streamed text into pieces and speak each one as soon as it is complete.

`SentenceSplitter.feed(chunk)` returns the pieces completed by that chunk, ready for a voice
(`assistant.speech_text.for_speech`: no citation markers, markdown or URLs; abbreviations, currency,
years… written out); `.flush()` returns the rest at the end.

The first piece of an answer is its first clause, so speech starts early: it ends at a comma,
semicolon, colon or dash once it has `min_clause_words` words, or after about `first_clause_words`
words (at the next word that does not lean on the following one: not "the", "of", a number or an
abbreviation), or at the end of the first sentence if that comes sooner; a first sentence shorter
than `min_clause_words` ("Yes.") is followed by another first clause. Later pieces are whole
sentences: a sentence ends at . ! ? (or …) followed by white space, or at a line break; not after
abbreviations ("e.g.", "Dr."), initials ("J. Austen"), decimals ("3.5") or list numbers ("1.").
A boundary is decided only once the character after it has arrived, so the chunking of the stream
never changes the result.

`speak_stream(tokens, synthesiser)` yields `(sample_rate, int16 samples)` for each piece while the
tokens are still arriving: the first clause is heard before the answer has finished.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from typing import Protocol

import numpy as np

from assistant.speech_text import citation_span, clean, for_speech
from models.runtime.errors import HarkError

log = logging.getLogger(__name__)

# never the end of a sentence (titles, Latin abbreviations)
NEVER_END = {
    "mr", "mrs", "ms", "dr", "prof", "st", "sr", "jr", "rev", "gen", "col", "lt", "sgt", "capt", "hon",
    "e.g", "i.e", "eg", "ie", "vs", "cf", "approx", "fig", "figs", "ca", "incl", "dept",
    "vol", "p", "pp", "ch", "sec", "al",
}  # fmt: skip
# the end of a sentence only when a capital letter follows ("etc. The …"; "3 p.m. Then …")
MAYBE_END = {"etc", "a.m", "p.m", "inc", "ltd", "co", "corp", "u.s", "u.k", "e.u"}

_TERMINATORS = ".!?…"
_CLOSERS = "\"')]}”’»*_"
_CITATION_PREFIX = re.compile(r"\[\^?[\d,;–\s-]*$")
_CANDIDATE = re.compile(r"[.!?…]+|\n")
_SOFT_BREAK = re.compile(r"[,;:]\s|\s[–—-]\s")
_WORD = re.compile(r"\S+")
# a first clause cut by word count never ends on one of these ("the notice period of | the …")
_FUNCTION_WORDS = {
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "with", "from", "and", "or", "but",
    "is", "are", "was", "were", "be", "been", "has", "have", "had", "will", "would", "can", "could",
    "may", "must", "should", "not", "no", "your", "you", "its", "it", "their", "this", "that", "these",
    "those", "as", "than", "if", "so", "per", "about", "into", "over", "under", "after", "before",
    "which", "who", "whose", "where", "when", "my", "our", "his", "her", "i", "we", "they", "he", "she",
}  # fmt: skip
# a first clause may end early right before one of these: they open a phrase of their own
# ("the deposit is returned | within thirty days"); not "to" ("wants | to go"), articles ("must
# give | the landlord") or "per" (a unit: "950 euros per month")
_PHRASE_STARTS = {
    "in", "on", "at", "for", "by", "with", "within", "from", "of", "after", "before", "during",
    "until", "since", "under", "over", "into", "about", "between", "through", "without",
    "across", "against", "among", "around", "behind", "beyond", "near", "toward", "towards", "upon",
    "via", "unless", "because", "although", "though", "while", "whereas", "if", "when", "where",
    "which", "who", "whose", "and", "or", "but", "so",
}  # fmt: skip
# from `determiner_words` words a first clause may also end right before an article or another
# determiner, which opens a noun phrase, when the clause ends on a noun phrase of two words ("must
# give the landlord | a written notice"): after a verb, or sooner, that would part a verb from its
# object ("the tenant pays | the landlord", "must give | the landlord")
_DETERMINERS = {
    "a", "an", "the", "this", "these", "those", "my", "your", "his", "her", "its", "our", "their",
    "each", "every",
}  # fmt: skip
_NUMBER_WORDS = set(
    "one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty "
    "sixty seventy eighty ninety hundred thousand million billion half quarter few several many".split()
)


class Synthesises(Protocol):
    def synthesise(self, text: str) -> tuple[int, np.ndarray]: ...


class SentenceSplitter:
    """Incremental segmentation of a token stream: the first clause, then sentences. One per answer
    (it holds the buffer)."""

    def __init__(
        self,
        max_chars: int = 300,
        first_clause_words: int = 8,
        min_clause_words: int = 3,
        phrase_words: int = 4,
        determiner_words: int = 6,
    ) -> None:
        self.max_chars = max_chars
        self.first_clause_words = first_clause_words  # 0: no early first clause, sentences only
        self.min_clause_words = min_clause_words
        self.phrase_words = phrase_words  # 0: the first clause never ends before a phrase
        self.determiner_words = determiner_words  # 0: … nor before a determiner
        self._buf = ""
        self._spoken_words = 0  # words released so far: the first clause ends once there are enough

    def feed(self, chunk: str) -> list[str]:
        self._buf += chunk
        out: list[str] = []
        while True:
            end, wait_at = self._next_boundary()
            if self.first_clause_words and self._spoken_words < self.min_clause_words:
                clause = self._clause_boundary()
                if (
                    clause is not None
                    and (end is None or clause < end)
                    and (wait_at is None or clause <= wait_at)
                ):
                    end = clause
            if end is None:
                end = self._soft_boundary()
            if end is None:
                break
            piece, self._buf = self._buf[:end], self._buf[end:]
            spoken = for_speech(piece)
            if spoken:
                out.append(spoken)
                self._spoken_words += len(spoken.split())
        return out

    def flush(self) -> list[str]:
        rest, self._buf = self._buf, ""
        spoken = for_speech(rest)
        return [spoken] if spoken else []

    # --- boundaries ----------------------------------------------------------------------------
    def _next_boundary(self) -> tuple[int | None, int | None]:
        """(end index of the first complete sentence, None) when there is one; else (None, the
        start of the first candidate that cannot be decided yet, or None)."""
        buf = self._buf
        for m in _CANDIDATE.finditer(buf):
            verdict = self._judge(buf, m.start(), m.end())
            if verdict == "wait":
                return None, m.start()
            if verdict is not None:
                return int(verdict), None
        return None, None

    def _clause_boundary(self) -> int | None:
        """End of the first clause: after a word that ends in , ; : (or a dash) once there are
        `min_clause_words` words, or after `first_clause_words` words at a word that does not lean
        on the next one (not a function word, a number or an abbreviation). Only complete words
        (white space after them) count, so the result does not depend on the chunking."""
        buf = self._buf
        words = 0
        before = ""  # the complete word before this one (lower case)
        for m in _WORD.finditer(buf):
            if m.end() == len(buf):
                return None  # the word may go on
            token = m.group()
            bare = _strip_citations(token).strip(_CLOSERS)
            if any(ch.isalnum() for ch in bare):
                words += 1
            clause_mark = bare[-1:] in (",", ";", ":") or bare in ("–", "—", "-")
            if clause_mark and words >= self.min_clause_words:
                return m.end()
            if self.phrase_words and self.phrase_words <= words < self.first_clause_words and _before_phrase(
                buf, m.end(), bare
            ):
                return m.end()
            if (
                self.determiner_words
                and self.determiner_words <= words < self.first_clause_words
                and before in _DETERMINERS
                and _before_phrase(buf, m.end(), bare, _DETERMINERS)
            ):
                return m.end()
            before = bare.lower()
            if words >= self.first_clause_words + 4 or (
                words >= self.first_clause_words and not _leans(bare)
            ):
                nxt = len(buf) - len(buf[m.end() :].lstrip())
                if nxt == len(buf):
                    return None  # what follows decides: a citation or full stop stays with this word
                if buf[nxt] not in "[.!?…,;:":
                    return m.end()
        return None

    def _judge(self, buf: str, start: int, end: int) -> int | str | None:
        """An end index when [start, end) closes a sentence, "wait" when undecidable, else None."""
        if buf[start] == "\n":
            return end if buf[:start].strip() else None
        k = end
        while True:  # closing quotes/brackets/emphasis and citation markers belong to this sentence
            if k < len(buf) and buf[k] in _CLOSERS:
                k += 1
                continue
            cited = citation_span(buf, k)
            if cited is not None:
                k = cited
                continue
            break
        if k == len(buf) or _CITATION_PREFIX.fullmatch(buf, k):
            return "wait"
        if not buf[k].isspace():
            return None  # "3.5", "e.g.x", "example.com"
        if buf[start:end] == "." and not self._period_ends(buf, start, k):
            return None
        if buf[start:end] == "." and self._needs_capital(buf, start):
            nxt = _next_visible(buf, k)
            if nxt is None:
                return "wait"
            if not (nxt.isupper() or nxt.isdigit()):
                return None
        return k

    @staticmethod
    def _word_before(buf: str, i: int) -> str:
        m = re.search(r"([^\s(\[\"'“]+)$", buf[:i])
        return m.group(1) if m else ""

    def _period_ends(self, buf: str, start: int, k: int) -> bool:
        word = self._word_before(buf, start)
        low = word.lower()
        if low in NEVER_END:
            return False
        if len(word) == 1 and word.isalpha() and word.isupper():
            return False  # an initial: "J. Austen"
        if word.isdigit() and not clean(buf[:start]).strip(" .0123456789"):
            return False  # a list number "1." (nothing but the number so far)
        return True

    def _needs_capital(self, buf: str, start: int) -> bool:
        low = self._word_before(buf, start).lower()
        return low in MAYBE_END or bool(re.fullmatch(r"(?:[a-z]\.)+[a-z]", low))

    def _soft_boundary(self) -> int | None:
        """A very long run without a full stop is cut after a comma/semicolon/dash."""
        if len(self._buf) <= self.max_chars:
            return None
        window = self._buf[: self.max_chars]
        breaks = [m.end() for m in _SOFT_BREAK.finditer(window)]
        if breaks and breaks[-1] > self.max_chars // 3:
            return breaks[-1]
        space = window.rfind(" ")
        return space + 1 if space > 0 else self.max_chars


def _strip_citations(token: str) -> str:
    out, i = [], 0
    while i < len(token):
        end = citation_span(token, i)
        if end is None:
            out.append(token[i])
            i += 1
        else:
            i = end
    return "".join(out)


def _leans(word: str) -> bool:
    """A word that leans on the next one: a clause cut right after it would sound broken."""
    low = word.lower().rstrip(".,;:!?")
    if low in _FUNCTION_WORDS or low in NEVER_END or low in MAYBE_END:
        return True
    if low in _NUMBER_WORDS or any(ch.isdigit() for ch in low):  # "3.5 | months", "three | days"
        return True
    return word.endswith(".") and len(word) <= 3  # "J." "Dr." "No."


def _before_phrase(buf: str, end: int, word: str, starts: set[str] = _PHRASE_STARTS) -> bool:
    """`word` (ending at `end`) can close a first clause because the next word, complete, is one of
    `starts` and opens a phrase of its own: "returned | within thirty days". False until that word
    has arrived."""
    if not word[-1:].isalpha() or _leans(word):
        return False
    nxt = _WORD.search(buf, end)
    if nxt is None or nxt.end() == len(buf):
        return False
    return nxt.group().lower() in starts


def _next_visible(buf: str, k: int) -> str | None:
    for ch in buf[k:]:
        if ch.isalnum():
            return ch
        if not (ch.isspace() or ch in "\"'“*_([#>-"):
            return ch
    return None


def speak_stream(
    tokens: Iterable[str], synthesiser: Synthesises, splitter: SentenceSplitter | None = None
) -> Iterator[tuple[int, np.ndarray]]:
    """Audio for each sentence as soon as the stream completes it.

    A synthesis failure is logged once and the rest of the answer stays silent; the tokens are
    still consumed to the end, so a caller that tees the stream is never starved.
    """
    splitter = splitter or SentenceSplitter()
    failed = False

    def speak(sentences: list[str]) -> Iterator[tuple[int, np.ndarray]]:
        nonlocal failed
        for sentence in sentences:
            if failed:
                return
            try:
                rate, samples = synthesiser.synthesise(sentence)
            except HarkError as exc:
                log.warning("spoken answer stopped: %s", exc.message)
                failed = True
                return
            if len(samples):
                yield rate, samples

    for chunk in tokens:
        yield from speak(splitter.feed(chunk))
    yield from speak(splitter.flush())
