"""Text as a PDF's layout leaves it, made into the words a reader sees.

Typeset PDFs (LaTeX, Texinfo, DocBook manuals) store "file" with the one-glyph ligature "ﬁ" and break
long words at the end of a line ("decompres- sion" once the lines are joined). Left as they are,
the full-text index never matches "file" or "decompression", the embedder sees two half words and
an answer quotes them. `clean` maps the Latin ligatures to their letters and joins a word broken
at a line end; a hyphen that belongs to the text stays ("end-of-stream", "pre- and post-").
A glyph the PDF's font maps to no character (a list bullet, LaTeX's copyright circle) comes out of
pdfminer as "(cid:136)": `clean` drops it, or an answer reads it aloud ("cid 136") and the
embedder and the full-text index take it for a word. A link's footnote number, which dblatex sets
twice and glued to the link ("Content11 http://…"), goes; the URL stays, in parentheses.
Page furniture — page numbers and a running header or footer on many pages ("gnuplot 5.4") — is
no text: between two pages it splits a sentence, and an answer would quote it (`furniture`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

VERSION = 23  # part of a PDF's content key (knowledge/discover.py): a change here re-reads PDFs once

_LIGATURES = str.maketrans(
    {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl", "\ufb05": "st", "\ufb06": "st"}
)

# pdfminer's stand-in for a glyph without a character, with the spaces around it
_CID = re.compile(r"[ \t]*\(cid:\d+\)[ \t]*")
# a word, a hyphen, the line break (a newline or the space it became), the rest of the word
_BROKEN = re.compile(r"\b([^\W\d_][\w-]*)-(?:[ \t]+|[ \t]*\n[ \t]*)([^\W\d_]\w*)")
# the hyphen of "pre- and post-processing" is the text's own
_SUSPENDED = {"and", "or", "nor", "to", "und", "oder", "bis"}


def _join(match: re.Match[str]) -> str:
    head, tail = match.group(1), match.group(2)
    if "-" in head:  # "end-of- stream": a compound broken at one of its own hyphens
        return f"{head}-{tail}"
    if tail.lower() in _SUSPENDED:
        return match.group(0)
    if tail[0].islower() or (head.isupper() and tail.isupper() and len(head) > 1):
        return head + tail  # "decompres- sion", "DIS- CLAIMED"
    return match.group(0)  # "compati- These": not one word


def _gap(match: re.Match[str]) -> str:
    """One space where the glyph stood between words ("platform. (cid:136) All", "c(cid:13) 2001"),
    none at a line's start or end, nor inside a word (a ligature without a character: its letters
    are lost either way)."""
    text, start, end = match.string, match.start(), match.end()
    at_edge = start == 0 or end == len(text) or text[start - 1] == "\n" or text[end] == "\n"
    return "" if at_edge or match.group(0) == match.group(0).strip() else " "


# a link's footnote as dblatex sets it in the text: its number twice, glued to the link's last word,
# then the URL ("the Padding Content11 http://www.dpawson.co.uk/… section", "PDF22 http://…")
_LINK_NOTE = re.compile(r"(?<=[^\W\d_]{2})(\d{1,2})\1 (https?://[^\s,;]+?)(?=[.,;:)]?(?:\s|$))")


def clean(text: str) -> str:
    """`text` with ligatures spelt out, glyphs without a character dropped, line-end hyphenation
    undone and a link's footnote number dropped (its URL kept in parentheses)."""
    if not text:
        return text
    text = text.translate(_LIGATURES)
    if "http" in text:
        text = _LINK_NOTE.sub(r" (\2)", text)
    if "(cid:" in text:
        text = _CID.sub(_gap, text)
    if "-" not in text:
        return text
    return _BROKEN.sub(_join, text)


_PAGE_NUMBER = re.compile(r"(?i)^(?:page |seite |p\. ?)?[-–— ]*\d{1,4}[-–— ]*(?:(?:of|/|von) \d{1,4})?$")
_RUNNING_MIN_PAGES = 3  # a running header is on at least this many pages …
_RUNNING_SHARE = 0.25  # … and this share of the pages with text
_RUNNING_MAX_CHARS = 80


