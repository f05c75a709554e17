"""Sentences of a text: where chunk edges may fall, and what an extractive answer quotes.

`split_sentences` cuts after `.`, `!`, `?` (optionally followed by a closing quote or bracket) when
whitespace and an upper-case letter, a digit, an opening quote or a manual's placeholder ("<base> is
the base …") follow; at blank lines; and before list items. Abbreviated numbers ("2.5%"), lower-case
continuations ("e.g. this"), initials and titles ("Joseph M. Scriven", "the U.S. TV show", "Dr. Watson"),
"Smith et al. (2019)", "i.e. Python", German abbreviations ("§ 5 Abs. 2", "z. B. Studierende", "162 Mio.
Euro") and ordinals ("am 7. Januar", "des frühen 20. Jahrhunderts": a date or a century, not "seit 1990.
Die …") stay together. `whole_sentences` repairs a chunk's pieces at answer time (chunks cut mid-sentence by an
older index, sentences broken by a page break; a manual's attribute line "nodesep=f sets …" and a
reference page's name line "slidy.duration — Specifies …" are whole after a label); `sentence_spans` lets the chunker end chunks at sentences.
"""

from __future__ import annotations

import functools
import re

_SENT_SPLIT = re.compile(
    r"(?<=[.!?])[\"'”’)\]]?\s+(?=[\"'“‘(\[]?[A-Z0-9ÄÖÜÀ-ÝĀ-Ž]|<[a-z][\w -]*>)|\n\s*\n|\n(?=\s*[-*•]\s)"
)
_LATIN_END = re.compile(r"(?i)\b(?:e\.g|i\.e|cf|viz)\.$")  # "e.g. <n> is …": the sentence goes on
_ASSIGNS = re.compile(r"[a-z][\w.-]*=\S+\s+[a-z]")  # "nodesep=f sets …": a manual's attribute line
NAME_LINE = re.compile(r"^[a-z][\w.:@*-]* — \S")  # "slidy.duration — Specifies …": a reference page's name line
# a function's signature: "real arclength(path p);", "block roundrectangle(object body, pair center=(0,0));"
SIGNATURE = re.compile(r"^(?:[a-z][\w.\[\]]*\s+){1,2}[A-Za-z_]\w*\(.*\)\s*;?$")
# "extra: This priority is deprecated.": a definition list's term before its description (the PDF reader writes it so)
# one word before the colon, not one that ends a list's introduction ("… as follows: Start with …")
TERM_LINE = re.compile(r"^(?!(?:follows?|following|below|example|examples|instance|note)\b)[a-z][\w.()\\-]*: [\"“(]?[A-Z]")
_ENDS = re.compile(r"[.!?:;][\"'”’)\]]*$")
_STARTS_LOWER = re.compile(r"^[\"'“‘(\[]?[a-zà-ÿ](?![A-Z])")  # "iPhone", "eBay" start a sentence
_BULLET = re.compile(r"^[-*•]\s")
# a list item's mark: a bullet or dash, "1." / "(2)", "a)", "(iv)" (the PDF reader's list items, the answer's list intros)
LIST_MARK = re.compile(r"^\s*(?:[•◦▪‣∙·●○■□–—*-]|\(?\d{1,2}[.)]|\(?[a-z][.)]|\([ivx]{1,4}\))\s+")
_LETTER = re.compile(r"[^\W\d_]")
_VERSION = re.compile(r"\b\d+\.\d+\b|^\W*\d+\W*$")  # "gnuplot 5.4", "- 12 -"
_LABEL = re.compile(r"(?i)(figure|fig\.|table|chapter|page|section|abbildung|tabelle|seite)\s*\d")  # a caption's label
_MIN_BROKEN = 6
_LABEL_WORDS = 4  # "The routine", "The function": a label before a signature, joined to it
_TAIL = 64  # characters of a piece's end that tell whether the sentence goes on (its last two words)
_NO_END = frozenset(
    "a an the and or but nor of to in on at by for with from as that than which whose who whom where when "
    "while if is are was were be been its their his her they".split()
)
_CARRIES = frozenset("to and or nor than that which whose whom for with from of by into onto".split())
_CONTINUES = frozenset(
    "a an the and or but nor of to in on at by for with from as that than which whose who whom where when "
    "while if is are was were be been its their his her it they this these those so then".split()
)  # words before a page break for a sentence to continue after it (a heading is shorter)


