"""Exact vector search from an in-memory copy of a table (below the ANN threshold).

LanceDB's exact (flat) search re-reads and scores every vector on each query (~14 ms at 10k
chunks). A snapshot of the table — its vectors as one float32 matrix, and the columns a hit shows
(chunk id, source, title, text, section, pages, tags) as one Arrow table — answers the same top-k
with one matrix-vector product (~0.4 ms at 10k × 384) and an Arrow `take`, with no LanceDB call.
Every call into LanceDB crosses to its event-loop thread, which costs milliseconds when that thread
has been idle, so the search path makes as few as it can: one version read per search.

Size: at the 20k-chunk threshold the vectors are 20k × 512 × 4 B = 40 MB at most (CLIP) and the
hit columns ~3 KB per 500-word chunk, ~60 MB; above the threshold the store uses its IVF index and
builds no snapshot.

Consistency: a snapshot belongs to one table version and is read whole from that version (the
version is re-read after the read; a move in between retries). Every search compares the table's
version with the snapshot's and rebuilds it when they differ (this process wrote, or another
process did and the handle refreshed), so a search never mixes versions.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from knowledge.types import LibraryWords
from models.runtime.blas import single_threaded_blas

log = logging.getLogger(__name__)
_NON_WORD = r"[^\p{L}\p{N}_]+"  # what `\w+` does not match: the words are the pieces between


class StaleSnapshot(RuntimeError):
    """The table kept changing while a snapshot was read."""


@dataclass(frozen=True)
class Snapshot:
    version: int
    matrix: np.ndarray  # (n, dim) float32, unit rows
    rows: pa.Table  # the hit columns, same row order as `matrix`
    windows: np.ndarray | None = None  # every row's window vectors, when the table stores them
    offsets: np.ndarray | None = None  # row i's windows: windows[offsets[i]:offsets[i + 1]]
    # the latest query's scores: a search and the `level` of the same query share one product
    _last: list = field(default_factory=lambda: [None], init=False, repr=False, compare=False)
    _words: list = field(default_factory=lambda: [None], init=False, repr=False, compare=False)
    _words_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return self.rows.num_rows

    @cached_property
    def positions(self) -> dict[str, int]:
        """chunk id → row position (built on first use, once per snapshot)."""
        return {cid: i for i, cid in enumerate(self.rows.column("chunk_id").to_pylist())}

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Every row's dense score for the unit vector `query`: its cosine, or with stored windows
        `window_max_scores`."""
        key = query.tobytes()
        last = self._last[0]
        if last is not None and last[0] == key:
            return last[1]
        with single_threaded_blas():  # OpenBLAS's idle workers would spin on the other core
            if self.windows is None or self.offsets is None:
                scores = self.matrix @ query
            else:
                scores = window_max_scores(query, self.matrix, self.windows, self.offsets)
        self._last[0] = (key, scores)
        return scores

    @property
    def vocabulary(self) -> LibraryWords:
        """Every lower-cased word of the rows' titles and texts, sorted: what the library mentions at
        all, for the answerability decision's library-level word check. Built once per snapshot
        (`library_words`, ~0.3 s at 10k chunks), ahead of the first search by `ChunkStore.warm_up`;
        a search asking meanwhile waits for that build (the same list as a fresh build, so a turn
        and the bench compute the same `library_unseen`)."""
        words = self._words[0]
        if words is None:
            with self._words_lock:
                words = self._words[0]
                if words is None:
                    words = self._words[0] = library_words(self.rows)
        return words

    def windows_of(self, i: int) -> np.ndarray | None:
        if self.windows is None or self.offsets is None:
            return None
        return self.windows[self.offsets[i] : self.offsets[i + 1]]

    def top(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(row positions, scores) of the k best rows, best first (ties: lower row first). The score
        is the cosine, or with stored windows `window_max_scores`."""
        n = len(self)
        k = min(k, n)
        if k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        scores = self.scores(query)
        part = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
        order = part[np.lexsort((part, -scores[part]))]
        return order, scores[order]

    def level(self, query: np.ndarray, quantile: float = 0.99) -> float | None:
        """The `quantile` of the query's scores (as `top` scores rows) over every row: how close the
        library as a whole is to the query (None when empty)."""
        n = len(self)
        if n == 0:
            return None
        scores = self.scores(query)
        kth = min(n - 1, int(quantile * (n - 1)))
        return float(np.partition(scores, kth)[kth])

    def fetch(self, positions: np.ndarray) -> list[dict[str, Any]]:
        """The hit columns of the rows at `positions`, in that order."""
        if len(positions) == 0:
            return []
        return self.rows.take(pa.array(positions, type=pa.int64())).to_pylist()


class VectorCache:
    """One table's snapshot, rebuilt when the table's version changes. Thread-safe."""

    def __init__(self, columns: list[str]) -> None:
        self._columns = columns
        self._lock = threading.Lock()
        self._snap: Snapshot | None = None

    def snapshot(self, table: Any, version: int | None = None) -> Snapshot:
        """The snapshot of the table's current version (`version`, when the caller just read it),
        built on first use after a change."""
        version = int(table.version) if version is None else version
        snap = self._snap
        if snap is not None and snap.version == version:
            return snap
        with self._lock:
            snap = self._snap
            if snap is not None and snap.version == int(table.version):
                return snap
            snap = _load(table, self._columns)
            self._snap = snap
            return snap


def _load(table: Any, columns: list[str]) -> Snapshot:
    """Read the hit columns and vectors of the table's current version (~30 ms per 10k rows)."""
    for _ in range(3):
        version = int(table.version)
        n = int(table.count_rows())
        extra = ["windows"] if "windows" in table.schema.names else []
        got = table.search().select([*columns, "vector", *extra]).limit(n).to_arrow() if n else None
        if int(table.version) == version:
            break
    else:
        raise StaleSnapshot("the table kept changing while it was read")
    if got is None or got.num_rows == 0:
        empty = pa.table({c: pa.array([], type=table.schema.field(c).type) for c in columns})
        return Snapshot(version, np.zeros((0, 0), np.float32), empty)
    matrix = vector_matrix(got["vector"])
    if matrix is None:
        raise StaleSnapshot("some stored vectors are null")
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    windows = offsets = None
    if extra:
        windows, offsets = window_matrix(got["windows"])
        if len(offsets) != got.num_rows + 1 or np.any(np.diff(offsets) < 1):
            raise StaleSnapshot("a stored chunk has no window vectors")
    rows = got.drop_columns(["vector", *extra]).combine_chunks()
    log.debug("snapshot of version %d: %d rows, %.1f MB", version, rows.num_rows, rows.nbytes / 2**20)
    return Snapshot(version, matrix, rows, windows, offsets)


def library_words(rows: pa.Table) -> LibraryWords:
    """Every lower-cased word of the `title` and `chunk_text` columns, sorted, with how often each
    occurs (Arrow's string kernels: no Python loop over the words)."""
    words = [
        pc.list_flatten(pc.split_pattern_regex(pc.utf8_lower(rows.column(c).combine_chunks()), _NON_WORD))
        for c in ("title", "chunk_text")
        if c in rows.column_names
    ]
    if not words:
        return LibraryWords(())
    counts = pc.value_counts(pa.concat_arrays(words))
    values, order = counts.field("values"), pc.sort_indices(counts.field("values"))
    keep = pc.filter(order, pc.not_equal(values.take(order), ""))
    return LibraryWords(values.take(keep).to_pylist(), counts.field("counts").take(keep).to_numpy(), rows.num_rows)


def vector_matrix(column: pa.ChunkedArray | pa.Array) -> np.ndarray | None:
    """A fixed-size-list vector column as one (n, dim) float32 matrix (a copy, no per-float Python
    objects); None when it is empty or holds a null."""
    col = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if col.null_count or not len(col):
        return None
    flat = col.flatten().to_numpy(zero_copy_only=False).astype(np.float32, copy=True)
    return flat.reshape(len(col), -1)


def window_matrix(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A `windows` column as (every window's vector (n_windows, dim) float32, offsets (n_rows + 1)):
    row i's windows are rows offsets[i]:offsets[i + 1] of the matrix."""
    col = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    offsets = np.asarray(col.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
    flat = col.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
    matrix = vector_matrix(flat) if len(flat) else np.zeros((0, 0), np.float32)
    return (matrix if matrix is not None else np.zeros((0, 0), np.float32)), offsets - offsets[0]


def window_max_scores(query: np.ndarray, means: np.ndarray, windows: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each chunk's dense score when its windows are stored: the best cosine among its windows and
    its mean vector (a part of a chunk is found by itself; the whole still counts when no part
    stands out). Every chunk has at least one window (a short chunk's only window is its mean)."""
    best = np.maximum.reduceat(windows @ query, offsets[:-1]) if len(offsets) > 1 else np.zeros(0, np.float32)
    return np.maximum(best, means @ query)
