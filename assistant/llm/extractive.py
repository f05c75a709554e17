"""The last link of the chain: an answer without any LLM, always available.

It splits the top evidence chunks into sentences, scores each sentence against the question —
IDF-weighted overlap of content words (light stemming), plus the cosine of an optional embedding
function, plus a small prior for the better-ranked chunk — and answers with the best few sentences,
each cited `[n]` with the number of its context block (evidence position, 1-based, the same
numbering the prompt uses). With no content word in common and no embedding, it says it does not know.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from assistant.events import NOT_KNOWN
from knowledge.types import Hit

log = logging.getLogger(__name__)

EmbedFn = Callable[[list[str]], np.ndarray]  # texts → (n, dim) unit rows

_SENT_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9])|\n\s*\n|\n(?=\s*[-*•]\s)")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been being do does
    did has have had having i me my we our you your he him his she her it its they them their this that
    these those what which who whom whose when where why how not no nor so than too very can could would
    should will shall may might must there here about into over under again further then once all any both
    each few more most other some such only own same just also up down out off tell please know""".split()
)


def content_words(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP]


def _stem(w: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)]
    return w


def split_sentences(text: str) -> list[str]:
    parts = (p.strip() for p in _SENT_SPLIT.split(text))
    return [p for p in parts if len(p) >= 3]


@dataclass
class ScoredSentence:
    text: str
    block: int  # 1-based context block number
    position: int  # sentence index inside its chunk
    score: float


class ExtractiveAnswerer:
    """Composes a short cited answer from the evidence. Stateless, thread-safe."""

    def __init__(
        self,
        max_sentences: int = 3,
        max_hits: int = 5,
        embed: EmbedFn | None = None,
        embed_weight: float = 1.0,
        rank_prior: float = 0.3,
        max_chars: int = 600,
        min_relative: float = 0.2,
    ) -> None:
        self.max_sentences = max_sentences
        self.max_hits = max_hits
        self.embed = embed
        self.embed_weight = embed_weight
        self.rank_prior = rank_prior
        self.max_chars = max_chars
        self.min_relative = min_relative  # a sentence below this fraction of the best score is left out

    def rank(self, question: str, evidence: Sequence[Hit]) -> list[ScoredSentence]:
        sentences: list[ScoredSentence] = []
        for block, hit in enumerate(evidence[: self.max_hits], start=1):
            headings = {_fold(hit.title), _fold(hit.section)} - {""}
            for pos, sent in enumerate(split_sentences(hit.chunk_text)):
                if _fold(sent) in headings:  # the document's title or section heading is no answer
                    continue
                sentences.append(ScoredSentence(sent, block, pos, 0.0))
        if not sentences:
            return []
        q_words = set(content_words(question))
        bags = [set(content_words(s.text)) for s in sentences]
        n = len(sentences)
        df: dict[str, int] = {}
        for bag in bags:
            for w in bag & q_words:
                df[w] = df.get(w, 0) + 1
        lexical = np.array(
            [sum(math.log(1.0 + n / df[w]) for w in bag & q_words) for bag in bags], dtype=np.float64
        )
        top = lexical.max()
        scores = lexical / top if top > 0 else np.zeros(n)
        if self.embed is not None:
            try:
                vecs = np.asarray(self.embed([question] + [s.text for s in sentences]), dtype=np.float64)
                scores = scores + self.embed_weight * (vecs[1:] @ vecs[0])
            except Exception:  # noqa: BLE001 - the embedding is optional; lexical still answers
                log.warning("embedding sentences for the extractive answer failed; lexical overlap only")
                if top <= 0:
                    return []
        elif top <= 0:
            return []
        for s, value in zip(sentences, scores, strict=True):
            s.score = float(value) + self.rank_prior / s.block
        return sorted(sentences, key=lambda s: (-s.score, s.block, s.position))

    def answer(self, question: str, evidence: Sequence[Hit]) -> str:
        ranked = self.rank(question, evidence)
        if not ranked:
            return NOT_KNOWN
        picked: list[ScoredSentence] = []
        length = 0
        floor = ranked[0].score * self.min_relative
        for s in ranked:
            if len(picked) >= self.max_sentences or s.score < floor:
                break
            if picked and length + len(s.text) > self.max_chars:
                continue
            picked.append(s)
            length += len(s.text)
        return " ".join(_cite(s.text, s.block) for s in picked)


def _fold(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _cite(sentence: str, block: int) -> str:
    """'Text.' → 'Text [n].' (the citation inside the sentence's final punctuation)."""
    s = " ".join(sentence.split())
    end = s[-1] if s[-1:] in ".!?" else "."
    body = s[:-1] if s[-1:] in ".!?" else s
    return f"{body} [{block}]{end}"
