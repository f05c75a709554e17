"""Answerability: do the user's documents hold the answer? Decided before any LLM call.

A small logistic model over a handful of features of what the turn already has (`features`):

- `dense_top`, `dense_gap`: the best dense cosine of the first-stage pool, and how far it stands
  above the mean of the next nine (a question about something else is close to many chunks alike);
- `bm25_top`, `bm25_gap`: log(1 + BM25) of the best full-text hit of the pool and its lead over the
  second (0 when full-text search is off or failed);
- `agree`: 1 when the dense and the full-text searches put the same chunk first;
- `cover_chunk`, `cover_sentence`: the share of the question's content words that the best of the
  top chunks / the best sentence holds; `unseen`: the share found in none of the top chunks;
- `q_words`: log(1 + number of content words of the question);
- `cover_long`: the share of the question's long words (≥ 7 letters: names, terms, compounds, what
  the question is about) that the best of the top chunks holds;
- `cover_pairs`: the same for the question's adjacent content-word pairs; `agree5`: the share of the
  dense top 5 that is in the full-text top 5;
- `cover_near`, `unseen_near`, `cover_long_near`: `cover_chunk`, `unseen` and `cover_long` with a
  word also found when the chunk holds it up to a typo or as a compound part
  (`assistant.word_match.in_bag`: "Beriods" / "beroids", "Corona" / "Coronavirus"), stricter about
  typos in a German question (`german`, recorded: 1 when the question's function words are German;
  `evidence_german`, recorded: the share of the top chunks that are German by the same test);
- `unknown_terms`, `absent_asked`, `other_document` (rules, not fitted: `assistant.answer_rules`): a
  rare term the library never mentions ("MusicXML"), a word of what an "is there …?" question asks
  about that it never has ("android"), a document named by its title ("DocBook") that the best
  sentence does not come from; each refuses what the model would answer, with its reason;
- `library_unseen`: the share of the question's long words that the whole library never mentions,
  up to an inflection or a typo (`word_match.in_library` over `Retrieval.vocabulary`): a question
  about something else names things the library has no word for (NaN without the word list);
- `library_gap`: the best dense cosine minus the 99th percentile of the question's cosines over the
  whole library (`Retrieval.library_level`): the library's own calibration, since how high cosines
  run differs between libraries and languages (MiniLM puts German text close to everything);
- `dense_z`, `bm25_z`, `bm25_share`, `rank_agree`, `cover_idf`: scale-free (`assistant.pool_features`).

- `specific_unseen`: the share of the question's specific tokens (with a digit: "1937", "Internet2",
  "COVID-19"; or an acronym: "WSE") that none of the top chunks holds as a word;
- `type_missing`: 1 when the question asks for a number or a date and none of the first two ranked
  sentences holds one (`extractive.lacks_asked_number`);

- `sentence_sim`: the best embedding cosine to the question among the first `sentence_candidates`
  sentences of the top chunks by overlap and chunk rank (the model says how many: one small batch per
  turn, `ExtractiveAnswerer.rank_with_similarity`); `sentence_gap`: it minus `dense_top`.

`FEATURES` are fitted; the full-text scores, the exact `unseen` and `cover_long` (their tolerant forms
replace them), `cover_sentence`, `cover_pairs`, `agree5`, `sentence_gap` and the scale-free pool features
are recorded but did not help on the dev sets' fit half; so is the intent confidence.

The coefficients (`answerability.json`, fitted by `bench/fit_answerability.py` on the dev sets with
out-of-scope pairs) are keyed by the embedder identity, since cosines differ between embedders. Another
embedder gets the reference embedder's model (`reference` in the file: all-MiniLM-L6-v2) with its cosines
put in that embedder's units (`assistant/calibration.py`, from fixed anchor pairs embedded once at
start); when that fails, the model fitted without the embedding features (`LEXICAL`). The window_max layout
(`embedder.long_text`) uses its model's window_mean fit when it has none of its own: its dense score
is that mean's cosine, or a window's higher one (a one-window chunk scores the same). For voice, faster-whisper's
own confidence rules (Whisper's defaults: `avg_logprob < -1.0`, `no_speech_prob > 0.6`) mark an
unsure transcript not answerable. The decision and every feature go into the turn's trace.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.answer_rules import refusal
from assistant.calibration import Calibrated, Calibration, Points, anchor_points_of
from assistant.llm.asked import lacks_asked_number
from assistant.llm.extractive import ScoredSentence
from assistant.llm.words import content_words, raw_content_words, stem
from assistant.pool_features import relative_features
from assistant.word_match import covered, german, in_library
from knowledge.types import Hit
from models.settings import LAYOUT_SUFFIX, stores_windows

log = logging.getLogger(__name__)

MODEL_FILE = Path(__file__).resolve().parent / "answerability.json"
# the fitted inputs, chosen on the fit half by `bench/fit_answerability.py --select` (greedy: add or drop
# one feature while the out-of-scope not-known rate rises); the others are recorded in the trace only
FEATURES = (
    "dense_top",
    "dense_gap",
    "agree",
    "cover_near",
    "unseen_near",
    "q_words",
    "cover_long_near",
    "library_gap",
    "library_unseen",
    "cover_chunk",
    "sentence_sim",
    "specific_unseen",
    "type_missing",
)
RECORDED = ("bm25_top", "bm25_gap", "cover_sentence", "cover_pairs", "agree5", "dense_z", "bm25_z", "bm25_share",
            "rank_agree", "cover_idf", "unseen", "cover_long", "sentence_gap", "german", "evidence_german")
SENTENCE = ("sentence_sim", "sentence_gap")  # need the ranked sentences embedded
EMBEDDING = ("dense_top", "dense_gap", "library_gap", "sentence_sim", "sentence_gap")  # differ between embedders
# the fallback when an embedder cannot be calibrated (no embedding features); refitted with `specific_unseen` and
# `type_missing` it did no better (report half, out of scope worst / mean 0.484 / 0.749 against 0.516 / 0.737)
LEXICAL = ("agree", "cover_near", "unseen_near", "q_words", "cover_long_near", "library_unseen", "cover_chunk",
           "bm25_top", "bm25_gap")
# a specific token: one with a digit ("1937", "Internet2", "COVID-19") or an acronym ("WSE", "NATO")
# (hyphens split: "Internet2-Netzwerk" asks for "Internet2", "COVID-19" for "COVID" and "19")
_SPECIFIC = re.compile(r"\w*\d[\w.,]*\w|\w*\d|\b[A-ZÄÖÜ]{2,}\b")
_TOKEN = re.compile(r"[\w.,]*\w")
LONG_WORD = 7  # letters: a long word is a rare one (a name, a term, a compound), the question's subject
AVG_LOGPROB_MIN = -1.0
NO_SPEECH_MAX = 0.6


@dataclass(frozen=True)
class Signals:
    """What the turn knows besides the evidence (None = not known, e.g. typed input)."""

    intent_confidence: float | None = None
    avg_logprob: float | None = None
    no_speech_prob: float | None = None
    library_level: float | None = None  # the question's 99th-percentile cosine over the library
    # the library's sorted words (`LibraryWords`: with their counts, which the extractive ranking reads)
    vocabulary: Sequence[str] | None = field(default=None, repr=False)


@dataclass
class Decision:
    answerable: bool
    probability: float
    reason: str  # "model" | "no_evidence" | "transcript_unsure" | "no_model" | "unknown_term"
    features: dict[str, float] = field(default_factory=dict)
    model: str = ""
    ranked: list[ScoredSentence] = field(default_factory=list, repr=False)

    def to_trace(self) -> dict[str, Any]:
        return {
            "answerable": self.answerable,
            "probability": round(self.probability, 4),
            "reason": self.reason,
            "model": self.model,
            "features": {k: round(v, 4) for k, v in self.features.items() if not math.isnan(v)},
        }


def features(
    question: str, hits: Sequence[Hit], candidates: Sequence[Hit], ranked: Sequence[ScoredSentence],
    top_chunks: int = 3,
    library_level: float | None = None,
    vocabulary: Sequence[str] | None = None,
    sentence_sim: float | None = None,
) -> dict[str, float]:
    """The model's inputs (see the module docstring). Pure; never raises on missing scores. An
    unknown value is NaN (`library_gap` without `library_level`, `library_unseen` without
    `vocabulary`): the model then uses its mean."""
    pool = list(candidates) or list(hits)
    dense = sorted((h.dense_score for h in pool if h.dense_score is not None), reverse=True)
    dense_top = dense[0] if dense else 0.0
    rest = dense[1:10]
    bm25 = [(h.bm25_score or 0.0) for h in pool]
    b_sorted = sorted(bm25, reverse=True)
    b1 = b_sorted[0] if b_sorted else 0.0
    b2 = b_sorted[1] if len(b_sorted) > 1 else 0.0
    agree = 0.0
    if pool and b1 > 0 and dense:
        top_dense = max(pool, key=lambda h: -1e9 if h.dense_score is None else h.dense_score)
        top_bm25 = pool[max(range(len(pool)), key=lambda i: bm25[i])]
        agree = float(top_dense.chunk_id == top_bm25.chunk_id)
    q_list = content_words(question)
    q = set(q_list)
    top = list(hits)[:top_chunks]
    seqs = [content_words(h.chunk_text) for h in top]
    bags = [set(seq) for seq in seqs]
    cover_chunk = max((len(q & b) / len(q) for b in bags), default=0.0) if q else 0.0
    union = set().union(*bags) if bags else set()
    unseen = len(q - union) / len(q) if q else 1.0
    long = {stem(w) for w in raw_content_words(question) if len(w) >= LONG_WORD}
    cover_long = max((len(long & b) / len(long) for b in bags), default=0.0) if long else cover_chunk
    strict = german(question)  # German stems: fewer typo matches (`word_match`)
    near = [covered(q, b, strict) for b in bags]
    cover_near = max((len(h) / len(q) for h in near), default=0.0) if q else 0.0
    unseen_near = len(q - set().union(*near)) / len(q) if q else 1.0
    cover_long_near = max((len(long & h) / len(long) for h in near), default=0.0) if long else cover_near
    library_unseen = math.nan
    if vocabulary is not None:
        library_unseen = sum(not in_library(w, vocabulary) for w in long) / len(long) if long else 0.0
    q_pairs = set(zip(q_list, q_list[1:], strict=False))
    pairs = [set(zip(seq, seq[1:], strict=False)) for seq in seqs]
    cover_pairs = max((len(q_pairs & b) / len(q_pairs) for b in pairs), default=0.0) if q_pairs else cover_chunk
    by_dense = [h.chunk_id for h in sorted(pool, key=lambda h: -(h.dense_score or -1e9))[:5]]
    by_bm25 = [pool[i].chunk_id for i in sorted(range(len(pool)), key=lambda i: -bm25[i])[:5] if bm25[i] > 0]
    rel = relative_features(pool, dense, bm25, q, seqs)
    return {
        **rel,
        "library_gap": float(dense_top - library_level) if library_level is not None and dense else math.nan,
        "dense_top": float(dense_top),
        "dense_gap": float(dense_top - (sum(rest) / len(rest) if rest else dense_top)),
        "bm25_top": math.log1p(max(b1, 0.0)),
        "bm25_gap": math.log1p(max(b1, 0.0)) - math.log1p(max(b2, 0.0)),
        "agree": agree,
        "cover_chunk": float(cover_chunk),
        "cover_sentence": float(max((s.coverage for s in ranked), default=0.0)),
        "unseen": float(unseen),
        "cover_long": float(cover_long),
        "cover_near": float(cover_near),
        "unseen_near": float(unseen_near),
        "cover_long_near": float(cover_long_near),
        "library_unseen": float(library_unseen),
        "cover_pairs": float(cover_pairs),
        "agree5": len(set(by_dense) & set(by_bm25)) / 5.0,
        "sentence_sim": math.nan if sentence_sim is None else float(sentence_sim),
        "sentence_gap": math.nan if sentence_sim is None else float(sentence_sim - dense_top),
        "q_words": math.log1p(len(q)),
        "german": float(strict),
        "evidence_german": sum(german(h.chunk_text) for h in top) / len(top) if top else 0.0,
        "specific_unseen": specific_unseen(question, [h.chunk_text for h in top]),
        "type_missing": float(lacks_asked_number(question, [s.text for s in list(ranked)[:2]])),
    }


def _normal(token: str) -> str:
    """A token compared case-blind, a number without its separators ("1,000" = "1000")."""
    token = token.lower().strip(".,")
    return re.sub(r"(?<=\d)[.,](?=\d)", "", token)


def specific_unseen(question: str, texts: Sequence[str]) -> float:
    """The share of the question's specific tokens (`_SPECIFIC`) that none of `texts` holds as a
    word; 0 for a question without one."""
    wanted = {_normal(t) for t in _SPECIFIC.findall(question)}
    wanted.discard("")
    if not wanted:
        return 0.0
    seen = {_normal(t) for text in texts for t in _TOKEN.findall(text)}
    return sum(t not in seen for t in wanted) / len(wanted)


@dataclass(frozen=True)
class Logistic:
    """p = sigmoid(intercept + Σ coef·(x − mean)/scale); answerable when p ≥ threshold."""

    name: str
    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float
    sentence_candidates: int = 0  # `sentence_sim` is the best cosine of this many sentences (0: not used)

    def probability(self, x: dict[str, float]) -> float:
        z = self.intercept
        for f, m, s, c in zip(self.features, self.mean, self.scale, self.coef, strict=True):
            v = x.get(f, m)
            z += c * ((m if math.isnan(v) else v) - m) / (s or 1.0)  # unknown: the mean
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "coef": list(self.coef),
            "intercept": self.intercept,
            "threshold": self.threshold,
            "sentence_candidates": self.sentence_candidates,
        }

    @classmethod
    def from_json(cls, name: str, raw: dict[str, Any]) -> Logistic:
        return cls(
            name,
            tuple(raw["features"]),
            tuple(float(v) for v in raw["mean"]),
            tuple(float(v) for v in raw["scale"]),
            tuple(float(v) for v in raw["coef"]),
            float(raw["intercept"]),
            float(raw["threshold"]),
            int(raw.get("sentence_candidates", 0)),
        )


class Answerability:
    """The decision for one embedder (immutable, thread-safe)."""

    def __init__(self, model: Logistic | Calibrated | None) -> None:
        self.model = model

    @property
    def sentence_candidates(self) -> int:
        """How many sentences the extractive ranking embeds for `sentence_sim` (0 when the model
        does not use it)."""
        m = self.model
        return m.sentence_candidates if m and set(SENTENCE) & set(m.features) else 0

    @classmethod
    def load(
        cls, embedder_identity: str | None, path: Path = MODEL_FILE, points: Callable[[], Points] | None = None
    ) -> Answerability:
        """The model fitted for this embedder. Another embedder, given `points` (its `ANCHORS` points,
        `calibration.anchor_points`), gets the reference embedder's model with its cosines calibrated;
        without them, or when they fail, the model fitted without embedding features (`LEXICAL`)."""
        if not Path(path).is_file():
            return cls(None)
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        models = raw.get("models", {})
        key = next((k for k in (embedder_identity, mean_space(embedder_identity)) if k and k in models), None)
        if key is not None:
            return cls(Logistic.from_json(key, models[key]))
        ref = raw.get("reference")
        if points is not None and ref:
            wmax = bool(embedder_identity and stores_windows(embedder_identity))
            name = ref["embedder"] + (LAYOUT_SUFFIX["window_max"] if wmax else "")
            try:
                own = points()
                cal = Calibration.between(own, Points(float(ref["matched"]), float(ref["mismatched"])))
                return cls(Calibrated(Logistic.from_json(name, models[name]), cal))
            except Exception as exc:  # noqa: BLE001 - an embedder failing on the anchors: the lexical model
                log.warning("answerability: no calibration for %s (%s: %s); using the lexical model",
                            embedder_identity, type(exc).__name__, exc)
        return cls(Logistic.from_json("lexical", models["lexical"]) if "lexical" in models else None)

    @classmethod
    def for_embedder(cls, embedder: Any) -> Answerability:
        """`load` for an `Embedder` (None: no embedder), which embeds the anchors if it must be calibrated."""
        if embedder is None:
            return cls.load(None)
        return cls.load(embedder.identity, points=anchor_points_of(embedder))

    def decide(
        self,
        question: str,
        hits: Sequence[Hit],
        candidates: Sequence[Hit],
        ranked: Sequence[ScoredSentence],
        signals: Signals | None = None,
        sentence_sim: float | None = None,
    ) -> Decision:
        signals = signals or Signals()
        name = self.model.name if self.model else ""
        if not hits:
            return Decision(False, 0.0, "no_evidence", model=name)
        x = features(question, hits, candidates, ranked, library_level=signals.library_level,
                     vocabulary=signals.vocabulary, sentence_sim=sentence_sim)
        if signals.intent_confidence is not None:
            x["intent_confidence"] = float(signals.intent_confidence)
        for key in ("avg_logprob", "no_speech_prob"):
            value = getattr(signals, key)
            if value is not None:
                x[key] = float(value)
        if (signals.avg_logprob is not None and signals.avg_logprob < AVG_LOGPROB_MIN) or (
            signals.no_speech_prob is not None and signals.no_speech_prob > NO_SPEECH_MAX
        ):
            return Decision(False, 0.0, "transcript_unsure", x, name, list(ranked))
        if self.model is None:
            return Decision(True, 1.0, "no_model", x, name, list(ranked))
        p = self.model.probability(x)
        reason, found = refusal(question, signals.vocabulary, hits, candidates, ranked[0].source if ranked else None)
        x.update(found)
        if reason and p >= self.model.threshold:  # `assistant.answer_rules`: what the model would answer, refused
            return Decision(False, p, reason, x, name, list(ranked))
        return Decision(p >= self.model.threshold, p, "model", x, name, list(ranked))


def mean_space(identity: str | None) -> str | None:
    """The window_mean vector space of a window_max identity (None for any other)."""
    suffix = LAYOUT_SUFFIX["window_max"]
    return identity[: -len(suffix)] if identity and identity.endswith(suffix) else None
