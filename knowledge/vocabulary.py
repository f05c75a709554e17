"""The library's vocabulary: the terms a speech recogniser should know to hear questions about it.

Whisper writes common words well and the library's own words badly: product names ("LilyPond",
"Frescobaldi"), acronyms ("AMC", "CRAN"), identifiers ("dpkg-shlibdeps", "\\relative",
"DEB_BUILD_OPTIONS", "satb.ly"), one-letter names ("R", heard as "our"). `build_vocabulary` finds
them in the library's chunks: a word is a term when its form is code-like (a backslash, an
underscore, an inner dot, digits among letters, a capital inside it, two or more capitals) or it is
rare in general English and German (wordfreq's Zipf frequency below `RARE_ZIPF`) and, written in
lower case, it is not a misspelling made once (it occurs at least `MIN_COUNT` times) — or it is a
capitalised name the library writes mid-sentence with a capital. A capital letter other than "A"
and "I" standing alone, often and mid-sentence, is a one-letter name. Each term keeps the form
the library writes most often and a score: how often the library uses it, weighted by how rare it
is in general language, with a bonus for document titles and section headings. Best first. A
piece of a word cut by a line break is no term ("DEB_", "eters" of "parameters": `_cut`).

`write_vocabulary(store)` builds it from the stored chunks at the end of an ingest and keeps it
beside the library (`<table>.vocabulary.json` in a local folder); `read_vocabulary` reads it back
when it still belongs to the table's version. The speech recogniser takes the best terms that fit
its prompt (`models.speech_bias`).
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import unicodedata
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

VERSION = 3  # 2: a name the library also writes as its words apart is left out (APART_SHARE); 3: no cut words
RARE_ZIPF = 3.0  # a plain word rarer than this in general English and German is a candidate
FORM_ZIPF = 4.5  # a code-like form ("PDF", "UTF-8") commoner than this is known to any recogniser
FRAGMENT_RATIO = 5  # a rare word that begins or ends a word this many times as common is a piece of it
MIN_COUNT = 3  # occurrences for a plain rare word (a typo or a hyphenation split occurs once or twice)
LETTER_SHARE = 2e-4  # a one-letter name: at least this share of the library's words
MAX_TERMS = 2000  # kept in the file (a prompt holds ~50)
LANGUAGES = ("en", "de")
# a name written with capitals inside ("fontSize", "TimeSignature") the library also writes as its words apart ("font size")
# in at least this share of its uses is no term: words heard apart stay words, as the text search needs
APART_SHARE = 0.1

# a word: letters/digits, joined by - . _ (not at the ends), optionally after a backslash
_WORD = re.compile(r"(?<![\w\\])(\\?[^\W\d_][\w]*(?:[-._][^\W_][\w]*)*)", re.UNICODE)
_SENTENCE_END = re.compile(r"(?:^|[.!?:;•\n]\s*|\n\s*)$")
# a note and its duration in music input ("c4", "b8"), a numbered or lettered name of an example
# ("block2", "noteA"): read, not said
_NOTE = re.compile(r"^[a-z]\d+$|^[a-z]{2,}\d+$|^[a-z]{3,}[A-Z]$")
# a PDF's umlaut as a spacing diaeresis before its vowel ("m¨ussen")
_DIAERESIS = re.compile("\u00a8\\s?([aeiouyAEIOUY])")


def normalise(text: str) -> str:
    """NFKC, with a PDF's spacing diaeresis joined to its vowel ("m¨ussen" → "müssen")."""
    text = _DIAERESIS.sub(lambda m: unicodedata.normalize("NFC", m.group(1) + "\u0308"), text)
    return unicodedata.normalize("NFKC", text)


@dataclass(frozen=True)
class Term:
    text: str  # as the library writes it most often
    count: int  # occurrences in the library
    kind: str  # code | acronym | name | rare | letter
    score: float


@dataclass(frozen=True)
class Vocabulary:
    terms: tuple[Term, ...]  # best first
    version: int | None = None  # the table version it was built from
    words: int = 0  # words read

    def texts(self) -> list[str]:
        return [t.text for t in self.terms]

    def to_json(self) -> str:
        data = {"format": VERSION, "version": self.version, "words": self.words,
                "terms": [asdict(t) for t in self.terms]}  # fmt: skip
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Vocabulary:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("format") != VERSION:
            raise ValueError("not a vocabulary file of this format")
        terms = tuple(Term(**t) for t in data["terms"])
        return cls(terms, data.get("version"), int(data.get("words", 0)))


@lru_cache(maxsize=1)
def _frequencies() -> tuple[dict[str, float], ...]:
    import wordfreq  # noqa: PLC0415 - ~0.1 s per language, only when a vocabulary is built

    return tuple(wordfreq.get_frequency_dict(lang, "best") for lang in LANGUAGES)


