"""Spoken answers: cut streamed text into sentences and speak each one as soon as it is complete.

`SentenceSplitter.feed(chunk)` returns the sentences completed by that chunk, cleaned for speech
(citation markers like "[1]" and markdown symbols removed); `.flush()` returns the rest at the end.
A sentence ends at . ! ? (or …) followed by white space, or at a line break; not after
abbreviations ("e.g.", "Dr."), initials ("J. Austen"), decimals ("3.5") or list numbers ("1.").
A boundary is decided only once the character after it has arrived, so the chunking of the stream
never changes the result.

`speak_stream(tokens, synthesiser)` yields `(sample_rate, int16 samples)` for each sentence while the
tokens are still arriving: the first sentence is heard before the answer has finished.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from typing import Protocol

import numpy as np

from models.errors import HarkError

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
_CITATION = re.compile(r"\[\^?\d+(?:\s*[,;–-]\s*\^?\d+)*\]")
_CITATION_PREFIX = re.compile(r"\[\^?[\d,;–\s-]*$")
_CANDIDATE = re.compile(r"[.!?…]+|\n")
_SOFT_BREAK = re.compile(r"[,;:]\s|\s[–—-]\s")

_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MD_LINE_START = re.compile(r"^\s*(?:#{1,6}\s+|>\s*|[-*+•]\s+|\d{1,3}[.)]\s+)", re.MULTILINE)
_MD_EMPHASIS = re.compile(r"\*{1,3}|(?<!\w)_{1,3}|_{1,3}(?!\w)|~~|`+")
_URL = re.compile(r"https?://\S+|www\.\S+")
_HTML = re.compile(r"<[^>\n]{1,40}>")


class Synthesises(Protocol):
    def synthesise(self, text: str) -> tuple[int, np.ndarray]: ...


def clean_for_speech(text: str) -> str:
    """Remove what should not be read aloud: citations, markdown, URLs, HTML tags, table bars."""
    t = _CITATION.sub("", text)
    t = _MD_LINK.sub(r"\1", t)
    t = _URL.sub("the link", t)
    t = _HTML.sub("", t)
    t = _MD_LINE_START.sub("", t)
    t = _MD_EMPHASIS.sub("", t)
    t = t.replace("|", ", ").replace("#", " ")
    t = re.sub(r"\s+", " ", t).strip()
    t = re.sub(r"\s+([.,;:!?…])", r"\1", t)
    t = re.sub(r"^[,;:.\s]+", "", t)
    t = re.sub(r"([,;:])(?:\s*[,;:])+", r"\1", t)
    return t if any(ch.isalnum() for ch in t) else ""


class SentenceSplitter:
    """Incremental sentence segmentation of a token stream. One per answer (it holds the buffer)."""

    def __init__(self, max_chars: int = 300) -> None:
        self.max_chars = max_chars
        self._buf = ""

    def feed(self, chunk: str) -> list[str]:
        self._buf += chunk
        out: list[str] = []
        while True:
            end = self._next_boundary()
            if end is None:
                end = self._soft_boundary()
            if end is None:
                break
            sentence, self._buf = self._buf[:end], self._buf[end:]
            cleaned = clean_for_speech(sentence)
            if cleaned:
                out.append(cleaned)
        return out

    def flush(self) -> list[str]:
        rest, self._buf = self._buf, ""
        cleaned = clean_for_speech(rest)
        return [cleaned] if cleaned else []

    # --- boundaries ----------------------------------------------------------------------------
    def _next_boundary(self) -> int | None:
        """End index of the first complete sentence in the buffer, or None (not yet decidable)."""
        buf = self._buf
        for m in _CANDIDATE.finditer(buf):
            verdict = self._judge(buf, m.start(), m.end())
            if verdict == "wait":
                return None
            if verdict is not None:
                return verdict
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
            m = _CITATION.match(buf, k)
            if m:
                k = m.end()
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
        if word.isdigit() and not clean_for_speech(buf[:start]).strip(" .0123456789"):
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
