"""Which pieces of a chunk's text are never quoted as an answer, and the clean-up of the ones that are.

A PDF's text comes with headings, labels, code, plot labels, pointers ("See below") and references
glued around its sentences; the extractive answer reads the sentences out, so these tests decide what
a sentence is (`ExtractiveAnswerer.sentences`)."""

from __future__ import annotations

import re

from assistant.llm.words import WORD
from knowledge.sentences import LIST_MARK, NAME_LINE, SIGNATURE, ends_sentence, split_sentences

# three or more upper-case words at the start of a sentence that goes on in lower case
_CAPS_HEAD = re.compile(r"^((?:[A-ZÄÖÜ][A-ZÄÖÜ0-9'’&/-]+[ \t]+){3,})(\S.*)$", re.S)
# a word that never ends a sentence (an article, a preposition, a conjunction)
_DANGLING = frozenset(
    "a an the and or but nor of to in on at by for with from as that than which whose if is are was were "
    "der die das den dem des ein eine und oder von zu mit für auf dass als".split()
)
_MARKUP = re.compile(r"[<>{}=;%|\\]")
# a pointer elsewhere ("See set xtics (p. 199).", "For details, see below."), never an answer
POINTER = re.compile(r"^\W*(see|refer to|siehe)\b|,\s*see\b|\bsee (below|above|later)\b", re.I)
_PERCENT = re.compile(r"^\(?[\d.,]+%[),.;:]*$")
# a word: a letter then letters, digits, apostrophes; not a note of music ("b8", "d16", "c''4")
_PLAIN = re.compile(r"^[\"'“‘(]?(?![^\W\d_]['’]*\d)[^\W\d_][\w'’-]*[\"'”’),.:;!?]*$")
MIN_WORDS = 4  # a shorter piece is a label or a caption, never quoted alone (unless it states a value)
LIST_INTRO_WORDS = 60  # a sentence ending in ":" takes the list's first item when both together are this short
PROSE_WORDS = 10  # words before a reference line's first link or section name: more are prose
_REFERENCE = re.compile(r"\b(?:Section|Abschnitt|Chapter|Kapitel)\s+(?:[“\"‘]|[\dA-Z][\d.]*\s+\[)|https?://\S+.*https?://", re.I)
# one reference: 'Section “Transpose” in Notation Reference,', 'Section 3.1.3 [Ties and slurs], page 25,'
_SECTION_REF = re.compile(r"\b(?:Section|Abschnitt|Chapter|Kapitel)\s+(?:[“\"‘][^”\"’]*[”\"’](?:\s+(?:in|im)\s+[A-Z][\w-]*"
                          r"(?:\s+[A-Z][\w-]*)*)?|[\dA-Z][\d.]*\s+\[[^\]]*\](?:,?\s+(?:page|Seite)\s+\d+)?),?")
_VERB = re.compile(r"\b(is|are|was|were|can|must|should|will|ist|sind|kann|muss)\b")


# a definition list's entry: one name, a colon, its description ("RandomSeed: One can modify …",
# "extra: This priority is deprecated."); not a label that introduces what follows
_ENTRY = re.compile(r"^([A-Za-z\\][\w.\\-]*[A-Za-z0-9]):\s+[\"“(]?[A-Za-z]")
_LABELS = frozenset("note notes example examples warning caution tip important hint see usage syntax description "
                    "default defaults remark remarks result results solution answer question "
                    "hinweis beispiel achtung".split())


# a command-line option's entry: "--bw-threshold threshold This parameter is used when …"
_OPTION_ENTRY = re.compile(r"^(--?[a-z][\w-]*[a-z0-9])(?:[ =][a-z_]+)?\s+[A-Za-z]")


def entry_term(sentence: str) -> str:
    """The name a definition list's entry opens with (a term and a colon, or a command-line option), or ""."""
    m = _ENTRY.match(sentence)
    if m and m.group(1).lower() not in _LABELS and len(m.group(1)) <= 40:
        return m.group(1)
    m = _OPTION_ENTRY.match(sentence)
    return m.group(1) if m else ""


def entries_of(text: str, pieces: list[str]) -> list[str]:
    """For each of `text`'s sentences (`pieces`, in order), the definition list entry it describes ("" for
    none): an entry's own sentence, the rest of its paragraph, and a note right after it."""
    out: list[str] = []
    entry, entry_para, para, cursor = "", -1, 0, 0
    for piece in pieces:
        at = text.find(piece[:24], cursor)
        if at >= 0:  # a piece the reader rejoined may not be found: it stays in the paragraph before
            para += text.count("\n\n", cursor, at)
            cursor = at
        term = entry_term(piece)
        if term:
            entry, entry_para = term, para
        elif para != entry_para:
            entry, entry_para = (entry, para) if para == entry_para + 1 and piece.startswith("Note") else ("", -1)
        out.append(entry)
    return out