def zipf(word: str) -> float:
    """The word's Zipf frequency (log10 of uses per billion words), the higher of English and
    German; 0 for a word in neither list."""
    best = max((d.get(word, 0.0) for d in _frequencies()), default=0.0)
    return math.log10(best * 1e9) if best > 0 else 0.0


def code_like(form: str) -> bool:
    """A form no dictionary spells: backslash, underscore, inner dot, digits among letters, a
    capital after a lower-case letter, or two or more capitals."""
    if form.startswith("\\") or "_" in form or "." in form:
        return True
    if any(c.isdigit() for c in form):
        return True
    if re.search(r"[a-z][A-Z]", form):
        return True
    return sum(c.isupper() for c in form) >= 2


def _key(form: str) -> str:
    return form.lower()


class _Counts:
    def __init__(self) -> None:
        self.total = Counter()  # key → occurrences
        self.forms: dict[str, Counter] = defaultdict(Counter)  # key → surface form → occurrences
        self.mid = Counter()  # key → occurrences mid-sentence
        self.mid_capital = Counter()  # key → mid-sentence occurrences written with a capital
        self.headings = Counter()  # key → occurrences in titles and section headings
        self.words = 0
        self._sorted: list[str] | None = None  # plain words, sorted and reversed (`by_edge`)
        self._reversed: list[str] = []

    def by_edge(self, key: str) -> list[str]:
        """The longer plain words (by 2 letters or more) that start or end with `key`."""
        if self._sorted is None:
            plain = [k for k in self.total if k.isalpha()]
            self._sorted, self._reversed = sorted(plain), sorted(k[::-1] for k in plain)
        out = []
        for words, probe, flip in ((self._sorted, key, False), (self._reversed, key[::-1], True)):
            i = bisect_left(words, probe)
            while i < len(words) and words[i].startswith(probe):
                if len(words[i]) >= len(key) + 2:
                    out.append(words[i][::-1] if flip else words[i])
                i += 1
        return out

    def add(self, text: str, heading: bool = False) -> None:
        text = normalise(text)
        for m in _WORD.finditer(text):
            form = m.group(1)
            if len(form) > 40 or text[m.end() : m.end() + 1] in ("'", "’"):
                continue  # "shouldn't", "LilyPond's": a word the apostrophe cut
            key = _key(form)
            self.words += 1
            self.total[key] += 1
            self.forms[key][form] += 1
            if heading:
                self.headings[key] += 1
                continue
            before = text[max(0, m.start() - 3) : m.start()]
            if not _SENTENCE_END.search(before) and m.start() > 0:
                self.mid[key] += 1
                if form[0].isupper():
                    self.mid_capital[key] += 1


def _kind(key: str, form: str, c: _Counts) -> str | None:
    """Why `key` (written mostly as `form`) is a term, or None."""
    n = c.total[key]
    bare = re.sub(r"[\W_]+", "", key)
    if len(form) == 1:
        single = form.isupper() and form not in ("A", "I") and c.mid_capital[key] >= max(5, LETTER_SHARE * c.words)
        return "letter" if single else None
    if bare.isdigit() or len(bare) < 2 or _NOTE.match(form):
        return None
    if code_like(form):
        if "." in form and all(len(p) <= 1 for p in re.split(r"[.]", key.strip("\\"))):
            return None  # "e.g", "i.e"
        if (n >= 2 or c.headings[key]) and zipf(bare) < FORM_ZIPF:
            return "acronym" if form.isupper() and form.isalpha() else "code"
        return None
    rare = zipf(key) < RARE_ZIPF if "-" not in key else all(zipf(p) < RARE_ZIPF for p in key.split("-") if p)
    if not rare:
        return None
    mid = c.mid[key]
    if mid and c.mid_capital[key] / mid >= 0.6 and n >= 2:
        return "name"
    return "rare" if n >= MIN_COUNT else None


def _cut(key: str, form: str, kind: str, c: _Counts) -> bool:
    """A piece of a word a line break cut: a name ending in its joint ("DEB_" of "DEB_BUILD_OPTIONS"),
    or a rare plain word that starts or ends a word the library writes `FRAGMENT_RATIO` times as
    often ("eters" of "parameters", "Glos" of "Glossary"). Heard where nothing like it was said."""
    if form[-1] in "_-.":
        return True
    if kind != "rare" or not key.isalpha():
        return False
    n = c.total[key]
    return any(c.total[w] >= FRAGMENT_RATIO * n for w in c.by_edge(key))


