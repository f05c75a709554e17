"""What to embed again when the library is indexed for another embedder or chunk layout.

Each embedder identity (model, long-text layout) has its own table, so vectors of two embedders never
mix. After a change of embedder this one's table is empty while another holds the library: the
files that index lists are embedded again, given to the ingest as they were first given (a folder
walked in full as that folder, a single file as itself), so every source keeps its name. The other
table is kept as it is (switching back finds it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowledge.citations import document_path


@dataclass(frozen=True)
class ReindexPlan:
    """The files of another index of this library to embed again for this embedder."""

    source_table: str  # the index they come from (the one holding the most chunks)
    chunks: int  # chunks it holds
    paths: list[Path] = field(default_factory=list)  # what to give the ingest: folders and files
    files: int = 0  # files it lists that are still there
    missing: int = 0  # files it lists that are gone (not embedded again)

    def describe(self, identity: str) -> str:
        gone = f"; {self.missing} listed file(s) no longer exist" if self.missing else ""
        return (
            f"the library was indexed with another embedder or layout ({self.source_table}, {self.chunks} "
            f"chunks, kept apart): embedding its {self.files} file(s) again for {identity}{gone}"
        )


def reindex_plan(store: Any) -> ReindexPlan | None:
    """The plan when this embedder's index is empty and another index of the library is not; else None."""
    if store.count():
        return None
    others = {t: n for t, n in store.other_indexes().items() if n}
    if not others:
        return None
    table = max(others, key=lambda t: others[t])
    docs = [d for d in store.documents_of(table) if d.status == "indexed" and d.root]
    by_root: dict[str, list[Any]] = {}
    for d in docs:
        by_root.setdefault(d.root, []).append(d)
    paths: list[Path] = []
    files = missing = 0
    for root, entries in by_root.items():
        found = [p for p in (document_path(d, d.source_path) for d in entries) if p is not None]
        files += len(found)
        missing += len(entries) - len(found)
        walked = any("/" in d.source_path for d in entries)  # a folder was given and walked
        if walked and Path(root).is_dir():
            paths.append(Path(root))
        else:
            paths.extend(found)
    return ReindexPlan(table, others[table], paths, files, missing)
