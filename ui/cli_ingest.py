"""`python launch.py ingest PATH... [--rebuild]`: a progress bar on stderr, then the per-file report."""

from __future__ import annotations

import sys
from pathlib import Path

from knowledge.ingest import STATUSES, Ingestor, IngestReport
from knowledge.open_library import open_library
from knowledge.settings import IngestSettings, StoreSettings
from models.settings import EmbedderSettings


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


def ingest_command(
    embedder_settings: EmbedderSettings,
    store_settings: StoreSettings,
    ingest_settings: IngestSettings,
    uri: str,
    paths: list[Path],
    rebuild: bool = False,
) -> int:
    """Index `paths` in this process; 1 when every file failed and the index is empty, else 0."""
    from tqdm import tqdm

    embedder, store = open_library(embedder_settings, store_settings, uri)
    if embedder.is_fallback:
        print(
            f"note: {embedder.fallback_reason}; using the bundled all-MiniLM-L6-v2 (table {store.name})",
            file=sys.stderr,
        )
    bar = tqdm(total=1000, unit="‰", desc="ingest", file=sys.stderr, bar_format="{l_bar}{bar}| {postfix}")

    def progress(fraction: float, message: str) -> None:
        bar.n = int(min(1.0, max(0.0, fraction)) * 1000)
        if message:
            bar.set_postfix_str(message[-50:], refresh=False)
        bar.refresh()

    try:
        report = Ingestor(store, embedder, ingest_settings).ingest(paths, rebuild=rebuild, progress=progress)
    finally:
        bar.close()
    print(format_report(report))
    return 1 if report.totals["failed"] and not report.chunks_written and not report.total_chunks else 0