def build_vocabulary(
    rows: Iterable[tuple[str, str, str]], version: int | None = None, max_terms: int = MAX_TERMS
) -> Vocabulary:
    """The vocabulary of chunks given as (title, section, text)."""
    c = _Counts()
    titles: set[str] = set()
    texts: list[str] = []
    for title, section, text in rows:
        texts.append(text or "")
        if title and title not in titles:  # a document's title once, not once per chunk
            titles.add(title)
            c.add(title, heading=True)
        if section:
            c.add(section, heading=True)
        c.add(text or "")
    candidates = {}
    for key in c.total:
        form = c.forms[key].most_common(1)[0][0]
        kind = _kind(key, form, c)
        if kind is not None:
            candidates[key] = (form, kind)
    candidates = {k: v for k, v in candidates.items() if not _cut(k, v[0], v[1], c)}
    apart = _written_apart({k: f for k, (f, _) in candidates.items()}, texts)
    terms = []
    for key, (form, kind) in candidates.items():
        n = c.total[key]
        if apart.get(key, 0) >= APART_SHARE * n:
            continue  # "fontSize": the library writes "font size" too; heard words stay words
        # a one-letter name is as rare as a name gets (the letter itself is common)
        rarity = 2.0 if kind == "letter" else 1.0 + max(0.0, FORM_ZIPF - zipf(re.sub(r"[\W_]+", "", key))) / FORM_ZIPF
        score = math.log1p(n) * rarity + 0.5 * math.log1p(c.headings[key])
        terms.append(Term(form, n, kind, round(score, 4)))
    terms.sort(key=lambda t: (-t.score, t.text))
    return Vocabulary(tuple(terms[:max_terms]), version, c.words)


_CAMEL = re.compile(r"^\\?[A-Za-z]*[a-z][A-Z][A-Za-z]*$")  # letters only, a capital inside: "fontSize", "\\voiceOne"
_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")  # the words of a `_CAMEL` name
_PLAIN = re.compile(r"[^\W\d_]+", re.UNICODE)
_EDGE = "\"'“”‘’()[]{},;:!?."  # punctuation around a word


def parts_of(form: str) -> tuple[str, ...]:
    """The words a name written with capitals inside is made of, in lower case ("fontSize" → font,
    size); () for any other form."""
    if not _CAMEL.match(form):
        return ()  # "paper.type", "AMC-TXT": the text search splits them at the mark into the words anyway
    parts = tuple(p.lower() for p in _PARTS.findall(form))
    return parts if 2 <= len(parts) <= 3 else ()


def _written_apart(forms: dict[str, str], texts: list[str]) -> Counter:
    """For each compound term (key → form), how often the texts write its parts as plain words in a
    row ("font size" for "fontSize"): a name the library also writes apart is ordinary words."""
    phrases = {parts: key for key, form in forms.items() if (parts := parts_of(form))}
    out: Counter = Counter()
    if not phrases:
        return out
    for text in texts:
        # words between spaces only: "AMC-TXT" and "paper.type" are the names themselves, not words apart
        words = [w.lower() if _PLAIN.fullmatch(w := t.strip(_EDGE)) else None for t in normalise(text).split()]
        for n in (2, 3):
            for i in range(len(words) - n + 1):
                gram = words[i : i + n]
                key = phrases.get(tuple(gram)) if None not in gram else None
                if key is not None:
                    out[key] += 1
    return out


# ---- beside the library -----------------------------------------------------------------------------
def vocabulary_path(uri: str, table: str) -> Path | None:
    """`<table>.vocabulary.json` in a local library folder; None for object storage."""
    if uri.startswith("file://"):
        uri = uri[len("file://") :]
    return None if "://" in uri else Path(uri) / f"{table}.vocabulary.json"


def store_rows(store: Any) -> tuple[list[tuple[str, str, str]], int]:
    """Every stored chunk's (title, section, text), and the table version read."""
    table = store.table
    version = int(table.version)
    n = int(table.count_rows())
    if not n:
        return [], version
    got = table.search().select(["title", "section", "chunk_text"]).limit(n).to_arrow()
    cols = [got.column(c).to_pylist() for c in ("title", "section", "chunk_text")]
    return list(zip(*cols, strict=True)), version


def vocabulary_of(store: Any) -> Vocabulary:
    rows, version = store_rows(store)
    return build_vocabulary(rows, version)


def write_vocabulary(store: Any) -> Vocabulary | None:
    """Build the store's vocabulary and keep it beside a local library (best effort: a failure is
    logged and recognition goes on without it)."""
    try:
        vocab = vocabulary_of(store)
        path = vocabulary_path(store.uri, store.name)
        if path is not None:
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(vocab.to_json(), encoding="utf-8")
            os.replace(tmp, path)
        log.info("library vocabulary: %d terms from %d words", len(vocab.terms), vocab.words)
        return vocab
    except Exception:  # noqa: BLE001 - the ingest it follows has succeeded
        log.warning("the library's vocabulary was not built", exc_info=True)
        return None


def read_vocabulary(uri: str, table: str) -> Vocabulary | None:
    """The vocabulary kept beside a local library, or None (none written, unreadable)."""
    path = vocabulary_path(uri, table)
    if path is None or not path.is_file():
        return None
    try:
        return Vocabulary.from_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:  # another format (an earlier Hark): the caller builds it again
        log.info("vocabulary file %s not used: %s", path, exc)
        return None
    except (OSError, TypeError, KeyError):
        log.warning("unreadable vocabulary file %s", path)
        return None
