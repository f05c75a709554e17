"""Word error rate on normalised text (Whisper's English normaliser, from transformers).

The normaliser lowercases, drops punctuation, spells titles out ("Mr." → "mister") and writes
numbers as digits on both sides ("three" → "3"), so only real recognition errors count.
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def _normaliser():
    from transformers.models.whisper.english_normalizer import EnglishTextNormalizer  # noqa: PLC0415

    return EnglishTextNormalizer({})


def normalise(text: str) -> list[str]:
    return _normaliser()(text).split()


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    """Word-level Levenshtein distance (substitutions + deletions + insertions)."""
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        cur = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h))
        prev = cur
    return prev[-1]


def wer(references: list[str], hypotheses: list[str]) -> float:
    """Corpus WER: total word edits / total reference words, after normalising both sides."""
    errors = words = 0
    for ref, hyp in zip(references, hypotheses, strict=True):
        r, h = normalise(ref), normalise(hyp)
        errors += edit_distance(r, h)
        words += len(r)
    return errors / max(words, 1)
