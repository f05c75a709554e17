"""The part of a long chunk a prompt shows: the run of whole sentences, within a character budget,
that holds the most of the question's content words.

A 250-word chunk of a manual is ~1,500 characters; eight of them are ~3,000 tokens, twice the
context budget a small local model handles well. The answer usually sits in a few sentences of a
block, so a lower-ranked block shows only the sentences around the question's words, and the block
the search ranked first shows more (`prompts.block_chars`, one budget per rank).
"""

from __future__ import annotations

from collections.abc import Sequence

from assistant.llm.words import content_words
from knowledge.sentences import split_sentences


def budget_of(rank: int, budgets: Sequence[int]) -> int:
    """The character budget of the block at 1-based `rank` (the last budget repeats)."""
    return budgets[min(rank, len(budgets)) - 1]


def window(text: str, question: str, budget: int) -> str:
    """`text` when it fits `budget`; else the consecutive whole sentences within `budget` that hold
    the most of `question`'s content words (the earliest such run), with "…" where text was left out;
    the text cut at `budget` when no sentence fits."""
    if len(text) <= budget:
        return text
    sentences = split_sentences(text)
    asked = set(content_words(question))
    scores = [len(set(content_words(s)) & asked) for s in sentences]
    best, start, end = -1, 0, 0
    for i in range(len(sentences)):
        used, score, j = 0, 0, i
        while j < len(sentences) and used + len(sentences[j]) + 1 <= budget:
            used, score, j = used + len(sentences[j]) + 1, score + scores[j], j + 1
        if j > i and score > best:
            best, start, end = score, i, j
    if best < 0:
        return text[:budget].rsplit(" ", 1)[0] + " …"
    body = " ".join(sentences[start:end])
    return ("… " if start > 0 else "") + body + (" …" if end < len(sentences) else "")