# a final dot that ends no sentence: an initial ("Joseph M. Scriven", "the U.S. TV show"), a title, a
# German abbreviation ("Abs.", "Mio.") or a month's ("1. Jan. 2020")
_ABBREV_END = re.compile(
    r"(?:(?<![^\W\d_])[A-Z]|\b(?:Mrs?|Ms|Dr|St|Mt|Prof|Rev|Gen|Col|Lt|Capt|Sgt|No|Nr|vs?|Fig|ca?|pp?|cf|Vol|vol|Ch|ch"
    r"|Sec|Eq|Nos?|Corp|Dept|approx|Abs|Art|Ziff|Nrn|vgl|bzw|ggf|usw|inkl|zzgl|evtl|gem|sog|Mio|Mrd|Tsd|Jh|Jhd|Kap|Anm"
    r"|Abb|Anl|Buchst|Tab|Bd|Aufl|Hrsg|Dipl|geb|gest|ehem|ff|al|Refs?|resp|Jan|Feb|Mär|Apr|Aug|Sept?|Okt|Oct|Nov|Dez|Dec))\.$"
)
# abbreviations a page or column break may follow, the sentence going on after it in lower case
_BROKEN_AT = re.compile(r"\b(?:engl|franz|frz|lat|dt|ital|span|griech|bspw|bzgl|allg|urspr|e\.g|i\.e|etc|incl)\.$", re.I)
# a German abbreviation of two letters: "z. B.", "i. d. R.", "v. Chr." ("… of x. The" still ends)
_LETTER_END = re.compile(r"(?<![^\W\d_])[a-zäöü]\.$")
_LETTER_NEXT = re.compile(r"[A-ZÄÖÜ][a-zäöü]{0,2}\.")
# a German ordinal: a one- or two-digit number and its dot after an article or preposition, or before a
# month or a century ("am 7. Januar", "des 19. Jahrhunderts"; a year, "seit 1990.", can end a sentence)
_ORDINAL_NUMBER = re.compile(r"(?:^|(\S+)\s+)\d{1,2}\.$")
_ORDINAL_BEFORE = frozenset(
    "am im vom zum zur beim bis seit ab der die das dem den des dieses jeden frühen späten letzten".split()
)
_ORDINAL_AFTER = re.compile(
    r"(?:Januar|Jänner|Februar|März|April|Mai|Juni|Juli|August|September|Oktober|November|Dezember|January"
    r"|February|March|June|July|October|December|Jan|Feb|Mär|Apr|Jun|Jul|Aug|Sept?|Okt|Oct|Nov|Dez|Dec"
    r"|Jahrhundert\w*|Jahrtausend\w*|Jh)\b"
)


def split_sentences(text: str) -> list[str]:
    """The pieces of `text` between sentence ends and blank lines (cached: a turn splits the same
    chunks for its answerability, its answer and its prompt)."""
    return list(_split(text))


@functools.lru_cache(maxsize=512)
def _split(text: str) -> tuple[str, ...]:
    parts: list[tuple[str, str]] = []
    pos = 0
    for m in _SENT_SPLIT.finditer(text):
        piece, pos = text[pos : m.start()], m.end()
        if parts and "\n" not in parts[-1][1] and _joins(parts[-1][0], piece):
            parts[-1] = (parts[-1][0] + parts[-1][1] + piece, m.group())
        else:
            parts.append((piece, m.group()))
    tail = text[pos:]
    if parts and "\n" not in parts[-1][1] and _joins(parts[-1][0], tail):
        parts[-1] = (parts[-1][0] + parts[-1][1] + tail, "")
    else:
        parts.append((tail, ""))
    stripped = (p.strip() for p, _ in parts)
    return tuple(p for p in stripped if len(p) >= 3)


def _joins(before: str, piece: str) -> bool:
    """The cut before `piece` ends no sentence: after an initial, a title or an abbreviation, after
    "e.g." or "i.e." ("e.g. <n> is the count", "i.e. Python"), inside a German ordinal ("am 7." "Januar")."""
    head = before.rstrip()[-_TAIL:]  # the tests read its last words: a long piece is not searched whole
    return bool(_ABBREV_END.search(head) or _LATIN_END.search(head) or _ordinal(head, piece) or _letters(head, piece))


def _letters(head: str, piece: str) -> bool:
    """`head` ends with a lower-case letter's abbreviation that `piece`'s continues ("z." "B. für")."""
    return _LETTER_END.search(head) is not None and _LETTER_NEXT.match(piece.lstrip()) is not None


