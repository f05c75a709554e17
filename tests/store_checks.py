"""Checks on a real chunk store shared by the object-storage and team tests."""

from __future__ import annotations

from knowledge.store import ChunkStore


def consistent(store: ChunkStore) -> dict[str, int]:
    """Manifest and chunks agree file by file, and no chunk id is stored twice."""
    store.refresh()
    counts = store.chunk_counts()
    indexed = {d.source_path: d.chunks for d in store.documents() if d.status == "indexed"}
    assert counts == indexed, (counts, indexed)
    ids = store.table.to_arrow()["chunk_id"].to_pylist()
    assert len(ids) == len(set(ids)), "a chunk is stored twice"
    return counts
