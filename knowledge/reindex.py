"""What to embed again when the library is indexed for another embedder or chunk layout, or read
with an older PDF reader or another cut into chunks.

Each embedder identity (model, long-text layout) has its own table, so vectors of two embedders never
mix. After a change of embedder this one's table is empty while another holds the library: the
files that index lists are embedded again, given to the ingest as they were first given (a folder
walked in full as that folder, a single file as itself), so every source keeps its name. The other
table is kept as it is (switching back finds it).

A file's content key holds the version of its reading and its cut (`discover.content_key`), so the
next ingest of a changed reader or chunk size reads it again; `stale_plan` finds those files at start
(the key's part after the file's digest differs from today's), so the library moves over by itself
and the app says so, instead of answering from the old chunks until someone re-indexes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowledge.chunking import cut_key
from knowledge.citations import document_path
from knowledge.discover import key_suffix


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
        if self.source_table == STALE:
            return (f"the library was read or cut into chunks by an earlier version of Hark: reading its "
                    f"{self.files} file(s) again ({self.chunks} chunks replaced as they finish){gone}")  # fmt: skip
        return (
            f"the library was indexed with another embedder or layout ({self.source_table}, {self.chunks} "
            f"chunks, kept apart): embedding its {self.files} file(s) again for {identity}{gone}"
        )


STALE = "(this index, older reading)"
_DIGEST = 64  # hex characters of the file's sha256 at the start of its content key


def stale_plan(store: Any, chunk_words: int, overlap_words: int) -> ReindexPlan | None:
    """The files of this index read or cut by an older version (their stored key's suffix is not
    today's); None when there are none."""
    cut = cut_key(chunk_words, overlap_words)
    docs = [d for d in store.documents() if d.status == "indexed" and d.root and len(d.file_hash) >= _DIGEST
            and d.file_hash[_DIGEST:] != key_suffix(Path(d.source_path), cut)]  # fmt: skip
    if not docs:
        return None
    return _plan(STALE, sum(d.chunks for d in docs), docs)


def reindex_plan(store: Any) -> ReindexPlan | None:
    """The plan when this embedder's index is empty and another index of the library is not; else None."""
    if store.count():
        return None
    others = {t: n for t, n in store.other_indexes().items() if n}
    if not others:
        return None
    table = max(others, key=lambda t: others[t])
    docs = [d for d in store.documents_of(table) if d.status == "indexed" and d.root]
    return _plan(table, others[table], docs)


def _plan(table: str, chunks: int, docs: list[Any]) -> ReindexPlan:
    """What to give the ingest for these manifest entries: their folders, walked, or the files."""
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
    return ReindexPlan(table, chunks, paths, files, missing)
