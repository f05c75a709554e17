"""An unchanged re-ingest decided from a snapshot of the manifest, without LanceDB or a model.

Importing LanceDB costs seconds, more than hashing a folder. After each ingest into a local folder
the Ingestor writes `<table>.snapshot.json` beside the tables: the manifest entries, the chunks stored
per file, whether the full-text index exists, and a fingerprint of both tables' version folders
(`_versions/*.manifest`: Lance adds a file there with every commit). `quick_report` reads it back:
when the fingerprint still matches (nothing committed since, by any process) and every file under
the given paths has the content the manifest lists, with nothing removed, the report is that of a
full run (unchanged, or failed/skipped again) and nothing else is opened. Anything else (a changed,
new or removed file, an unreadable snapshot, object storage) returns None: the caller runs the
ingest.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knowledge.chunking import cut_key
from knowledge.discover import content_key, discover, prefixed_roots
from knowledge.ingest_report import FileResult, IngestReport, unchanged_result
from knowledge.manifest import DocumentInfo

if TYPE_CHECKING:
    from knowledge.settings import IngestSettings
    from knowledge.store import ChunkStore

log = logging.getLogger(__name__)

VERSION = 1


def local_folder(uri: str) -> Path | None:
    """The folder of a local LanceDB URI; None for object storage and LanceDB Cloud."""
    if uri.startswith("file://"):
        return Path(uri[len("file://") :])
    return None if "://" in uri else Path(uri)


def snapshot_path(uri: str, table: str) -> Path | None:
    folder = local_folder(uri)
    return folder / f"{table}.snapshot.json" if folder is not None else None


def fingerprint(folder: Path, table: str) -> list[Any] | None:
    """(count, first, last) of each table's version files; None when a folder cannot be listed."""
    out: list[Any] = []
    for name in (table, f"{table}__files"):
        try:
            names = sorted(e.name for e in os.scandir(folder / f"{name}.lance" / "_versions") if e.name.endswith(".manifest"))
        except OSError:
            return None
        if not names:
            return None
        out.append([len(names), names[0], names[-1]])
    return out


def write_snapshot(store: ChunkStore) -> None:
    """Record the store's manifest for the next `quick_report` (local folders only; best effort)."""
    path = snapshot_path(store.uri, store.name)
    if path is None:
        return
    try:
        tables = fingerprint(path.parent, store.name)
        if tables is not None and _read(path, store.name) is not None:
            return  # nothing committed since the snapshot was written: it still holds
        store.refresh()  # read what the fingerprint describes, not a handle's older version
        data = {
            "version": VERSION,
            "identity": store.identity,
            "files": [info.to_row() for info in store.manifest.all().values()],
            "stored": store.chunk_counts(),
            "fts_index": store.has_fts_index(),
            "count": store.count(),
            "tables": tables,
        }
        if tables is None or fingerprint(path.parent, store.name) != tables:
            return  # committed to while being read: no snapshot (the next run opens the store)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except Exception as exc:  # noqa: BLE001 - without a snapshot the next run just opens the store
        log.debug("manifest snapshot not written: %s", exc)


def _read(path: Path, table: str) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return None
    if data.get("tables") is None or data["tables"] != fingerprint(path.parent, table):
        return None  # committed to since (or unreadable): the store must be opened
    return data


def quick_report(paths: list[Path], settings: IngestSettings, uri: str, table: str) -> IngestReport | None:
    """The report of an ingest of `paths` when nothing changed since the snapshot, else None."""
    t0 = time.perf_counter()
    path = snapshot_path(uri, table)
    data = _read(path, table) if path is not None else None
    if data is None:
        return None
    manifest = {row["source_path"]: DocumentInfo(**row) for row in data["files"]}
    stored: dict[str, int] = data["stored"]
    if set(stored) - set(manifest) or (data["count"] and not data["fts_index"]):
        return None  # left-over chunks to remove, or the full-text index to build
    found = discover(paths, settings.extensions, prefixed_roots=prefixed_roots(manifest))
    if found.problems:
        return None
    present = {c.source_path for c in found.candidates}
    roots = {str(r) for r in found.roots}
    if any(info.root in roots and sp not in present for sp, info in manifest.items()):
        return None  # a file was removed from a folder
    report = IngestReport(embedder=str(data["identity"]), total_chunks=int(data["count"]))
    limit = settings.max_file_mb * 1024 * 1024
    for cand in found.candidates:
        t = time.perf_counter()
        try:
            if cand.path.stat().st_size > limit:
                return None
            fhash = content_key(cand.path, cut_key(settings.chunk_words, settings.overlap_words))
        except OSError:
            return None
        res: FileResult | None = unchanged_result(manifest.get(cand.source_path), fhash, stored.get(cand.source_path, 0))
        if res is None:
            return None
        res.seconds = time.perf_counter() - t
        report.files.append(res)
    report.seconds = time.perf_counter() - t0
    return report
