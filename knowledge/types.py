"""Values shared across the knowledge layer and the layers above it."""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field

import numpy as np

SECTION_SEP = " › "  # between the headings of a section path ("3 Usage notes › 3.1 Numerical limitations")


@dataclass
class Chunk:
    """One chunk of one document, ready to embed and store."""

    chunk_id: str
    source_path: str  # relative to the library root
    chunk_text: str
    title: str
    section: str = ""
    pages: list[int] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    file_hash: str = ""
    text_hash: str = ""  # hash of the normalised text, for deduplication

    @property
    def chunk_preview(self) -> str:
        return self.chunk_text[:200]


class LibraryWords(tuple):
    """The library's sorted, lower-cased words (a tuple: bisect finds a word and the words it
    starts), how often each occurs, and how many chunks the library has (`total`): how rare a word
    is in this library ("flex" occurs thousands of times in the flex manual, "rankdir" a few)."""

    chunks: np.ndarray
    total: int

    def __new__(cls, words: Iterable[str], chunks: Iterable[int] = (), total: int = 0) -> LibraryWords:
        self = super().__new__(cls, words)
        self.chunks = np.asarray(list(chunks) if not isinstance(chunks, np.ndarray) else chunks, dtype=np.int64)
        self.total = int(total)
        return self

    def occurrences(self, word: str) -> int:
        """How often `word` (lower-cased) occurs in the library (0 when absent or the counts are not known)."""
        i = bisect_left(self, word)
        return int(self.chunks[i]) if i < len(self) and len(self.chunks) == len(self) and self[i] == word else 0

    def idf(self, stem: str, stem_of: Callable[[str], str]) -> float | None:
        """log(1 + chunks / occurrences of the words whose stem is `stem`) (none counts as once), or
        None when the counts are not known."""
        if not self.total or len(self.chunks) != len(self):
            return None
        lo, hi = bisect_left(self, stem), bisect_left(self, stem + "\U0010ffff")
        n = sum(int(self.chunks[i]) for i in range(lo, hi) if stem_of(self[i]) == stem)
        return math.log(1.0 + self.total / max(n, 1))


@dataclass
class Hit:
    """A retrieved chunk with its scores. `score` is the score of the final order."""

    chunk_id: str
    source_path: str
    title: str
    chunk_text: str
    score: float
    dense_score: float | None = None  # cosine similarity to the query
    bm25_score: float | None = None  # full-text score, when hybrid
    diffusion_score: float | None = None  # personalized PageRank score, when reranked
    first_stage_rank: int | None = None  # 1-based rank before the rerank
    section: str = ""
    pages: list[int] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    vector: np.ndarray | list[float] | None = field(default=None, repr=False)  # unit vector
    # (n_windows, dim) unit vectors of its encoder windows, when the store keeps them (window_max)
    windows: np.ndarray | None = field(default=None, repr=False)

    @property
    def chunk_preview(self) -> str:
        return self.chunk_text[:200]

    @property
    def page_label(self) -> str:
        if not self.pages:
            return ""
        lo, hi = min(self.pages), max(self.pages)
        return f"p. {lo}" if lo == hi else f"pp. {lo}–{hi}"

    def to_dict(self, with_text: bool = True) -> dict:
        d = asdict(self)
        d.pop("vector", None)
        d.pop("windows", None)
        if not with_text:
            d.pop("chunk_text", None)
        d["chunk_preview"] = self.chunk_preview
        return d


@dataclass
class Retrieval:
    """One search's result: `Retriever.retrieve` for the library (the web search builds one too)."""

    query: str
    hits: list[Hit]  # final order, at most top_k; `score` is the final score
    candidates: list[Hit]  # the first-stage pool in first-stage order, same scores as the hits
    relevant: bool  # best dense cosine ≥ settings.min_score
    timings_ms: dict[str, float] = field(default_factory=dict)  # embed, search, rerank
    notices: list[str] = field(default_factory=list)
    library_level: float | None = None  # the query's 99th-percentile cosine over the library (None: unknown)
    vocabulary: LibraryWords | None = field(default=None, repr=False)  # the library's sorted words (None: unknown)

    @property
    def best_dense(self) -> float | None:
        scores = [h.dense_score for h in self.candidates if h.dense_score is not None]
        return max(scores) if scores else None