_NUMBERED_HEAD = re.compile(r"^(?:\d+|[A-Z])(?:\.\d+)+\.?\s+\S")  # "3.1.1 Bar lines and bar checks", "A.8.1 Jazz combo"
NUMBERED_HEAD_WORDS = 12


def is_heading(piece: str) -> bool:
    """A short line without final punctuation that is not a list item: a heading or a label; or a
    numbered section's title that a chunk carries ("3.1.1 Bar lines and bar checks")."""
    s = piece.strip()
    if ends_sentence(s) or s.startswith(("-", "*", "•")):
        return False
    return len(s.split()) <= 5 or (_NUMBERED_HEAD.match(s) is not None and len(s.split()) <= NUMBERED_HEAD_WORDS)


def glued_heading(piece: str) -> tuple[str, str]:
    """A capitalised heading the PDF's layout glued to the sentence after it ("RECOVERING DATA FROM
    DAMAGED FILES bzip2 compresses files …"): (heading, sentence); ("", piece) when there is none."""
    m = _CAPS_HEAD.match(piece)
    if not m or not WORD.search(m.group(2)) or m.group(2).upper() == m.group(2):
        return "", piece
    return m.group(1).strip(), m.group(2)


def unfinished(piece: str) -> bool:
    """A sentence cut off mid-phrase: no final punctuation and its last word needs a following one."""
    s = piece.strip()
    words = s.split()
    # or a list's item that goes on in the next one: "2. The left point of the first interval,"
    return bool(words) and not ends_sentence(s) and (words[-1].lower() in _DANGLING or s.endswith(","))


def code_after(piece: str) -> bool:
    """A piece without a final stop whose text after its last sentence end is code or markup."""
    s = piece.strip()
    if ends_sentence(s):
        return False
    head = finished_part(s)
    return bool(head) and _MARKUP.search(s[len(head):]) is not None


_LATEX_LINE = re.compile(r"^\s*\\(?:begin|end)\{")  # "\begin{questionmult}{himalaya} Among the following …"


def code_like(piece: str) -> bool:
    """Mostly markup or code (`<?xml version="1.0"?> <fontconfig> …`): under half its tokens are words;
    or a LaTeX environment's line, whatever words its example holds."""
    if not _MARKUP.search(piece):
        return False
    if _LATEX_LINE.match(piece):
        return True
    tokens = piece.split()
    marked = sum(bool(_MARKUP.search(t)) and not _PERCENT.match(t) for t in tokens)  # "%%", "abcd.|", not "5%"
    return sum(bool(_PLAIN.match(t)) for t in tokens) < len(tokens) / 2 or (marked >= 2 and len(tokens) <= 8)


def figure_text(piece: str) -> bool:
    """Labels of a figure or a table of numbers run together ("0 0.2 0.4 0.6 0.8 1 sin(2πx) cos(2πx)"):
    under a third of its tokens are words of three letters or more."""
    tokens = piece.split()
    return sum(bool(re.fullmatch(r"[\"'“‘(]?[^\W\d_]{3,}[\w'’-]*[\"'”’),.:;!?]*", t)) for t in tokens) * 3 < len(tokens)


def finished_part(piece: str) -> str:
    """The piece up to its last sentence end ("… by fontconfig. please note that" → "… by
    fontconfig."), or "" when nothing before the cut ends a sentence."""
    ends = [m.end() for m in re.finditer(r"[.!?][\"'”’)\]]*(?=\s)", piece)]
    return piece[: ends[-1]].strip() if ends else ""


def repeats(a: str, b: str) -> bool:
    """`a` and `b` (folded) are the same sentence, or one holds the other whole (a repeat, not a
    short phrase that happens to occur in a longer sentence)."""
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    return short == long or (len(short.split()) >= 6 and f" {short} " in f" {long} ")


