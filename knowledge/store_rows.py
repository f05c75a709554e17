"""The chunk table's layout and its rows as hits: the schema and the conversions between LanceDB
result rows and `Hit`s (the table name of an embedder's vector space: `manifest.table_name`), and
the score of a chunk whose windows are stored (`window_max_scores`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pyarrow as pa

from knowledge.manifest import sql_str
from knowledge.types import Hit
from knowledge.vector_cache import vector_matrix, window_matrix, window_max_scores

__all__ = ["chunk_schema", "hit_from_row", "ids_in", "rows_and_vectors", "window_lists", "window_max_scores"]


def chunk_schema(dim: int, windows: bool = False) -> pa.Schema:
    """The chunk table; `windows`: with every encoder window's unit vector beside the mean (`vector`),
    a LanceDB multivector column (list of fixed-size lists)."""
    extra = [pa.field("windows", pa.list_(pa.list_(pa.float32(), dim)))] if windows else []
    return pa.schema(
        [
            pa.field("chunk_id", pa.string()),
            pa.field("source_path", pa.string()),
            pa.field("chunk_text", pa.string()),
            pa.field("chunk_preview", pa.string()),
            pa.field("title", pa.string()),
            pa.field("section", pa.string()),
            pa.field("pages", pa.list_(pa.int32())),
            pa.field("tags", pa.list_(pa.string())),
            pa.field("file_hash", pa.string()),
            pa.field("text_hash", pa.string()),
            pa.field("embedder", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
            *extra,
        ]
    )


def rows_and_vectors(table: pa.Table) -> tuple[list[dict[str, Any]], np.ndarray | None]:
    """Result rows as dicts, and their vectors as one float32 matrix (no per-float Python objects:
    the rerank reads them as an array, and 50 × 512 floats as lists cost more than the rerank).
    A `windows` column stays in the rows as each row's (n_windows, dim) matrix."""
    names = table.column_names
    vecs = vector_matrix(table["vector"]) if "vector" in names else None
    wins = window_lists(table["windows"]) if "windows" in names else None
    rows = table.drop_columns([c for c in ("vector", "windows") if c in names]).to_pylist()
    if wins is not None:
        for r, w in zip(rows, wins, strict=True):
            r["windows"] = w
    return rows, vecs


def window_lists(column: pa.ChunkedArray | pa.Array) -> list[np.ndarray]:
    matrix, offsets = window_matrix(column)
    return [matrix[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]


def ids_in(chunk_ids: Iterable[str]) -> str:
    """A filter selecting these chunk ids."""
    return "chunk_id IN (" + ", ".join(sql_str(i) for i in chunk_ids) + ")"


HIT_COLUMNS = ["chunk_id", "source_path", "title", "chunk_text", "section", "pages", "tags"]


def hit_from_row(
    r: dict[str, Any],
    vec: np.ndarray | None,
    score: float,
    dense_score: float | None = None,
    bm25_score: float | None = None,
) -> Hit:
    """A hit of a result row (`windows`: its window vectors, when the table stores them)."""
    return Hit(
        chunk_id=r["chunk_id"],
        source_path=r["source_path"],
        title=r.get("title") or "",
        chunk_text=r.get("chunk_text") or "",
        score=score,
        dense_score=dense_score,
        bm25_score=bm25_score,
        section=r.get("section") or "",
        pages=list(r.get("pages") or []),
        tags=list(r.get("tags") or []),
        vector=vec,
        windows=r.get("windows"),
    )
