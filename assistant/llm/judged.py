"""The sentence judge's say in the offline answer's ranking.

The extractive answer ranks sentences by what they share with the question (`llm.extractive`). When an
answer is composed, `rejudge` asks the judge (`models.sentence_judge`, a small cross-encoder) about the
best `candidates` sentences, and a later block's sentence a rule put in the ranking (a definition),
and adds `weight` × its odds for each relative to its favourite's (1 for that one, e^-1 a logit below)
before sorting again. The judge decides what goes first; how many close sentences follow is still
decided by the words (`words_score`: the score before the judge). The ranking the "not known"
decision reads is made before this and stays lexical.
The judge learnt English: a German question, and German sentences, are left to the words.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence

import numpy as np

from assistant.llm.sentence_rank import ScoredSentence
from assistant.word_match import german

log = logging.getLogger(__name__)

JudgeFn = Callable[[str, list[str]], np.ndarray]  # (question, sentences) → (n,) logits: does it answer?


def rejudge(judge: JudgeFn | None, question: str, ranked: Sequence[ScoredSentence], *, weight: float,
            candidates: int, later: int) -> list[ScoredSentence]:  # fmt: skip
    """`ranked` with the judge's say (`later`: the blocks the ranking was made from; a sentence of a block
    after them was put in by a rule). Unchanged without a judge, when it fails, for a German question,
    or when fewer than two of the sentences it would read are English."""
    if judge is None or german(question):
        return list(ranked)
    top = [s for i, s in enumerate(ranked) if (i < candidates or s.block > later) and not german(s.text)]
    if len(top) < 2:  # nothing to compare
        return list(ranked)
    rest = [s for s in ranked if not any(s is t for t in top)]
    try:
        logits = np.asarray(judge(question, [judged_text(s) for s in top]), dtype=np.float64).reshape(-1)
        if len(logits) != len(top) or not np.all(np.isfinite(logits)):
            raise ValueError(f"{len(logits)} scores for {len(top)} sentences")
    except Exception as exc:  # noqa: BLE001 - the judge is optional; the lexical ranking still answers
        log.warning("the sentence judge failed (%s); the answer is ranked without it", exc)
        return list(ranked)
    gains = weight * np.exp(logits - logits.max())
    rescored = [dataclasses.replace(s, score=s.score + float(g), words_score=s.score) for s, g in zip(top, gains, strict=True)]
    return sorted(rescored + rest, key=lambda s: -s.score)


def judged_text(s: ScoredSentence) -> str:
    """What the judge reads: the sentence under its heading, as a title over a passage (an entry's
    name, which the sentence opens with, said once)."""
    head = s.heading
    if s.entry and head.endswith(s.entry) and s.text.startswith(s.entry):
        head = head[: -len(s.entry)].rstrip()
    return f"{head}: {s.text}" if head else s.text
