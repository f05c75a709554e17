"""Ingestion: files → blocks → chunks → dedup → embeddings → the store, incrementally and safely.

- Unchanged files (same content hash, manifest entry matching the stored chunks) cost a hash only.
- Changed files are replaced atomically (one merge commit per group of files, at least every
  `commit_seconds`, so a killed run keeps what it finished); the manifest entry is written after the commit, so a crash at any moment leaves either the old or the new version of
  each file, and a re-run finishes the job (a file whose chunks and manifest disagree is redone).
- Files gone from a walked folder are removed; chunks with no manifest entry left by an interrupted
  run are removed.
- Bad input is reported per file with a reason; it never stops the run.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from knowledge.chunking import chunk_document, cut_key
from knowledge.discover import Candidate, content_key, discover, prefixed_roots
from knowledge.ingest_progress import ChunkProgress, Progress, file_kind
from knowledge.ingest_report import FileResult, IngestReport, duplicate_note, unchanged_result
from knowledge.loaders import LoadFailed, LoadSkipped, load_document
from knowledge.manifest import DocumentInfo
from knowledge.settings import IngestSettings
from knowledge.store import ChunkStore
from knowledge.types import Chunk
from knowledge.unchanged import write_snapshot
from knowledge.vocabulary import read_vocabulary, write_vocabulary
from models.embedder import Embedder

log = logging.getLogger(__name__)

def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


@dataclass
class _Pending:
    """Parsed files waiting to be embedded (in batches across files) and committed (in groups)."""

    chunks: dict[str, list[Chunk]] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    windows: dict[str, list[np.ndarray]] = field(default_factory=dict)  # when the store keeps them
    infos: list[DocumentInfo] = field(default_factory=list)
    results: list[FileResult] = field(default_factory=list)
    n_chunks: int = 0
    n_unembedded: int = 0


class Ingestor:
    """Indexes files into a `ChunkStore` with an `Embedder`."""

    def __init__(self, store: ChunkStore, embedder: Embedder, settings: IngestSettings) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings

    def ingest(
        self, paths: list[Path], rebuild: bool = False, progress: Progress | None = None
    ) -> IngestReport:
        """One run, holding the library's ingest lock (IngestBusy when another ingest runs)."""
        with self.store.ingest_lock():
            return self._ingest(paths, rebuild, progress)

    def _ingest(self, paths: list[Path], rebuild: bool, progress: Progress | None) -> IngestReport:
        t0 = time.perf_counter()
        say = progress or (lambda _f, _m: None)
        report = IngestReport(embedder=self.embedder.identity)
        if rebuild:
            self.store.clear()
        manifest = self.store.manifest.all()
        found = discover(paths, self.settings.extensions, prefixed_roots=prefixed_roots(manifest))
        for p in found.problems:
            report.files.append(FileResult(p.source_path, p.status, reason=p.reason))
        stored_counts = self.store.chunk_counts()
        owners = self.store.text_hash_owners()
        counter = ChunkProgress(
            say, {c.source_path: (file_kind(c.path), _size(c.path)) for c in found.candidates}
        )
        run = _Run(self, report, manifest, stored_counts, owners, counter)
        for cand in found.candidates:
            counter.start(cand.source_path)
            run.process(cand)
            counter.finish(cand.source_path)
        run.flush()
        run.remove_missing(found.roots, {c.source_path for c in found.candidates})
        run.redo_duplicates(say)
        if run.changed or (self.store.count() and not self.store.has_fts_index()):
            say(1.0, "updating the indexes")
            self.store.update_indexes()
        write_snapshot(self.store)  # the next unchanged run decides from it alone (knowledge/unchanged.py)
        vocab = read_vocabulary(self.store.uri, self.store.name)
        if run.changed or vocab is None or vocab.version != int(self.store.table.version):
            say(1.0, "the library's vocabulary")
            write_vocabulary(self.store)  # the terms speech recognition is given (knowledge/vocabulary.py)
        say(1.0, "done")
        report.total_chunks = self.store.count()
        report.seconds = time.perf_counter() - t0
        return report


