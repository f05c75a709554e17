"""How the extractive answer weighs what it knows about a sentence: a linear score over a few features.

Each candidate sentence of the top chunks gets these features (`FEATURES`), all cheap and lexical:

- `overlap`: the question's content words the sentence (with its heading) holds, each weighed by how
  rare it is among these sentences and in the library, relative to the best sentence (0–1);
- `overlap_no_number`: the same when the question asks how many / how long / when and the sentence
  holds no number (its weight is a penalty);
- `answer_type`: 1 when the sentence holds the kind of answer asked for (a name, a date, a definition, a stated default:
  `assistant.llm.asked`);
- `chunk_prior`: the sentence's chunk's retrieval score relative to the first chunk's, squared, for a
  sentence that shares a word with the question or stands next to one that does;
- `coverage`: the share of the question's content words the sentence holds (unweighed);
- `heading_overlap`: the share of them its heading holds (the section says what the sentence is about);
- `opens_chunk`: 1 for a chunk's first sentence; `length`: log(1 + its words) / log(50);
- `pairs`: the share of the question's adjacent content-word pairs the sentence holds side by side.

`HAND` (the first four features, set by hand) applies unless `sentence_weights.json` holds fitted
ones: `bench/fit_sentences.py` fits them on the select halves of the manuals, nq_oracle, xquad_en and
xquad_de (a conditional logit) and checks them by 2-fold cross-validation there. The fit has not
beaten `HAND` in that check (first sentence right, mean of the four: 0.706 by hand, 0.687 fitted),
so no file ships. An embedding cosine, when the answer ranks by it, is added with `embed_weight` on top.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

FEATURES = ("overlap", "overlap_no_number", "answer_type", "chunk_prior", "coverage", "heading_overlap",
            "opens_chunk", "length", "pairs")  # fmt: skip
NO_NUMBER = 0.5  # a question asking for a number or a date: a sentence holding none keeps this fraction
ANSWER_TYPE = 0.75  # added for a sentence holding the kind of answer asked for (`answer_kind`)
HAND = {"overlap": 1.0, "overlap_no_number": NO_NUMBER - 1.0, "answer_type": ANSWER_TYPE, "chunk_prior": 1.5}
WEIGHTS_FILE = Path(__file__).resolve().parent / "sentence_weights.json"
LENGTH_SCALE = math.log(50.0)


@dataclass
class ScoredSentence:
    text: str
    block: int  # 1-based context block number
    position: int  # sentence index inside its chunk
    score: float
    source: str = ""  # the document it comes from
    coverage: float = 0.0  # share of the question's content words it holds
    similarity: float | None = None  # embedding cosine to the question (when embedded)
    heading: str = ""  # the heading it stands under in its chunk: what the sentence is about
    section: str = ""  # its chunk's section path ("HTML Parameter Reference › Chunking › root.filename")
    entry: str = ""  # the definition list entry it describes ("RandomSeed"), when it is one's
    words_score: float | None = None  # its score before the sentence judge's say (`llm.judged`), when judged


@dataclass(frozen=True)
class SentenceWeights:
    """One weight per feature (a missing feature weighs 0)."""

    values: dict[str, float]

    def score(self, x: np.ndarray) -> np.ndarray:
        """(n, len(FEATURES)) → (n,) scores."""
        w = np.array([self.values.get(f, 0.0) for f in FEATURES], dtype=np.float64)
        return x @ w

    @classmethod
    def load(cls, path: Path = WEIGHTS_FILE) -> SentenceWeights:
        """The fitted weights, else the hand-set ones (a missing or damaged file is logged)."""
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            values = {str(k): float(v) for k, v in raw["weights"].items() if k in FEATURES}
            if values:
                return cls(values)
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning("sentence weights unreadable (%s); using the hand-set weights", exc)
        return cls(dict(HAND))


def pairs_of(words: Sequence[str]) -> set[tuple[str, str]]:
    return {(a, b) for a, b in zip(words, words[1:], strict=False)}


def feature_matrix(
    *,
    overlap: np.ndarray,
    no_number: np.ndarray,
    answer_type: np.ndarray,
    chunk_prior: np.ndarray,
    coverage: np.ndarray,
    heading_overlap: np.ndarray,
    opens_chunk: np.ndarray,
    words: np.ndarray,
    pairs: np.ndarray,
) -> np.ndarray:
    """The columns of `FEATURES`, one row per sentence."""
    return np.column_stack([
        overlap, overlap * no_number, answer_type, chunk_prior, coverage, heading_overlap, opens_chunk,
        np.log1p(words) / LENGTH_SCALE, pairs,
    ]).astype(np.float64)
