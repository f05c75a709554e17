"""Sentences of a text: where chunk edges may fall, and what an extractive answer quotes.

`split_sentences` cuts after `.`, `!`, `?` (optionally followed by a closing quote or bracket) when
whitespace and an upper-case letter, a digit or an opening quote follow; at blank lines; and before
list items. Abbreviated numbers ("2.5%"), lower-case continuations ("e.g. this"), initials and titles
("Joseph M. Scriven", "the U.S. TV show", "Dr. Watson") stay together.
`whole_sentences` repairs a chunk's pieces at answer time (chunks cut mid-sentence by an older
index, sentences broken by a page break); `sentence_spans` lets the chunker end chunks at sentences.
"""

from __future__ import annotations

import re

_SENT_SPLIT = re.compile(
    r"(?<=[.!?])[\"'”’)\]]?\s+(?=[\"'“‘(\[]?[A-Z0-9ÄÖÜÀ-ÝĀ-Ž])|\n\s*\n|\n(?=\s*[-*•]\s)"
)
_ENDS = re.compile(r"[.!?:;][\"'”’)\]]*$")
_STARTS_LOWER = re.compile(r"^[\"'“‘(\[]?[a-zà-ÿ](?![A-Z])")  # "iPhone", "eBay" start a sentence
_BULLET = re.compile(r"^[-*•]\s")
_MIN_BROKEN = 6  # words before a page break for a sentence to continue after it (a heading is shorter)


# a final dot that ends no sentence: an initial ("Joseph M. Scriven", "the U.S. TV show"), a title
_ABBREV_END = re.compile(
    r"(?:(?<![^\W\d_])[A-Z]|\b(?:Mrs?|Ms|Dr|St|Mt|Prof|Rev|Gen|Col|Lt|Capt|Sgt|No|Nr|vs|Fig|ca))\.$"
)


def split_sentences(text: str) -> list[str]:
    parts: list[str] = []
    pos = 0
    for m in _SENT_SPLIT.finditer(text):
        piece, pos = text[pos : m.start()], m.end()
        if parts and "\n" not in parts[-1][1] and _ABBREV_END.search(parts[-1][0].rstrip()):
            parts[-1] = (parts[-1][0] + parts[-1][1] + piece, m.group())
        else:
            parts.append((piece, m.group()))
    tail = text[pos:]
    if parts and "\n" not in parts[-1][1] and _ABBREV_END.search(parts[-1][0].rstrip()):
        parts[-1] = (parts[-1][0] + parts[-1][1] + tail, "")
    else:
        parts.append((tail, ""))
    stripped = (p.strip() for p, _ in parts)
    return [p for p in stripped if len(p) >= 3]


def ends_sentence(text: str) -> bool:
    return bool(_ENDS.search(text.rstrip()))


def starts_lower(text: str) -> bool:
    return bool(_STARTS_LOWER.match(text.strip()))


def whole_sentences(text: str) -> list[str]:
    """The whole sentences of a chunk: a sentence broken by a blank line (a page or column break
    in a PDF) is joined again; a piece whose start is missing (starting in lower case with nothing
    to join: the chunk's first piece, or one after a heading or a figure) and a last piece stopping
    mid-way (the chunk's edge) are left out."""
    out: list[str] = []
    for piece in split_sentences(text):
        if out and starts_lower(piece) and not ends_sentence(out[-1]) and len(out[-1].split()) >= _MIN_BROKEN:
            out[-1] = out[-1] + " " + piece
        elif not starts_lower(piece):
            out.append(piece)
        # else: the rest of a sentence whose start is not here (after a heading, a figure, the edge)
    if out and _cut_at_end(out[-1]):
        out.pop()
    return out


def _cut_at_end(piece: str) -> bool:
    s = piece.strip()
    return not ends_sentence(s) and len(s.split()) > 3 and not _BULLET.match(s)


def sentence_spans(words: list[str]) -> list[int]:
    """Word indices after which a sentence ends (the last index always counts)."""
    ends = [
        i for i, w in enumerate(words) if ends_sentence(w) and not _ABBREV_END.search(w) and _next_starts(words, i)
    ]
    if not ends or ends[-1] != len(words) - 1:
        ends.append(len(words) - 1)
    return ends


def _next_starts(words: list[str], i: int) -> bool:
    if i + 1 >= len(words):
        return True
    nxt = words[i + 1].lstrip("\"'“‘([")
    return bool(nxt) and (nxt[0].isupper() or nxt[0].isdigit())
