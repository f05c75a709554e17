"""Ingest throughput on the development corpora turned into files, and the cost of an unchanged re-run.

    OMP_WAIT_POLICY=PASSIVE HF_HUB_OFFLINE=1 python -m bench.ingest [--datasets nq_oracle,xquad_en]

Each corpus passage becomes one Markdown file (`# title`, blank line, text) in a temporary folder;
the bundled all-MiniLM-L6-v2 embeds (window-mean long-text mode, the default). Three runs per corpus:
first ingest into an empty store, an unchanged re-run (must cost ≤ 5 % of the first), then a re-run
after editing 1 % of the files; and the embedding-only time of the same chunks (the floor).
`--pdf` writes each passage as a PDF instead. `--readers fast,unstructured` runs the same library
once per Markdown/text reader in one process, side by side (unstructured: how every format was read
before `knowledge.text_reader`). Wall and CPU seconds (all threads of the process): on a shared
machine the CPU ratio to the floor is the steadier one. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench.common import EVAL


def write_files(dataset: str, folder: Path, limit: int | None, pdf: bool = False) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(EVAL / dataset / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            title = (row.get("title") or "").strip()
            if pdf:
                _write_pdf(folder / f"{row['_id']}.pdf", title, row["text"])
            else:
                body = f"# {title}\n\n{row['text']}\n" if title else f"{row['text']}\n"
                (folder / f"{row['_id']}.md").write_text(body, encoding="utf-8")
            n += 1
            if limit and n >= limit:
                break
    return n


def _write_pdf(path: Path, title: str, text: str) -> None:
    """The passage as a PDF with a real text layer: 90-character lines, 45 lines a page."""
    import textwrap

    from tests.knowledge.docs_factory import write_text_pdf

    def latin1(t: str) -> str:  # the test PDF writer's Helvetica text is Latin-1
        return t.encode("latin-1", "replace").decode("latin-1")

    lines = ([latin1(title), ""] if title else []) + textwrap.wrap(latin1(text), 90)
    write_text_pdf(path, [lines[i : i + 45] for i in range(0, len(lines), 45)] or [[""]])


def embed_only(store, emb, long_text: bool = False) -> tuple[float, float]:  # noqa: ANN001 - a ChunkStore and an Embedder
    """Wall and CPU seconds to embed the stored chunks' texts again, in the ingest's batches: the floor
    (`long_text`: every window, as the ingest does for a store that keeps them)."""
    texts = store.table.search().select(["chunk_text"]).limit(max(1, store.count())).to_arrow()["chunk_text"].to_pylist()
    embed = emb.embed_passages if long_text and store.stores_windows else emb.embed_documents
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), 64):
        embed(texts[i : i + 64])
    return time.perf_counter() - t0, time.process_time() - c0


@contextlib.contextmanager
def reader(name: str) -> Iterator[None]:
    """Markdown and plain text read by `name`: "fast" (Hark's text_reader) or "unstructured"."""
    from knowledge import loaders

    if name == "fast":
        yield
        return
    if name != "unstructured":
        raise SystemExit(f"unknown reader {name!r} (fast, unstructured)")

    def markdown(path: Path) -> loaders.LoadedDocument:
        from unstructured.partition.md import partition_md

        loaders.ensure_offline_nlp()
        elements = partition_md(text=loaders._read_text_file(path), languages=[""])
        return loaders.elements_to_document(elements, fallback_title=path.stem)

    def text(path: Path) -> loaders.LoadedDocument:
        from unstructured.partition.text import partition_text

        loaders.ensure_offline_nlp()
        elements = partition_text(text=loaders._read_text_file(path), languages=[""])
        return loaders.elements_to_document(elements, fallback_title=path.stem, use_first_title=False)

    saved = loaders._load_markdown, loaders._load_text
    loaders._load_markdown, loaders._load_text = markdown, text
    try:
        yield
    finally:
        loaders._load_markdown, loaders._load_text = saved


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="nq_oracle,xquad_en")
    ap.add_argument("--limit", type=int, default=None, help="files per corpus (default: all)")
    ap.add_argument("--pdf", action="store_true", help="each passage as a PDF instead of Markdown")
    ap.add_argument("--readers", default="fast", help="comma-separated: fast, unstructured (Markdown/text)")
    args = ap.parse_args()

    from knowledge.ingest import Ingestor
    from knowledge.settings import IngestSettings, StoreSettings
    from knowledge.store import ChunkStore
    from models.embedder import MiniLMEmbedder
    from models.settings import EmbedderSettings

    emb = MiniLMEmbedder(EmbedderSettings(backend="minilm"))
    emb.warm_up()
    rows = []
    runs = [(d, r) for d in args.datasets.split(",") for r in args.readers.split(",")]
    for name, reader_name in runs:
        with tempfile.TemporaryDirectory(prefix="hark-bench-") as tmp, reader(reader_name):
            lib = Path(tmp) / "library"
            n_files = write_files(name, lib, args.limit, pdf=args.pdf)
            store = ChunkStore.open(str(Path(tmp) / "db"), emb.identity, emb.dim, StoreSettings())
            ing = Ingestor(store, emb, IngestSettings())
            t0, c0 = time.perf_counter(), time.process_time()
            first = ing.ingest([lib])
            t_first, c_first = time.perf_counter() - t0, time.process_time() - c0
            t_floor, c_floor = embed_only(store, emb)
            t0 = time.perf_counter()
            again = ing.ingest([lib])
            t_again = time.perf_counter() - t0
            changed = sorted(lib.iterdir())[:: max(1, n_files // max(1, n_files // 100))][
                : max(1, n_files // 100)
            ]
            for p in changed if not args.pdf else []:  # PDFs: no edit step
                p.write_text(
                    p.read_text(encoding="utf-8") + "\nEdited for the benchmark.\n", encoding="utf-8"
                )
            t0 = time.perf_counter()
            edit = ing.ingest([lib])
            t_edit = time.perf_counter() - t0
            rows.append(
                (
                    f"{name} ({reader_name})" if args.readers != "fast" else name,
                    n_files,
                    first.chunks_written,
                    first.totals["failed"] + first.totals["skipped"],
                    t_first,
                    n_files / t_first,
                    first.chunks_written / t_first,
                    t_again,
                    t_again / t_first,
                    again.totals["unchanged"],
                    len(changed),
                    t_edit,
                    edit.totals["updated"],
                    t_floor,
                    c_first,
                    c_floor,
                )
            )
    print(
        "| corpus | files | chunks | failed+skipped | first run s | embed only s | first / embed | CPU first / embed "
        "| files/s | chunks/s "
        "| unchanged re-run s | re-run / first | unchanged files | edited files | re-run after edit s | updated |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]:.1f} | {r[13]:.1f} | {r[4] / r[13]:.2f}× "
            f"| {r[14]:.1f} / {r[15]:.1f} s = {r[14] / r[15]:.2f}× | {r[5]:.1f} | {r[6]:.1f} "
            f"| {r[7]:.2f} | {100 * r[8]:.1f} % | {r[9]} | {r[10]} | {r[11]:.1f} | {r[12]} |"
        )


if __name__ == "__main__":
    main()
