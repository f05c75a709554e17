"""The last link of the chain: an answer without any LLM, always available.

It takes the whole sentences of the top evidence chunks (`knowledge.sentences.whole_sentences`: a
piece cut by a chunk edge is left out, a sentence broken by a page break is joined), drops repeats
(chunk overlap repeats text), and scores each one against the question: IDF-weighted overlap of
content words (light stemming, English and German stop words), plus the cosine to the question of
an optional embedding function — one batch per answer, for the best `embed_candidates` sentences by
overlap — plus a prior for the better-scored chunk (`rank_prior` × the chunk's retrieval score relative
to the first's, squared: retrieval judged the whole chunk, a better signal than one sentence's words;
the power and 1.5 have the best mean right-answer rate over the select halves of the manuals,
nq_oracle, xquad_en and xquad_de), and for a question asking how many, how
long or when, a lower score for a sentence that holds no number; for a who/where/when question, a
higher one for a sentence holding a name the question does not, or a date, and for a question
for a default, one that states it (`answer_kind`). The answer opens with the best sentence;
at most one more follows for a factual question (two otherwise), only from the same document and
only when it scores close to the best; a best sentence that refers back ("This tag says …") is
preceded by the sentence it refers to instead. With the optional sentence judge
(`llm.judged`), a small cross-encoder picks among the best few when the answer is composed. Each sentence is cited `[n]` with the number of its context
block (evidence position, 1-based, the numbering the prompt uses). With no content word in common
and no embedding, it says it does not know. With `rank_by_embedding` off, the embedding only measures
the cosine of the first `similarity_candidates` sentences for the answerability decision (the app's
default: `llm.extractive_embedding` is off, the ranking stays lexical).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import re
from collections.abc import Callable, Sequence

import numpy as np

from assistant.events import NOT_KNOWN
from assistant.llm.asked import (
    ASKS_NUMBER,
    NUMBER,
    answer_kind,
    defines,
    defines_asked,
    is_factual,
    lacks_asked_number,
)
from assistant.llm.companions import antecedent, definition_first, entry_named, follow_on, later_match
from assistant.llm.judged import JudgeFn, rejudge
from assistant.llm.sentence_filters import (
    MIN_WORDS,
    POINTER,
    code_after,
    code_examples,
    code_like,
    entries_of,
    figure_text,
    finished_part,
    fold,
    glued_heading,
    is_heading,
    references,
    repeats,
    unfinished,
    value_row,
    with_first_items,
)
from assistant.llm.sentence_rank import (
    ANSWER_TYPE,
    HAND,
    NO_NUMBER,
    ScoredSentence,
    SentenceWeights,
    feature_matrix,
    pairs_of,
)
from assistant.llm.words import content_words, raw_content_words, stem
from knowledge.sentences import NAME_LINE, split_sentences, whole_sentences
from knowledge.types import Hit, LibraryWords

log = logging.getLogger(__name__)

EmbedFn = Callable[[list[str]], np.ndarray]  # texts → (n, dim) unit rows

__all__ = ["ExtractiveAnswerer", "ScoredSentence", "answer_kind", "content_words", "is_factual", "lacks_asked_number",
           "raw_content_words", "split_sentences", "stem"]

LATER_BLOCKS = 8  # context blocks a definition is looked for in (the prompt's)
CODE_POSITION = 10_000  # code examples are numbered apart: no prose sentence stands next to one


class ExtractiveAnswerer:
    """Composes a short cited answer from the evidence. Stateless, thread-safe."""

    def __init__(
        self,
        max_sentences: int = 3,
        max_hits: int = 3,
        embed: EmbedFn | None = None,
        embed_weight: float = 1.0,
        rank_prior: float | None = None,
        max_chars: int = 450,
        min_relative: float = 0.6,
        embed_candidates: int = 16,
        rank_by_embedding: bool = True,
        similarity_candidates: int = 0,
        judge: JudgeFn | None = None,
        judge_weight: float = 1.0,
        judge_candidates: int = 6,
    ) -> None:
        self.max_sentences = max_sentences
        self.max_hits = max_hits
        self.embed = embed
        # with `embed`: rank by the cosine too, or only measure it for the answerability decision
        self.rank_by_embedding = rank_by_embedding
        self.similarity_candidates = similarity_candidates  # the best of the first k by overlap
        self.embed_weight = embed_weight
        # the sentence score's weights (`sentence_rank`); `rank_prior`: the chunk prior's weight instead
        self.weights = SentenceWeights.load()
        if rank_prior is not None:
            self.weights = SentenceWeights({**self.weights.values, "chunk_prior": rank_prior})
        self.max_chars = max_chars
        self.min_relative = min_relative  # a further sentence must score this fraction of the best
        self.embed_candidates = embed_candidates
        # the sentence judge (`models.sentence_judge`) reorders the best `judge_candidates` when an
        # answer is composed (`judged`): the ranking the answerability decision reads stays lexical
        self.judge = judge
        self.judge_weight = judge_weight
        self.judge_candidates = judge_candidates

    def sentences(self, evidence: Sequence[Hit]) -> list[ScoredSentence]:
        """The whole, distinct sentences of the top chunks, unscored, in evidence order."""
        out: list[ScoredSentence] = []
        seen: list[str] = []
        examples: list[str] = []
        for block, hit in enumerate(evidence[: self.max_hits], start=1):
            headings = {fold(hit.title), fold(hit.section)} - {""}
            under = hit.section
            pieces = with_first_items(whole_sentences(hit.chunk_text))
            for pos, (sent, entry) in enumerate(zip(pieces, entries_of(hit.chunk_text, pieces), strict=True)):
                caps, sent = glued_heading(sent)
                if caps:
                    under = caps
                # "… please note that": the rest is lost in the layout; "… will not. set term x11 font
                # "arial,15" set title ’{/=20 Big}’": the example's code glued to the sentence before it
                if unfinished(sent) or code_after(sent):
                    sent = finished_part(sent)
                    if not sent:
                        continue
                key = fold(sent)
                if key and is_heading(sent):
                    under = sent
                if not key or key in headings or is_heading(sent):  # a title or heading is no answer
                    continue
                if len(sent.split()) < MIN_WORDS and not value_row(sent):  # a label or a caption ("Vale of Glamorgan.")
                    continue
                if code_like(sent) or figure_text(sent):  # markup, code, a plot's axis labels: never read out
                    continue
                if POINTER.search(sent) and len(sent.split()) <= 14:  # "See below for an illustration."
                    continue
                if references(sent):  # "Music Glossary: Section “beam” in Music Glossary.": where to read, no answer
                    continue
                if any(repeats(key, k) for k in seen):  # overlap between chunks repeats text
                    continue
                seen.append(key)
                # "If 0, the questions will always show …" is about the entry it belongs to (ShuffleQuestions)
                out.append(ScoredSentence(sent, block, pos, 0.0, hit.source_path, heading=f"{under} {entry}".strip(),
                                          section=hit.section, entry=entry))
            for j, example in enumerate(code_examples(hit.chunk_text)):
                key = fold(example)  # it holds its introducing sentence: a repeat only of another example
                if key and not any(repeats(key, k) for k in examples):
                    examples.append(key)
                    # a reference page's name line with its synopsis ("paper.type — Select the paper
                    # type. <xsl:param …>USletter</xsl:param>") stands in for the name line alone, and
                    # the code a sentence introduces for it ("So the command … is:" alone says nothing)
                    named = next((s for s in out if s.block == block and (NAME_LINE.match(s.text) or s.text.endswith(":"))
                                  and example.startswith(s.text.rstrip(".?!: "))), None)  # fmt: skip
                    if named is not None:
                        named.text = example
                        continue
                    out.append(ScoredSentence(example, block, CODE_POSITION + j, 0.0, hit.source_path, heading=hit.section,
                                              section=hit.section))
        return out

    def rank(
        self, question: str, evidence: Sequence[Hit], words: LibraryWords | None = None
    ) -> list[ScoredSentence]:
        return self.rank_with_similarity(question, evidence, words)[0]

    def rank_with_similarity(
        self, question: str, evidence: Sequence[Hit], words: LibraryWords | None = None
    ) -> tuple[list[ScoredSentence], float | None]:
        """The ranked sentences, and the best cosine to the question among the first
        `similarity_candidates` sentences by overlap and chunk rank (0.0 without any sentence, None
        when not measured or the embedding failed). That cosine is measured even when no sentence
        shares a word with the question (then nothing is ranked).

        A question word weighs by how rare it is among these sentences, and, with the library's word
        counts (`words`), by how rare it is in the library: "flex" in a question about the flex
        manual is in most of its sentences that match anything, and says little. The cosine's
        candidates are chosen without the library's counts (the answerability model was fitted so)."""
        sentences = self.sentences(evidence)
        if not sentences:
            return [], (0.0 if self.embed is not None and self.similarity_candidates else None)
        # a sentence's camel-case names give their parts ("two voices per staff" finds TwoVoicesPerStaff);
        # the question's do not: its "LilyPond" would count three times ("lilypond", "lily", "pond")
        q_order = content_words(question)
        q_words = set(q_order)
        texts = [content_words(f"{s.heading} {s.text}", name_parts=True) for s in sentences]  # "Attendance: Students must attend …"
        bags = [set(t) for t in texts]
        n = len(sentences)
        df: dict[str, int] = {}
        for bag in bags:
            for w in bag & q_words:
                df[w] = df.get(w, 0) + 1
        local = {w: math.log(1.0 + n / df[w]) for w in df}
        weight = dict(local)
        if isinstance(words, LibraryWords):  # the product: rare here and rare in the library
            rare = {w: words.idf(w, stem) for w in df}
            if all(v is not None for v in rare.values()):
                weight = {w: local[w] * rare[w] for w in df}  # type: ignore[operator]
        for s, bag in zip(sentences, bags, strict=True):
            s.coverage = len(bag & q_words) / len(q_words) if q_words else 0.0
        lexical = np.array([sum(local[w] for w in bag & q_words) for bag in bags], dtype=np.float64)
        top = lexical.max()
        # the sentences' scores: `local_scores` (overlap weighed within the evidence) picks the
        # cosine's candidates, `scores` (weighed by the library's counts too) ranks
        overlap = lexical / top if top > 0 else np.zeros(n)
        no_number, kind = _asked(question, sentences)
        local_scores = _shaped(overlap, no_number, kind)
        if weight != local:
            weighted = np.array([sum(weight[w] for w in bag & q_words) for bag in bags], dtype=np.float64)
            overlap = weighted / weighted.max() if top > 0 else np.zeros(n)
        weight_of = _block_weights(evidence[: self.max_hits])
        prior = np.array([weight_of[s.block - 1] for s in sentences])
        # without embeddings, the chunk's rank counts for a sentence that shares a word with the
        # question, or stands next to one that does (the answer often comes right after the sentence
        # that repeats the question, or names the subject just before it): a sentence of the top
        # chunk about something else is no answer
        matched = {(s.block, s.position) for s, lex in zip(sentences, lexical, strict=True) if lex > 0}
        related = np.array([any((s.block, s.position + d) in matched for d in (-1, 0, 1)) for s in sentences])
        ranking = self.embed is not None and self.rank_by_embedding
        k = max(self.embed_candidates if ranking else 0, self.similarity_candidates if self.embed else 0)
        best_sim: float | None = None
        cosine = np.zeros(n)
        if k:
            # the hand-set prior weight: the answerability model was fitted on the cosine of these candidates
            cand = np.argsort(-(local_scores + HAND["chunk_prior"] * prior), kind="stable")[:k]
            try:
                vecs = np.asarray(self.embed([question] + [sentences[i].text for i in cand]), dtype=np.float64)
                sims = vecs[1:] @ vecs[0]
                if self.similarity_candidates:
                    best_sim = float(sims[: self.similarity_candidates].max())
                for i, sim in zip(cand, sims, strict=True):
                    sentences[i].similarity = float(sim)
                if ranking:
                    base = np.full(n, float(sims.min()) if len(sims) else 0.0)
                    base[cand] = sims
                    cosine = self.embed_weight * base
                    related[:] = True  # the similarity grades every sentence's relation to the question
            except Exception:  # noqa: BLE001 - the embedding is optional; lexical still answers
                log.warning("embedding sentences for the extractive answer failed; lexical overlap only")
                ranking = False
        if top <= 0 and not ranking:
            return [], best_sim
        x = self.features(sentences, texts, q_order, overlap, prior * related, no_number, kind)
        for s, value in zip(sentences, self.weights.score(x) + cosine, strict=True):
            s.score = float(value)
        ranked = sorted(sentences, key=lambda s: (-s.score, s.block, s.position))
        ranked = self._with_later_definition(question, evidence, ranked)
        return later_match(q_words, evidence[self.max_hits : LATER_BLOCKS], self.max_hits + 1, ranked), best_sim

    def judged(self, question: str, ranked: Sequence[ScoredSentence]) -> list[ScoredSentence]:
        """`ranked` with the sentence judge's say (`llm.judged.rejudge`)."""
        return rejudge(self.judge, question, ranked, weight=self.judge_weight, candidates=self.judge_candidates,
                       later=self.max_hits)  # fmt: skip

    def _with_later_definition(self, question: str, evidence: Sequence[Hit], ranked: list[ScoredSentence]) -> list[ScoredSentence]:
        """A "what is X" question none of the top chunks' sentences defines X for: the first sentence
        of a later context block that does ("… the VerticalAxisGroup 'graphical object' (commonly
        called 'grob')") joins the ranking just close enough to the best to go first
        (`definition_first`); the best's score and the rest stay as they were."""
        if not ranked or not defines_asked(question) or any(defines(question, s.text) for s in ranked):
            return ranked
        for block, hit in enumerate(evidence[self.max_hits : LATER_BLOCKS], start=self.max_hits + 1):
            for pos, sent in enumerate(whole_sentences(hit.chunk_text)):
                if defines(question, sent) and not code_like(sent) and len(sent.split()) >= MIN_WORDS:
                    found = ScoredSentence(sent, block, pos, ranked[0].score * self.min_relative, hit.source_path,
                                           heading=hit.section, section=hit.section)  # fmt: skip
                    return [*ranked, found]
        return ranked

    @staticmethod
    def features(sentences: Sequence[ScoredSentence], texts: Sequence[list[str]], q_order: list[str], overlap: np.ndarray,
                 prior: np.ndarray, no_number: np.ndarray, kind: np.ndarray) -> np.ndarray:  # fmt: skip
        """The `sentence_rank.FEATURES` of each sentence (`texts`: its heading's and its content words;
        `no_number`, `kind`: `_asked`)."""
        q_words, q_pairs = set(q_order), pairs_of(q_order)
        heads = [set(content_words(s.heading)) for s in sentences]
        return feature_matrix(
            overlap=overlap,
            no_number=no_number,
            answer_type=kind,
            chunk_prior=prior,
            coverage=np.array([len(set(t) & q_words) / len(q_words) if q_words else 0.0 for t in texts]),
            heading_overlap=np.array([len(h & q_words) / len(q_words) if q_words else 0.0 for h in heads]),
            opens_chunk=np.array([float(s.position == 0) for s in sentences]),
            words=np.array([len(s.text.split()) for s in sentences], dtype=np.float64),
            pairs=np.array([len(pairs_of(t) & q_pairs) / len(q_pairs) if q_pairs else 0.0 for t in texts]),
        )

    def compose(self, question: str, ranked: Sequence[ScoredSentence]) -> str:
        """The answer from ranked sentences: the best first (a close one that defines what a "what is
        X" question asks about before it), then at most one close one from the same
        document (two for a question that is not factual), within `max_chars`. A best sentence that
        leans on the one before it ("This tag says to …", "It is …") gets that one in front of it:
        what "this" is comes first, and the two are the answer."""
        if not ranked:
            return NOT_KNOWN
        ranked = definition_first(question, ranked, self.min_relative)
        best = ranked[0]
        limit = min(self.max_sentences, 2 if is_factual(question) else 3)
        before = antecedent(best, ranked) if limit >= 2 else None
        if before is not None:
            return " ".join(_cite(s.text, s.block) for s in (before, best))
        entry = entry_named(best)
        if entry:  # "When this parameter is non-zero, …" read out needs to say which parameter
            best = dataclasses.replace(best, text=f"{entry}: {best.text}")
        # how close a sentence is to the best is the words' measure: the judge picks the first, not how many follow
        close = [s for s in ranked[1:] if s.source == best.source and _words(s) >= _words(best) * self.min_relative]
        after = follow_on(best, ranked) if limit >= 2 else None
        if after is not None:
            close = [after] + [s for s in close if s is not after]
        picked = [best]
        length = len(best.text)
        for s in close:
            if len(picked) >= limit:
                break
            # a code example holds the sentence that introduces it: one of the two is said, the
            # longer when it fits ("This example draws …: size(100,0); draw(…)")
            same = next((i for i, p in enumerate(picked) if repeats(fold(p.text), fold(s.text))), None)
            if same is not None:
                if len(s.text) > len(picked[same].text) and length - len(picked[same].text) + len(s.text) <= self.max_chars:
                    length += len(s.text) - len(picked[same].text)
                    picked[same] = s
                continue
            if length + len(s.text) > self.max_chars:
                continue
            picked.append(s)
            length += len(s.text)
        return " ".join(_cite(s.text, s.block) for s in picked)

    def answer(self, question: str, evidence: Sequence[Hit]) -> str:
        return self.compose(question, self.judged(question, self.rank(question, evidence)))