class _Run:
    """The state of one ingest run (kept off the Ingestor so it holds no per-run state)."""

    def __init__(
        self,
        ing: Ingestor,
        report: IngestReport,
        manifest: dict[str, DocumentInfo],
        stored_counts: dict[str, int],
        owners: dict[str, str],
        counter: ChunkProgress,
    ) -> None:
        self.ing = ing
        self.counter = counter
        self.store = ing.store
        self.settings = ing.settings
        self.report = report
        self.manifest = manifest
        self.stored_counts = stored_counts
        self.owners = owners  # text_hash → source_path that stores it
        self.owned: dict[str, set[str]] = {}
        for h, sp in owners.items():
            self.owned.setdefault(sp, set()).add(h)
        self.pending = _Pending()
        self.last_commit = time.monotonic()  # files read since then are committed within commit_seconds
        self.changed = False
        self.released = False  # some stored text disappeared (dedup partners may need a redo)
        self.touched: set[str] = set()
        self.deferred: list[Candidate] = []

    # ------------------------------------------------------------ one file

    def process(self, cand: Candidate, force: bool = False) -> None:
        t0 = time.perf_counter()
        sp = cand.source_path
        self.touched.add(sp)
        old = self.manifest.get(sp)
        try:
            size = cand.path.stat().st_size
            if size > self.settings.max_file_mb * 1024 * 1024:
                self._result(
                    sp,
                    "skipped",
                    t0,
                    reason=f"larger than max_file_mb ({size / 2**20:.1f} MB > {self.settings.max_file_mb:g} MB)",
                )
                return
            fhash = content_key(cand.path, cut_key(self.settings.chunk_words, self.settings.overlap_words))
        except PermissionError as exc:
            self._result(sp, "failed", t0, reason=f"permission denied: {exc.strerror or exc}")
            return
        except OSError as exc:
            self._result(sp, "failed", t0, reason=f"cannot read: {exc.strerror or exc}")
            return
        same = None if force else unchanged_result(old, fhash, self.stored_counts.get(sp, 0))
        if same is not None:
            same.seconds = time.perf_counter() - t0
            self.report.files.append(same)
            if same.status == "unchanged":
                self.counter.read(sp, same.chunks, unchanged=True)
                if same.duplicates:
                    self.deferred.append(cand)
            return
        try:
            doc = load_document(
                cand.path, ocr=self.settings.ocr == "auto", max_file_mb=self.settings.max_file_mb
            )
        except LoadSkipped as exc:
            self._not_indexed(cand, fhash, "skipped", exc.reason, t0)
            return
        except LoadFailed as exc:
            self._not_indexed(cand, fhash, "failed", exc.reason, t0)
            return
        chunks = chunk_document(doc, sp, fhash, self.settings.chunk_words, self.settings.overlap_words)
        kept, dups, same_as = self._dedup(sp, chunks)
        if not force:
            self.counter.read(sp, len(kept))
        fresh = old is None or old.status != "indexed"
        status = "added" if fresh and self.stored_counts.get(sp, 0) == 0 else "updated"
        notes = [*doc.notes, duplicate_note(kept, dups, same_as)] if same_as else list(doc.notes)
        info = DocumentInfo(
            source_path=sp,
            title=doc.title,
            chunks=len(kept),
            file_hash=fhash,
            status="indexed",
            error="; ".join(notes),
            root=str(cand.root),
            duplicates=dups,
        )
        res = FileResult(
            sp, status, chunks=len(kept), duplicates=dups, reason="; ".join(notes), same_as=same_as[0] if same_as else ""
        )
        if dups and not force:  # its text may be freed later this run (a renamed or moved file)
            self.deferred.append(cand)
        if sp in self.pending.chunks:  # the same relative path under two roots: commit the first
            self.flush()
        p = self.pending
        p.chunks[sp] = kept
        p.infos.append(info)
        p.results.append(res)
        p.n_chunks += len(kept)
        p.n_unembedded += len(kept)
        res.seconds = time.perf_counter() - t0
        if p.n_unembedded >= self.settings.embed_batch_size:
            self._embed_pending()
        due = time.monotonic() - self.last_commit >= self.settings.commit_seconds
        if p.n_chunks >= self.settings.write_batch_size or due:
            self.flush()

    def _dedup(self, sp: str, chunks: list[Chunk]) -> tuple[list[Chunk], int, list[str]]:
        """The chunks whose text is not stored yet, how many were dropped, and the files that hold
        the dropped text (for "same text as FILE")."""
        for h in self.owned.pop(sp, set()):  # this file's old text no longer counts
            if self.owners.get(h) == sp:
                del self.owners[h]
                self.released = True
        kept: list[Chunk] = []
        mine: set[str] = set()
        elsewhere: dict[str, None] = {}
        for c in chunks:
            if c.text_hash in mine:
                continue
            if c.text_hash in self.owners:
                elsewhere[self.owners[c.text_hash]] = None
                continue
            mine.add(c.text_hash)
            kept.append(c)
        for h in mine:
            self.owners[h] = sp
        self.owned[sp] = mine
        return kept, len(chunks) - len(kept), list(elsewhere)

    def _embed_pending(self) -> None:
        """Embed every pending file's chunks not embedded yet, in one batch across files."""
        p = self.pending
        todo = [sp for sp in p.chunks if sp not in p.vectors]
        texts = [c.chunk_text for sp in todo for c in p.chunks[sp]]
        t0 = time.perf_counter()
        emb = self.ing.embedder
        keep_windows = self.ing.store.stores_windows
        wins: list[np.ndarray] = []
        if not texts:
            vecs = np.zeros((0, emb.dim), dtype=np.float32)
        elif keep_windows:
            vecs, wins = emb.embed_passages(texts)
        else:
            vecs = emb.embed_documents(texts)
        share = (time.perf_counter() - t0) / max(1, len(texts))
        start = 0
        for sp in todo:
            n = len(p.chunks[sp])
            p.vectors[sp] = vecs[start : start + n]
            if keep_windows:
                p.windows[sp] = wins[start : start + n]
            start += n
        for res in p.results:
            if res.source_path in todo:
                res.seconds += share * res.chunks
        p.n_unembedded = 0
        if texts:
            self.counter.embedded(len(texts))

    def _not_indexed(self, cand: Candidate, fhash: str, status: str, reason: str, t0: float) -> None:
        sp = cand.source_path
        old = self.manifest.get(sp)
        if old is not None and old.status == "indexed" and self.stored_counts.get(sp, 0):
            # keep the version indexed before; say it is stale
            self._result(
                sp, status, t0, chunks=old.chunks, reason=f"{reason} (the previously indexed version is kept)"
            )
            return
        self.store.record(
            [
                DocumentInfo(
                    source_path=sp,
                    title=cand.path.stem,
                    file_hash=fhash,
                    status=status,
                    error=reason,
                    root=str(cand.root),
                )
            ]
        )
        self._result(sp, status, t0, reason=reason)

    def _result(self, sp: str, status: str, t0: float, **kw: object) -> None:
        self.report.files.append(FileResult(sp, status, seconds=time.perf_counter() - t0, **kw))  # type: ignore[arg-type]

    # ------------------------------------------------------------ commits

    def flush(self) -> None:
        """Commit the pending files' chunks in one atomic write, then their manifest entries."""
        p = self.pending
        if not p.chunks:
            return
        self._embed_pending()
        t0 = time.perf_counter()
        self.store.replace_files(
            {sp: (p.chunks[sp], p.vectors[sp], *([p.windows[sp]] if sp in p.windows else [])) for sp in p.chunks}
        )
        self.store.record(p.infos)
        per_file = (time.perf_counter() - t0) / len(p.chunks)
        for res in p.results:
            res.seconds += per_file
            self.stored_counts[res.source_path] = res.chunks
        self.report.files.extend(p.results)
        self.changed = True
        self.pending = _Pending()
        self.last_commit = time.monotonic()

    def redo_duplicates(self, say: Progress) -> None:
        """Files that skipped duplicate chunks are redone when stored text disappeared this run."""
        if not (self.released and self.deferred):
            return
        todo, self.deferred = self.deferred, []
        redo = {c.source_path for c in todo}
        self.report.files = [f for f in self.report.files if f.source_path not in redo]
        for cand in todo:
            say(1.0, f"re-checking duplicates of {cand.source_path}")
            self.process(cand, force=True)
        self.flush()

    def remove_missing(self, roots: list[Path], present: set[str]) -> None:
        """Remove files gone from walked folders, and chunks no manifest entry describes."""
        root_names = {str(r) for r in roots}
        gone = [sp for sp, info in self.manifest.items() if info.root in root_names and sp not in present]
        orphans = [
            sp for sp in self.store.chunk_counts() if sp not in self.manifest and sp not in self.touched
        ]
        for sp in gone + orphans:
            t0 = time.perf_counter()
            self.store.delete_document(sp)
            for h in self.owned.pop(sp, set()):
                if self.owners.get(h) == sp:
                    del self.owners[h]
            reason = "no longer in the folder" if sp in gone else "left over from an interrupted run"
            self._result(sp, "removed", t0, reason=reason)
            self.released = True
            self.changed = True
