"""The chunk store: one LanceDB table per embedder identity, plus its files manifest.

- Table `<prefix>__<identity>` (sanitised); a different embedder is a different table, so vectors
  of different embedders never mix and switching embedder re-indexes.
- Vectors are L2-normalised; search uses cosine distance, `dense_score = 1 - distance` (= cosine).
- An identity ending `-wmax` (`embedder.long_text: window_max`) also stores every encoder window's
  vector (`windows`, a multivector column): a chunk's dense score is the best cosine among its windows
  and its mean vector (`StoreView.search`), still one hit per chunk.
- Exact (flat) search below `ann_threshold` chunks — from an in-memory snapshot of the vectors and
  hit columns (`knowledge.vector_cache`, rebuilt when the table version changes) unless
  `memory_search` is off;
  at/above it an IVF index (cosine) is built and searched with `nprobes` / `refine_factor` (recall@50
  measured in bench/search.py).
- Other processes' commits (`launch.py ingest` while the app runs, the ingest child process) become
  visible within `refresh_seconds` (the connection's read consistency interval), or at once after
  `refresh()`.
- Full-text: LanceDB's own FTS index on `chunk_text`, brought up to date after each ingest.
- Reads go through a `StoreView` pinned to one table version (`knowledge.store_view`): a search's
  dense and full-text halves see the same commit, and the row count and the indexes are read once
  per version (each LanceDB call costs milliseconds when its event-loop thread was idle).
- Writes: `replace_files` replaces the chunks of a group of files in ONE commit (merge_insert with
  delete-by-source), so a concurrent search sees either the old or the new version of a file.
- Rows and hits: `store_rows.py`. Where: a folder or object storage (`knowledge.storage`); the manifest and the ingest lock are
  tables beside the chunks table, so everything about the library lives in one place.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

from knowledge.fts import fts_config, fts_index_name
from knowledge.ingest_lock import IngestLock
from knowledge.manifest import DocumentInfo, Manifest, sql_str, table_name
from knowledge.settings import StoreSettings
from knowledge.storage import StoreWriteError, connect, failure, is_io_error, is_store_error
from knowledge.store_rows import HIT_COLUMNS, chunk_schema, ids_in
from knowledge.store_view import StoreView, read_facts
from knowledge.types import Chunk, Hit
from knowledge.vector_cache import StaleSnapshot, VectorCache
from models.runtime.errors import HarkError
from models.settings import stores_windows

log = logging.getLogger(__name__)
T = TypeVar("T")

__all__ = ["ChunkStore", "StoreWriteError", "chunk_schema", "table_name"]


class ChunkStore:
    """Chunks + vectors + manifest of one embedder's library. Thread-safe for one writer."""

    def __init__(self, db: Any, uri: str, identity: str, dim: int, settings: StoreSettings) -> None:
        self._db = db
        self.uri = uri
        self.identity = identity
        self.dim = dim
        self.settings = settings
        # the identity names the layout: window_max stores every window's vector beside the mean
        # (`windows`) and scores a chunk by the best cosine among them (`window_max_scores`)
        self.stores_windows = stores_windows(identity)
        self.name = table_name(settings.table_prefix, identity)
        self._write_lock = threading.Lock()
        self._vectors = VectorCache(HIT_COLUMNS)
        self._view: StoreView | None = None
        self._view_lock = threading.Lock()
        self._lease: IngestLock | None = None
        self._table = self._guard(self._open_table, "open the chunks table")
        self.manifest: Manifest = self._guard(
            lambda: Manifest(db, f"{self.name}__files"), "open the files manifest"
        )

    # ------------------------------------------------------------ opening

    @classmethod
    def open(cls, uri: str, embedder_identity: str, dim: int, settings: StoreSettings) -> ChunkStore:
        """The store at `uri`: a folder, `s3://bucket/prefix` (with `settings.storage_options`)…"""
        return cls(connect(uri, settings), uri, embedder_identity, dim, settings)

    def _open_table(self) -> Any:
        if self.name in self._db.list_tables().tables:
            table = self._db.open_table(self.name)
            stored = table.schema.field("vector").type.list_size
            if stored != self.dim:
                raise HarkError(
                    f"table {self.name} holds {stored}-dimensional vectors, the embedder gives {self.dim}",
                    "run `python launch.py ingest PATH --rebuild`",
                )
            if ("windows" in table.schema.names) != self.stores_windows:
                raise HarkError(
                    f"table {self.name} has another long-text layout than embedder.long_text",
                    "run `python launch.py ingest PATH --rebuild`",
                )
            return table
        schema = chunk_schema(self.dim, windows=self.stores_windows)
        return self._db.create_table(self.name, schema=schema, exist_ok=True)

    def _guard(self, fn: Callable[[], T], what: str) -> T:
        try:
            return fn()
        except HarkError:
            raise
        except Exception as exc:
            if is_io_error(exc) or is_store_error(exc, self.uri):
                # the raw reply stays out of the chain: it may name the access key
                raise failure(exc, self.uri, what) from None
            raise

    @property
    def table(self) -> Any:
        """The LanceDB table (e.g. for `store.table.search(...).rerank(reranker)`)."""
        return self._table

    # ------------------------------------------------------------ reading

    def refresh(self) -> None:
        """See the latest committed version now (e.g. after another process ingested)."""
        self._table.checkout_latest()
        self.manifest.refresh()

    def warm_up(self) -> None:
        """Read the in-memory snapshot and build its word list now when searches will use them (else
        the first question after a start or a change pays for them: ~30 ms and ~0.3 s per 10k
        chunks). The word list is built outside the cache's lock: a search meanwhile runs, and
        waits only where it asks for the list."""
        view = self.view()
        if self.settings.memory_search and view.count() < self.settings.ann_threshold:
            try:
                snap = self._vectors.snapshot(view.table, view.version)
                words = snap.vocabulary  # built now, once per snapshot
                log.debug("snapshot of version %d read ahead, %d words", snap.version, len(words))
            except StaleSnapshot as exc:  # a writer is busy: the first search reads it
                log.debug("snapshot not read ahead: %s", exc)

    def view(self, text_search: bool = False) -> StoreView:
        """The table as of its latest commit, pinned: every read through it sees that one version
        (`knowledge.store_view`). `text_search`: build a missing full-text index first."""
        version = int(self._table.version)
        view = self._view
        if view is None or view.version != version:
            view = self._guard(lambda: self._pin(version), "read the chunks table")
        if text_search and view.count() and not view.facts.fts_index:
            self.update_indexes()
            return self.view()
        return view

    def _pin(self, version: int) -> StoreView:
        table = self._db.open_table(self.name)
        table.checkout(version)
        facts = read_facts(table, fts_index_name(self.settings.fts))
        view = StoreView(table, facts, self.dim, self.settings, self._vectors, self.stores_windows)
        with self._view_lock:
            if self._view is None or self._view.version < version:
                self._view = view
        return view

    def count(self) -> int:
        return self.view().count()

    def other_indexes(self) -> dict[str, int]:
        """Chunk count of each table of this library holding another embedder's or layout's vectors
        (they stay apart; after a change of embedder the library is embedded again into this one)."""
        prefix = table_name(self.settings.table_prefix, "x")[:-1]  # "<prefix>__"
        names = [t for t in self._db.list_tables().tables if t.startswith(prefix) and not t.endswith("__files")]
        return {t: int(self._db.open_table(t).count_rows()) for t in names if t != self.name}

    def documents_of(self, table: str) -> list[DocumentInfo]:
        """The files manifest of another index of this library (`other_indexes`), read only."""
        name = f"{table}__files"
        if name not in self._db.list_tables().tables:
            return []
        return sorted(Manifest(self._db, name).all().values(), key=lambda d: d.source_path)

    def has_vector_index(self) -> bool:
        return self.view().facts.vector_index

    def has_fts_index(self) -> bool:
        return self.view().facts.fts_index

    def search(
        self, query_vector: Any, k: int, where: str | None = None, exact: bool | None = None
    ) -> list[Hit]:
        """Top-k by cosine similarity (`StoreView.search` on the latest version)."""
        return self.view().search(query_vector, k, where, exact)

    def fts_search(self, text: str, k: int, where: str | None = None) -> list[Hit]:
        """Top-k by BM25 (`StoreView.fts_search` on the latest version)."""
        return self.view(text_search=True).fts_search(text, k, where)

    def fts_scores(self, text: str, chunk_ids: list[str]) -> dict[str, float]:
        """BM25 of each listed chunk matching a query term (`StoreView.fts_scores`)."""
        return self.view(text_search=True).fts_scores(text, chunk_ids)

    def vectors(self, chunk_ids: Iterable[str]) -> dict[str, np.ndarray]:
        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return {}
        rows = self._table.search().where(ids_in(ids)).select(["chunk_id", "vector"]).limit(len(ids)).to_arrow()
        return {
            cid: np.asarray(v, dtype=np.float32)
            for cid, v in zip(rows["chunk_id"].to_pylist(), rows["vector"].to_pylist(), strict=True)
        }

    def documents(self) -> list[DocumentInfo]:
        return sorted(self.manifest.all().values(), key=lambda d: d.source_path)

    def text_hash_owners(self) -> dict[str, str]:
        """text_hash → source_path of every stored chunk, reading only those two columns."""
        n = self.count()
        if n == 0:
            return {}
        tbl = self._table.search().select(["text_hash", "source_path"]).limit(n).to_arrow()
        return dict(zip(tbl["text_hash"].to_pylist(), tbl["source_path"].to_pylist(), strict=True))

    def chunk_counts(self) -> dict[str, int]:
        """source_path → number of stored chunks (one column read)."""
        n = self.count()
        if n == 0:
            return {}
        col = self._table.search().select(["source_path"]).limit(n).to_arrow()["source_path"]
        paths, counts = np.unique(np.asarray(col.to_pylist(), dtype=object), return_counts=True)
        return {str(p): int(c) for p, c in zip(paths, counts, strict=True)}

    # ------------------------------------------------------------ writing

    @contextmanager
    def ingest_lock(self) -> Iterator[IngestLock]:
        """Hold the library's ingest lease (IngestBusy when another ingest holds it); meanwhile
        every write first checks that no other ingest took it over."""
        lock = self._guard(
            lambda: IngestLock(self._db, f"{self.name}__lock", self.settings.ingest_lock_seconds),
            "open the ingest lock",
        )
        self._guard(lock.acquire, "take the ingest lock")
        self._lease = lock
        try:
            yield lock
        finally:
            self._lease = None
            lock.release()

    def _check_lease(self) -> None:
        if self._lease is not None:
            self._lease.check()

    def replace_files(self, files: dict[str, tuple[list[Chunk], np.ndarray] | tuple[list[Chunk], np.ndarray, list]]) -> None:
        """Replace all chunks of these files with the given ones, in one atomic commit. Each file:
        (chunks, their vectors) or (chunks, vectors, each chunk's window vectors); a store that keeps
        windows and is given none stores each chunk's vector as its one window."""
        if not files:
            return
        rows: list[dict[str, Any]] = []
        for chunks, vectors, *rest in files.values():
            windows = rest[0] if rest else [None] * len(chunks)
            for c, v, w in zip(chunks, vectors, windows, strict=True):
                extra = {}
                if self.stores_windows:
                    extra["windows"] = list(np.asarray(v if w is None else w, dtype=np.float32).reshape(-1, self.dim))
                rows.append(
                    {
                        "chunk_id": c.chunk_id,
                        "source_path": c.source_path,
                        "chunk_text": c.chunk_text,
                        "chunk_preview": c.chunk_preview,
                        "title": c.title,
                        "section": c.section,
                        "pages": c.pages,
                        "tags": c.tags,
                        "file_hash": c.file_hash,
                        "text_hash": c.text_hash,
                        "embedder": self.identity,
                        "vector": np.asarray(v, dtype=np.float32),
                        **extra,
                    }
                )
        data = pa.Table.from_pylist(rows, schema=chunk_schema(self.dim, windows=self.stores_windows))
        scope = "source_path IN (" + ", ".join(sql_str(p) for p in files) + ")"
        self._check_lease()
        with self._write_lock:
            self._guard(
                lambda: (
                    self._table.merge_insert("chunk_id")
                    .when_matched_update_all()
                    .when_not_matched_insert_all()
                    .when_not_matched_by_source_delete(scope)
                    .execute(data)
                ),
                "write chunks",
            )

    def delete_document(self, source_path: str) -> None:
        """Remove a file's chunks, then its manifest entry."""
        self._check_lease()
        with self._write_lock:
            self._guard(lambda: self._table.delete(f"source_path = {sql_str(source_path)}"), "delete chunks")
            self._guard(lambda: self.manifest.delete([source_path]), "update the files manifest")

    def record(self, infos: list[DocumentInfo]) -> None:
        """Write manifest entries (after the chunks they describe are committed)."""
        self._check_lease()
        with self._write_lock:
            self._guard(lambda: self.manifest.upsert(infos), "update the files manifest")

    def clear(self) -> None:
        """Drop the chunks and the manifest of this embedder (for --rebuild)."""
        with self._write_lock:
            # the new table counts its versions afresh: nothing read from the old one may be reused
            self._view = None
            self._vectors = VectorCache(HIT_COLUMNS)
            self._guard(lambda: self._db.drop_table(self.name, ignore_missing=True), "drop the chunks table")
            self._table = self._guard(self._open_table, "create the chunks table")
            self._guard(self.manifest.clear, "reset the files manifest")

    def update_indexes(self) -> None:
        """FTS index present and current; IVF index once the table reaches `ann_threshold`."""
        n = self.count()
        if n == 0:
            return
        with self._write_lock:
            if not self.has_fts_index():
                self._guard(lambda: self._create_fts(), "build the full-text index")
            else:
                self._guard(lambda: self._table.optimize(), "update the indexes")
            if n >= self.settings.ann_threshold and not self.has_vector_index():
                self._guard(lambda: self._create_ann(n), "build the vector index")

    def _create_fts(self) -> None:
        """The full-text index of the configured tokenizer; one of other settings is dropped (two on
        one column would leave the search to pick either)."""
        name = fts_index_name(self.settings.fts)
        self._table.create_index("chunk_text", config=fts_config(self.settings.fts), replace=True, name=name)
        for index in self._table.list_indices():
            if index.columns == ["chunk_text"] and index.index_type == "FTS" and index.name != name:
                log.info("dropping the full-text index %s (other tokenizer settings)", index.name)
                self._table.drop_index(index.name)

    def _create_ann(self, n: int) -> None:
        import lancedb

        partitions = self.settings.ann_partitions or max(1, int(math.sqrt(n)))
        if self.settings.ann_index == "ivf_flat":
            config = lancedb.index.IvfFlat(distance_type="cosine", num_partitions=partitions)
        else:
            sub = _sub_vectors(self.dim)
            config = lancedb.index.IvfPq(
                distance_type="cosine", num_partitions=partitions, num_sub_vectors=sub
            )
        log.info(
            "building the %s vector index on %d chunks (%d partitions)",
            self.settings.ann_index,
            n,
            partitions,
        )
        self._table.create_index("vector", config=config, replace=True)
        if self.stores_windows:  # the multivector column: its best-window (MaxSim) search
            self._table.create_index("windows", config=config, replace=True)


def _sub_vectors(dim: int) -> int:
    for sub in (dim // 8, dim // 4, dim // 16, dim // 2):
        if sub and dim % sub == 0:
            return sub
    return 1
