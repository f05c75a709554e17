"""Text as a PDF's layout leaves it, made into the words a reader sees.

Typeset PDFs (LaTeX, Texinfo, DocBook manuals) store "file" with the one-glyph ligature "ﬁ" and break
long words at the end of a line ("decompres- sion" once the lines are joined). Left as they are,
the full-text index never matches "file" or "decompression", the embedder sees two half words and
an answer quotes them. `clean` maps the Latin ligatures to their letters and joins a word broken
at a line end; a hyphen that belongs to the text stays ("end-of-stream", "pre- and post-").
"""

from __future__ import annotations

import re

VERSION = 1  # part of a PDF's content key (knowledge/discover.py): a change here re-reads PDFs once

_LIGATURES = str.maketrans(
    {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl", "\ufb05": "st", "\ufb06": "st"}
)

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


def clean(text: str) -> str:
    """`text` with ligatures spelt out and line-end hyphenation undone."""
    if not text:
        return text
    text = text.translate(_LIGATURES)
    if "-" not in text:
        return text
    return _BROKEN.sub(_join, text)