def _ordinal(head: str, piece: str) -> bool:
    """`head` ends with a German ordinal ("am 7.") that `piece` continues ("Januar 1943 …")."""
    m = _ORDINAL_NUMBER.search(head)
    if m is None:
        return False
    before = (m.group(1) or "").lower()
    return before in _ORDINAL_BEFORE or _ORDINAL_AFTER.match(piece.lstrip("\"'“‘([")) is not None


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
    kept = False  # the piece before was kept (not the dropped rest of a sentence)
    before = ""
    pieces = split_sentences(text)
    for piece in pieces:
        kept_before, kept = kept, True
        signature, before = before, piece
        # not joined to the piece before it, unless that is a short label: "The routine" ¶ "void filloutside(…);"
        lead = out[-1][: -len(signature)].strip() if out and signature and out[-1].endswith(signature) else ""
        alone = not out or not out[-1].endswith(signature) or (len(lead.split()) <= _LABEL_WORDS and not ends_sentence(lead))
        if SIGNATURE.match(signature) and alone and not SIGNATURE.match(piece) and starts_lower(piece) \
                and _whole(piece, 3) and _opens(piece):  # fmt: skip
            # a function's description under its signature: "real arclength(path p);" ¶ "returns the length …"
            joined = f"{signature.rstrip(';').rstrip()} {piece}"
            if out and out[-1].endswith(signature):
                out[-1] = f"{lead} {joined}".lstrip()
            else:
                out.append(joined)
        elif not starts_lower(piece) or ((_ASSIGNS.match(piece) or NAME_LINE.match(piece) or TERM_LINE.match(piece))
                                       and _whole(piece)):
            out.append(piece)  # "rankdir=LR|RL|BT requests a left-to-right … drawing." defines an attribute
        elif not out:
            kept = False  # the rest of a sentence that began before the chunk
        elif not ends_sentence(out[-1]) and (len(out[-1].split()) >= _MIN_BROKEN or _leans_on_next(out[-1])
                                             or (kept_before and out[-1] != pieces[0] and _goes_on(out[-1], piece))):
            out[-1] = out[-1] + " " + piece
        elif kept_before and (_ABBREV_END.search(out[-1]) or _BROKEN_AT.search(out[-1])):
            out[-1] = out[-1] + " " + piece  # "… eines Legatobogens (engl." ¶ "slur), und …": no end, an abbreviation
        elif kept_before and out[-1].endswith(";") and _goes_on(out[-1], piece):
            # a code line ends the sentence's first half: "… with the command import x11colors;" ¶ "and the …"
            out[-1] = out[-1] + " " + piece
        elif kept_before and _term(out[-1]) and _whole(piece) and _opens(piece):  # a definition: "REJECT" ¶ "directs the scanner …"
            out[-1] = out[-1] + " " + piece
        elif kept_before and ends_sentence(out[-1]) and _whole(piece, _MIN_BROKEN) and _opens(piece):
            out.append(piece)  # "set title adds a title." (a sentence opening with a command)
        else:
            kept = False  # the rest of a sentence whose start is not here (after a figure, a page's header)
    if out and _cut_at_end(out[-1]):
        out.pop()
    return out


def _leans_on_next(piece: str) -> bool:
    """A piece that stops on a word no sentence or heading ends with ("Note that", "Instead, they"):
    a short sentence broken by a gap, however few its words."""
    words = piece.split()
    return bool(words) and words[-1].lower() in _NO_END


def _goes_on(before: str, piece: str) -> bool:
    """`piece` opens with a word that carries a sentence on ("to", "and", "for") after a few words
    that do not end one ("This parameter can be used" ¶ "to override …"), not after a caption, a
    running header or a heading in title case ("Debian Policy Manual"; the caller leaves out a
    chunk's first piece too: a title, "Fundamental rights in India" ¶ "the constitution, which …",
    over a passage cut mid-sentence)."""
    first = piece.split()[0].strip("\"'“‘(").lower() if piece.split() else ""
    long_words = [w for w in before.split() if len(w) >= 4]
    titled = bool(long_words) and all(w[:1].isupper() for w in long_words)
    return len(before.split()) >= 2 and first in _CARRIES and not titled and not _LABEL.search(before) \
        and not _VERSION.search(before)


def _term(piece: str) -> bool:
    """A term a definition follows on its own line ("REJECT", "‘-i, --case-insensitive’", "yywrap()"):
    a few words without a final stop, not a page's number or running header ("gnuplot 5.4", "123")."""
    s = piece.strip()
    return (
        0 < len(s.split()) <= 6
        and not ends_sentence(s)
        and _LETTER.search(s) is not None
        and not _VERSION.search(s)
        and not _LABEL.match(s)
    )


def _whole(piece: str, min_words: int = 4) -> bool:
    return ends_sentence(piece) and len(piece.split()) >= min_words


def _opens(piece: str) -> bool:
    """The piece's first word can open a sentence (not "or", "which", "of": the rest of one)."""
    first = piece.split()[0].strip("\"'“‘(").lower() if piece.split() else ""
    return first not in _CONTINUES


def _cut_at_end(piece: str) -> bool:
    s = piece.strip()
    return not ends_sentence(s) and len(s.split()) > 3 and not _BULLET.match(s)


def sentence_spans(words: list[str]) -> list[int]:
    """Word indices after which a sentence ends (the last index always counts)."""
    ends = [i for i, w in enumerate(words) if ends_sentence(w) and _next_starts(words, i)]
    if not ends or ends[-1] != len(words) - 1:
        ends.append(len(words) - 1)
    return ends


def _next_starts(words: list[str], i: int) -> bool:
    """A sentence starts after word `i` (`split_sentences`' rule, on the words either side)."""
    if i + 1 >= len(words):
        return True
    nxt = words[i + 1].lstrip("\"'“‘([")
    starts = bool(nxt) and (nxt[0].isupper() or nxt[0].isdigit() or re.match(r"<[a-z]", nxt) is not None)
    return starts and not _joins(" ".join(words[max(0, i - 1) : i + 1]), words[i + 1])
