"""`python launch.py ingest PATH... [--rebuild] [--watch]`: a progress bar on stderr, then the per-file
report; with `--watch`, a report of each change to the folders until Ctrl-C."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from knowledge.ingest_report import STATUSES, IngestReport
from knowledge.settings import IngestSettings, StoreSettings
from models.settings import EmbedderSettings

if TYPE_CHECKING:
    from knowledge.ingest import Ingestor


def printable(text: str) -> str:
    """`text` with control and other non-printable characters escaped (`\\x1b`), safe for a terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def format_report(report: IngestReport) -> str:
    """The per-file report and the totals, as plain text for the terminal (names and reasons escaped)."""
    lines = []
    rows = sorted(report.files, key=lambda f: (STATUSES.index(f.status), f.source_path))
    names = [printable(f.source_path) for f in rows]
    width = min(max([len(n) for n in names] + [11]), 70)
    lines.append(f"{'file':<{width}}  {'status':<9} {'chunks':>6} {'seconds':>8}  reason")
    for f, name in zip(rows, names, strict=True):
        reason = printable(f.reason)
        lines.append(f"{name:<{width}}  {f.status:<9} {f.chunks:>6} {f.seconds:>8.2f}  {reason}")
    t = report.totals
    summary = ", ".join(f"{t[s]} {s}" for s in STATUSES if t[s])
    lines.append(
        f"{len(report.files)} file(s): {summary or 'nothing to do'}; {report.chunks_written} chunk(s) written, "
        f"{report.total_chunks} in the index; {report.seconds:.1f} s ({report.embedder})"
    )
    return "\n".join(lines)


def quick_ingest(
    embedder_settings: EmbedderSettings,
    store_settings: StoreSettings,
    ingest_settings: IngestSettings,
    uri: str,
    paths: list[Path],
) -> IngestReport | None:
    """The report of a run with nothing to do, from the manifest snapshot of the one table the
    configured embedder can write to (CLIP, or its MiniLM fallback); None when a run is needed."""
    from knowledge.manifest import table_name
    from knowledge.unchanged import quick_report
    from models.embedder import ClipEmbedder, MiniLMEmbedder

    identities = {MiniLMEmbedder(embedder_settings).identity}
    if embedder_settings.backend == "clip":
        clip = ClipEmbedder(embedder_settings).identity
        identities = {clip} | (identities if embedder_settings.offline_fallback else set())
    reports = [quick_report(paths, ingest_settings, uri, table_name(store_settings.table_prefix, i)) for i in identities]
    found = [r for r in reports if r is not None]
    return found[0] if len(found) == 1 else None


def ingest_command(
    embedder_settings: EmbedderSettings,
    store_settings: StoreSettings,
    ingest_settings: IngestSettings,
    uri: str,
    paths: list[Path],
    rebuild: bool = False,
    watch: bool = False,
) -> int:
    """Index `paths` in this process; 1 when every file failed and the index is empty, else 0.
    `watch`: then keep the folders among `paths` in sync (a report per change) until interrupted."""
    quick = None if rebuild or watch else quick_ingest(embedder_settings, store_settings, ingest_settings, uri, paths)
    if quick is not None:  # nothing changed: decided from the manifest snapshot, nothing opened
        print(format_report(quick))
        return 0
    from tqdm import tqdm

    from knowledge.ingest import Ingestor
    from knowledge.open_library import open_library

    # MiniLM loads on the first text to embed: an unchanged re-run decides from the manifest alone
    embedder, store = open_library(embedder_settings, store_settings, uri, lazy=True)
    if embedder.is_fallback:
        print(
            f"note: {embedder.fallback_reason}; using the bundled all-MiniLM-L6-v2 (table {store.name})",
            file=sys.stderr,
        )
    others = {t: n for t, n in store.other_indexes().items() if n} if not rebuild and store.count() == 0 else {}
    if others:
        held = ", ".join(f"{t} ({n} chunks)" for t, n in others.items())
        print(
            f"note: the embedder {embedder.identity} has no index yet; {held} hold(s) another embedder's "
            "or layout's vectors and stay apart: every file is embedded again",
            file=sys.stderr,
        )
    bar = tqdm(total=1000, unit="‰", desc="ingest", file=sys.stderr, bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining} {postfix}")

    def progress(fraction: float, message: str) -> None:
        bar.n = int(min(1.0, max(0.0, fraction)) * 1000)
        if message:
            bar.set_postfix_str(message[:60], refresh=False)
        bar.refresh()

    try:
        report = Ingestor(store, embedder, ingest_settings).ingest(paths, rebuild=rebuild, progress=progress)
    finally:
        bar.close()
    print(format_report(report))
    from assistant.library_language import library_note

    note = library_note(store, embedder.identity)
    if note:
        print(f"note: {note}", file=sys.stderr)
    if watch:
        return watch_folders(Ingestor(store, embedder, ingest_settings), [p for p in paths if p.is_dir()])
    return 1 if report.totals["failed"] and not report.chunks_written and not report.total_chunks else 0


def watch_folders(ingestor: Ingestor, folders: list[Path], stop: threading.Event | None = None) -> int:
    """Re-ingest each folder after its files change and print what changed, until Ctrl-C (or `stop`)."""
    from assistant.watch import FolderWatcher, Sync

    if not folders:
        print("nothing to watch: give a folder", file=sys.stderr)
        return 2
    lock = threading.Lock()  # one ingest at a time: the store has one writer

    def ingest(paths: list[Path]) -> IngestReport:
        with lock:
            return ingestor.ingest(paths)

    def show(sync: Sync) -> None:
        if sync.error:
            print(f"{time.strftime('%H:%M:%S')} {printable(str(sync.folder))}: {printable(sync.error)}", flush=True)
            return
        changed = [f for f in sync.report.files if f.status != "unchanged"]
        if changed:
            shown = IngestReport(changed, sync.report.seconds, sync.report.embedder, sync.report.total_chunks)
            print(f"{time.strftime('%H:%M:%S')} {printable(str(sync.folder))} changed:\n{format_report(shown)}", flush=True)

    watcher = FolderWatcher(ingest, ingestor.settings.extensions, on_sync=show)
    for folder in folders:
        watcher.add(folder)
    print("watching " + ", ".join(printable(str(f)) for f in folders) + " (Ctrl-C to stop)", file=sys.stderr, flush=True)
    stop = stop or threading.Event()
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        watcher.stop()
    return 0
