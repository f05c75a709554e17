"""LocalAgreement's word comparison: which leading words two passes over the same speech share, and
the committed prefix as written (the streaming transcriber, `models/streaming.py`, commits them)."""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\w']+")


def words(text: str) -> list[str]:
    """Words compared by the local agreement: lower case, punctuation dropped."""
    return [w for w in _WORD.split(text.lower()) if w]


def agreed_prefix(a: str, b: str) -> int:
    """How many leading words two hypotheses share (after `words`)."""
    n = 0
    for x, y in zip(words(a), words(b), strict=False):
        if x != y:
            break
        n += 1
    return n


def mid_sentence(text: str) -> str:
    """A committed prefix without the stop the pass put after its last word: forced as the
    decoder's prefix, "… made still?" ends the transcript there."""
    return text.rstrip(" .?!…,;:-")


def leading_words(text: str, n: int) -> str:
    """The first `n` words of `text` as written (punctuation kept)."""
    if n <= 0:
        return ""
    out: list[str] = []
    count = 0
    for token in text.split():
        out.append(token)
        count += len(words(token))
        if count >= n:
            break
    return " ".join(out)