def fold(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def references(sentence: str) -> bool:
    """A line that only says where to read more ("Notation Reference: Section “Beams” in Notation
    Reference", a run of URLs): short, and naming a section in quotes or two links after a few
    words, none a verb ("This function began as a copy of … in the Padding Content (http://…)" says
    something)."""
    before = _REFERENCE.split(sentence)[0]
    if _SECTION_REF.search(sentence) and len(_SECTION_REF.findall(sentence)) >= 2:  # a long list of them
        before = _SECTION_REF.sub(" ", sentence)
        return len(before.split()) < PROSE_WORDS and not _VERB.search(before)
    return bool(_REFERENCE.search(sentence)) and len(sentence.split()) <= 24 and len(before.split()) < PROSE_WORDS \
        and not _VERB.search(before)


LABEL_WORDS = 8  # a chunk's first piece this short, ending in ":", labels the code after it
CODE_CHARS = 120  # an example's code quoted up to this length (at a space), then "…"
_INTRO = re.compile(r"(:|\bthe following\b[^.]*\.)\s*$", re.I)


def code_examples(text: str) -> list[str]:
    """Code a line of prose introduces ("rectangular block with rounded corners:" ¶ "block
    roundrectangle(object body, …)"; "add the following content to msmtprc …" ¶ "account default host
    … port 587 …"), as one piece: "INTRO CODE…". The answer to "which function…" or "what port…" is
    often only in the example; the code is cut short, since it is read out."""
    pieces = split_sentences(text)
    out = []
    for i, (intro, code) in enumerate(zip(pieces, pieces[1:], strict=False)):
        named = NAME_LINE.match(intro) is not None  # "slidy.duration — …" opens a sentence in lower case
        # the rest of a sentence that began before the chunk or before a break; not a short label that
        # opens the chunk ("rectangular block with rounded corners:" ¶ "block roundrectangle(…);")
        label = i == 0 and intro.rstrip().endswith(":") and len(intro.split()) <= LABEL_WORDS
        if intro[:1].islower() and not named and not label and (i == 0 or re.search(r"\w\s*$", pieces[i - 1])
                                                               and not _code_piece(pieces[i - 1])):
            continue
        # a reference page's name line introduces its synopsis ("paper.type — Select the paper type." ¶
        # "<xsl:param name="paper.type">USletter</xsl:param>": the default is only in the code)
        if len(WORD.findall(intro)) < 2 or not (_INTRO.search(intro) or named) or code_like(intro) or not _code_piece(code):
            continue
        default = param_default(code) if named else None
        if default is not None:  # "paper.type — Select the paper type (default: USletter)."
            head = intro.strip()
            stop = head[-1] if head[-1:] in ".?!" else "."
            out.append(f"{head.rstrip('.?!: ')} (default: {default}){stop}")
            continue
        short = code if len(code) <= CODE_CHARS else code[:CODE_CHARS].rsplit(" ", 1)[0] + " …"
        out.append(f"{intro.strip().lstrip('•◦▪-* ').rstrip()} {short}")
    return out


def _code_piece(piece: str) -> bool:
    """Code or a configuration: markup-like, or opening in lower case without a sentence's end."""
    s = piece.strip()
    return code_like(s) or bool(SIGNATURE.match(s)) or (s[:1].islower() and not ends_sentence(s) and len(s.split()) >= 3)


_PARAM = re.compile(r'^<xsl:param name="[^"]+"(?:\s+select="(?P<select>[^"]*)")?\s*(?:/>|>(?P<body>.*?)</xsl:param>)$', re.S)
_VALUE_OF = re.compile(r'<xsl:value-of select="([^"]*)"\s*(?:/>|></xsl:value-of>)|<xsl:text>([^<]*)</xsl:text>')


def param_default(code: str) -> str | None:
    """The default an XSLT parameter's synopsis sets, as it reads: `<xsl:param name="paper.type">USletter
    </xsl:param>` → "USletter"; `select="$body.font.master * 0.8"` with `<xsl:text>pt</xsl:text>` →
    "$body.font.master * 0.8 pt"; an empty one → "empty". None for anything else (a choice, other markup):
    quoted as code. The name line before it already names the parameter; the markup around the value
    would be read out, and cut short, before the value."""
    m = _PARAM.match(code.strip())
    if m is None:
        return None
    if m.group("select") is not None:
        value = m.group("select")
    else:
        body = (m.group("body") or "").strip()
        if "<" not in body:
            value = body
        elif not _VALUE_OF.sub("", body).strip():
            value = " ".join(a or b for a, b in _VALUE_OF.findall(body))
        else:
            return None
    value = " ".join(value.split())
    return value.strip("'") if value.strip("'") else "empty"


def with_first_items(pieces: list[str]) -> list[str]:
    """A sentence that introduces a list ("… with a priority calculated as follows:") with the list's
    first item after it ("… as follows: Start with a priority of 40."): read out alone, it promises
    what it does not say. The item stays a sentence of its own too."""
    out = list(pieces)
    for i, (intro, item) in enumerate(zip(pieces, pieces[1:], strict=False)):
        whole = ends_sentence(item) and not item.rstrip().endswith(":") and len(item.split()) > MIN_WORDS
        if intro.rstrip().endswith(":") and len(WORD.findall(intro)) >= MIN_WORDS and LIST_MARK.match(item) and whole and len(f"{intro} {item}".split()) <= LIST_INTRO_WORDS:
            out[i] = f"{intro.rstrip()} {LIST_MARK.sub('', item, count=1)}"
    return out


def value_row(piece: str) -> bool:
    """A short sentence that states a value: a table row ("65534: User nobody.") or an option's
    default after its description ("Defaults to 300.")."""
    s = piece.strip()
    return len(s.split()) >= 2 and ends_sentence(s) and bool(re.search(r"\d", s) or re.match(r"^\S+:\s", s))