def _words(s: ScoredSentence) -> float:
    return s.score if s.words_score is None else s.words_score


SCORE_POWER = 2  # a block's prior: its retrieval score relative to the first's, squared


def _asked(question: str, sentences: Sequence[ScoredSentence]) -> tuple[np.ndarray, np.ndarray]:
    """Per sentence, 1.0 where the question asks for a number or a date and it holds none, and 1.0
    where it holds the kind of answer asked for (a name, a date, a cause, a definition)."""
    asks = bool(ASKS_NUMBER.search(question))
    no_number = np.array([float(asks and not NUMBER.search(s.text)) for s in sentences])
    kind = np.array([float(answer_kind(question, s.text, s.entry) or defines(question, s.text)) for s in sentences])
    return no_number, kind


def _shaped(overlap: np.ndarray, no_number: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """Overlap shaped by the kind of answer asked, with the hand-set weights: what picks the
    sentences whose cosine is measured (the answerability model was fitted on those)."""
    return overlap * np.where(no_number > 0, NO_NUMBER, 1.0) + ANSWER_TYPE * kind


def _block_weights(blocks: Sequence[Hit]) -> list[float]:
    """How much each block's retrieval vouches for its sentences: its score relative to the first
    block's, squared (a second chunk scored nearly as high as the first is nearly as likely to hold
    the answer; one far below is not), or 1 / rank when the scores are not all positive."""
    scores = [h.score for h in blocks]
    if scores and all(s > 0 for s in scores):
        return [(s / scores[0]) ** SCORE_POWER for s in scores]
    return [1.0 / b for b in range(1, len(blocks) + 1)]


# a list's bullet, or a clause's number in parentheses: "(1)", "(a)", "(iv)", "2)"; or an item's number
# before a capital, the space after its dot lost in some PDFs: "4.The stylesheet adds …", "3. The …"
_ITEM = re.compile(r"^(?:(?:[-*•]|\(?(?:\d{1,2}|[a-z]|[ivx]{1,4})\))\s+|\d{1,2}\.\s*(?=[A-Z][a-z]))")
# the sections a changelog line is about: "9.1.1 No package is …", "2.3, 4.5 & 12.5 The copyright …"
_SECTIONS = re.compile(r"^\d{1,2}(?:\.\d{1,2})+(?:\s*(?:,|&|and)\s*\d{1,2}(?:\.\d{1,2})+)*\s+(?=[A-Z][a-z])")


def _cite(sentence: str, block: int) -> str:
    """'Text.' → 'Text [n].' (the citation inside the sentence's final punctuation)."""
    s = " ".join(sentence.split())
    s = _SECTIONS.sub("", _ITEM.sub("", s))  # a list item or a numbered paragraph ("(1) Die Anmeldung …") is read as a sentence
    body = s.rstrip(".!?:;…")  # "rise..." → "rise [n].": an ellipsis or "?!" is one ending
    end = next((c for c in s[len(body):] if c in "!?"), ".")
    return f"{body.rstrip() or s} [{block}]{end}"
