"""Exact vector search from an in-memory copy of a table's vectors (below the ANN threshold).

LanceDB's exact (flat) search re-reads and scores every vector on each query: ~14 ms at 10k chunks
here. A float32 matrix of the same vectors held in memory answers the same top-k with one
matrix-vector product (~0.4 ms at 10k × 384), and the k rows are then fetched by row id (~3 ms).
At the 20k-chunk threshold the copy is 20k × 512 × 4 B = 40 MB at most (CLIP); above it the store
uses its IVF index instead.

Consistency: a snapshot belongs to one table version. Every search compares the table's version
with the snapshot's and rebuilds it when they differ (this process wrote, or another process did
and the handle refreshed), so a search never mixes versions; rows fetched by row id are checked
against the snapshot's chunk ids and the version is re-read after the fetch — on any mismatch the
caller falls back to LanceDB's own search.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from knowledge.blas import single_threaded_blas

log = logging.getLogger(__name__)


class StaleSnapshot(RuntimeError):
    """The table changed while a search was reading it."""


@dataclass(frozen=True)
class Snapshot:
    version: int
    chunk_ids: np.ndarray  # object array of str, row order of `matrix`
    row_ids: np.ndarray  # uint64 LanceDB row ids of that version
    matrix: np.ndarray  # (n, dim) float32, unit rows

    def top(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(row positions, cosine scores) of the k best rows, best first (ties: lower row first)."""
        n = len(self.chunk_ids)
        k = min(k, n)
        if k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        with single_threaded_blas():  # OpenBLAS's idle workers would spin on the other core
            scores = self.matrix @ query
        part = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
        order = part[np.lexsort((part, -scores[part]))]
        return order, scores[order]


class VectorCache:
    """One table's vectors in memory, rebuilt when the table's version changes. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snap: Snapshot | None = None

    def snapshot(self, table: Any) -> Snapshot:
        """The snapshot of the table's current version (built on first use after a change)."""
        version = int(table.version)
        snap = self._snap
        if snap is not None and snap.version == version:
            return snap
        with self._lock:
            snap = self._snap
            if snap is not None and snap.version == int(table.version):
                return snap
            snap = _load(table)
            self._snap = snap
            return snap

    def fetch(
        self, table: Any, snap: Snapshot, positions: np.ndarray, columns: list[str]
    ) -> list[dict[str, Any]]:
        """The rows at `positions` of the snapshot, in that order. Raises StaleSnapshot when the
        table moved on meanwhile (the caller then asks LanceDB directly)."""
        if len(positions) == 0:
            return []
        ids = [int(r) for r in snap.row_ids[positions]]
        got = table.take_row_ids(ids).select(columns).to_arrow()
        if int(table.version) != snap.version:
            raise StaleSnapshot("the table changed during the search")
        rows = got.to_pylist()
        by_id = {r["chunk_id"]: r for r in rows}
        wanted = [str(c) for c in snap.chunk_ids[positions]]
        if len(by_id) != len(wanted) or any(c not in by_id for c in wanted):
            raise StaleSnapshot("rows fetched by id do not match the snapshot")
        return [by_id[c] for c in wanted]


def _load(table: Any) -> Snapshot:
    """Read chunk ids, row ids and vectors of the table's current version (~20 ms per 10k rows)."""
    for _ in range(3):
        version = int(table.version)
        n = int(table.count_rows())
        if n == 0:
            got = None
        else:
            got = table.search().select(["chunk_id", "vector"]).with_row_id(True).limit(n).to_arrow()
        if int(table.version) == version:
            break
    else:
        raise StaleSnapshot("the table kept changing while its vectors were read")
    if got is None or got.num_rows == 0:
        return Snapshot(
            version, np.zeros(0, dtype=object), np.zeros(0, dtype=np.uint64), np.zeros((0, 0), np.float32)
        )
    matrix = vector_matrix(got["vector"])
    if matrix is None:
        raise StaleSnapshot("some stored vectors are null")
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    chunk_ids = np.asarray(got["chunk_id"].to_pylist(), dtype=object)
    row_ids = np.asarray(got["_rowid"].to_numpy(), dtype=np.uint64)
    log.debug("vector snapshot of version %d: %d rows", version, len(chunk_ids))
    return Snapshot(version, chunk_ids, row_ids, matrix)


def vector_matrix(column: pa.ChunkedArray | pa.Array) -> np.ndarray | None:
    """A fixed-size-list vector column as one (n, dim) float32 matrix (a copy, no per-float Python
    objects); None when it is empty or holds a null."""
    col = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if col.null_count or not len(col):
        return None
    flat = col.flatten().to_numpy(zero_copy_only=False).astype(np.float32, copy=True)
    return flat.reshape(len(col), -1)