def furniture(items: Sequence[tuple[str, int | None]]) -> set[int]:
    """Which of a PDF's text elements, (text, page), are page furniture: a bare page number, or a
    short line (digits aside) that recurs on many pages (`_RUNNING_MIN_PAGES`, `_RUNNING_SHARE`) and
    is not a label ("Syntax:", "Example:", which a manual repeats on purpose)."""
    pages_of: dict[str, set[int]] = {}
    for text, page in items:
        s = " ".join(text.split())
        if page is not None and 0 < len(s) <= _RUNNING_MAX_CHARS and not s.endswith(":"):
            pages_of.setdefault(re.sub(r"\d+", "#", s.lower()), set()).add(page)
    n_pages = len({page for _, page in items if page is not None})
    need = max(_RUNNING_MIN_PAGES, _RUNNING_SHARE * n_pages)
    running = {key for key, pages in pages_of.items() if len(pages) >= need}
    out: set[int] = set()
    for i, (text, page) in enumerate(items):
        s = " ".join(text.split())
        if page is None or not s:
            continue
        if _PAGE_NUMBER.match(s) or re.sub(r"\d+", "#", s.lower()) in running:
            out.add(i)
    return out


def edge_furniture(items: Sequence[tuple[str, int]]) -> set[int]:
    """Which of the (text, page) lines at the pages' edges are furniture: `furniture`, a chapter's
    running header (the same words with the page number on at least 3 pages) and `_numbered_edges`."""
    drop = furniture(items)
    keyed: dict[str, set[int]] = {}
    for text, page in items:
        if re.search(r"\d", text) and len(text) <= 100:
            keyed.setdefault(re.sub(r"\d+", "#", text.casefold()), set()).add(page)
    drop |= {k for k, (text, _) in enumerate(items) if len(keyed.get(re.sub(r"\d+", "#", text.casefold()), ())) >= 3}
    return drop | _numbered_edges(items)


_EDGE_NUMBER = re.compile(r"^\s*(\d{1,4})\s+\S|\S\s+(\d{1,4})\s*$")


def _numbered_edges(items: Sequence[tuple[str, int]]) -> set[int]:
    """A header or footer that names its section and the printed page number ("3.3. The maintainer
    of a package 15", "16 Chapter 3. Binary packages"): short edge lines whose number stands at the
    same distance from the PDF's page index on many pages (the front matter's offset)."""
    found: list[tuple[int, int]] = []  # (item, offset)
    for k, (text, page) in enumerate(items):
        m = _EDGE_NUMBER.search(text)
        if m and len(text.split()) <= 12 and not text.rstrip().endswith((".", "?", "!")):
            found.append((k, page - int(m.group(1) or m.group(2))))
    pages = {p for _, p in items}
    counts = Counter(off for _, off in found)
    common = {off for off, n in counts.items() if n >= max(3, 0.1 * len(pages))}
    return {k for k, off in found if off in common}


_NUMBERED = re.compile(r"^(\d{1,3})(?:\s+(\S.*))?$")  # a blank line of a listing keeps its number alone
LISTING_RUN = 5  # numbered lines in a row, each number a little above the last: a code listing
FOOTNOTE_SIZE = 0.8  # a line this much smaller than the body text that opens with a number: a footnote


def without_footnote_numbers(items: Sequence[tuple[str, float]], body: float) -> list[str]:
    """Per (text, font size) line, its text without a footnote's number: a line that opens with a
    number and a capital in a smaller font than the body ("4 Essential is needed in part …"), not
    a line of a numbered code listing ("62 Some very bad answer …": `LISTING_RUN` or more numbered
    lines, numbers rising by 1 to 3 as blank lines are skipped, a wrapped line's rest between)."""
    nums = [_NUMBERED.match(text) for text, _ in items]
    listing = [False] * len(items)
    run: list[int] = []  # the numbered lines of the current run
    for i in [k for k, m in enumerate(nums) if m is not None] + [len(items) + 2]:
        last = run[-1] if run else None
        if last is not None and i - last <= 2 and i < len(items) \
                and 1 <= int(nums[i].group(1)) - int(nums[last].group(1)) <= 3:  # fmt: skip
            run.append(i)
            continue
        if len(run) >= LISTING_RUN:
            listing[run[0] : run[-1] + 1] = [True] * (run[-1] + 1 - run[0])
        run = [i]
    out = []
    for (text, size), m, code in zip(items, nums, listing, strict=True):
        rest = (m.group(2) or "") if m is not None else ""
        out.append(rest if m is not None and not code and size < FOOTNOTE_SIZE * body and rest[:1].isupper() else text)
    return out
