"""Reading and ingesting real PDF manuals: Hark's PDFium reader side by side with the unstructured
(pdfminer) path it replaced, and a whole first ingest against the time to embed its chunks alone.

    OMP_WAIT_POLICY=PASSIVE HF_HUB_OFFLINE=1 python -m bench.pdf_ingest --pdfs DIR [--readers pdfium,unstructured]

DIR: a folder of PDFs (the manuals set: `bash ../shared/data/eval/manuals/fetch.sh DIR`). Per reader:
reading alone (every PDF through `load_document`: pages per second, wall and CPU), and for the
default reader a first ingest into an empty store (chunking, embedding, writing, indexes) beside the
embedding-only time of the same chunks (the floor). On a shared machine compare within one run.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench.ingest import embed_only


@contextlib.contextmanager
def reader(name: str) -> Iterator[None]:
    """PDFs read by `name`: "pdfium" (Hark's reader) or "unstructured" (`partition_pdf`, fast
    strategy, with the clean-up and furniture rules it had)."""
    from knowledge import loaders, pdf_text

    if name == "pdfium":
        yield
        return
    if name != "unstructured":
        raise SystemExit(f"unknown reader {name!r} (pdfium, unstructured)")

    def load_pdf(path: Path, ocr: bool) -> loaders.LoadedDocument:
        from unstructured.partition.pdf import partition_pdf

        elements = partition_pdf(filename=str(path), strategy="fast", languages=["eng"])
        for el in elements:
            if getattr(el, "text", None):
                el.text = pdf_text.clean(el.text)
        drop = pdf_text.furniture([(el.text or "", el.metadata.page_number) for el in elements])
        elements = [el for i, el in enumerate(elements) if i not in drop]
        return loaders.elements_to_document(elements, fallback_title=path.stem)

    saved = loaders._load_pdf
    loaders._load_pdf = load_pdf
    try:
        yield
    finally:
        loaders._load_pdf = saved


def pages_of(path: Path) -> int:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(path))
    try:
        return len(doc)
    finally:
        doc.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pdfs", type=Path, required=True, help="a folder of PDFs")
    ap.add_argument("--readers", default="pdfium,unstructured")
    args = ap.parse_args()

    from assistant.config import load_config
    from knowledge.ingest import Ingestor
    from knowledge.loaders import load_document
    from knowledge.open_library import open_store
    from models.embedder import load_embedder

    pdfs = sorted(args.pdfs.glob("*.pdf"))
    pages = sum(pages_of(p) for p in pdfs)
    print(f"{len(pdfs)} PDFs, {pages} pages\n")
    print("| reader | reading wall s | CPU s | pages/s |\n|---|---:|---:|---:|")
    for name in args.readers.split(","):
        with reader(name):
            load_document(pdfs[0])  # imports and lazy set-up out of the timing
            t0, c0 = time.perf_counter(), time.process_time()
            for p in pdfs:
                load_document(p)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"| {name} | {wall:.1f} | {cpu:.1f} | {pages / wall:.0f} |", flush=True)

    cfg = load_config(None)  # the app's embedder, long-text mode and chunk sizes
    emb = load_embedder(cfg.embedder)
    with tempfile.TemporaryDirectory(prefix="hark-bench-") as tmp:
        lib = Path(tmp) / "library"
        lib.mkdir()
        for p in pdfs:
            (lib / p.name).symlink_to(p.resolve())
        store = open_store(emb, cfg.store, str(Path(tmp) / "db"))
        settings = cfg.ingest.model_copy(update={"isolation": "inline"})
        t0, c0 = time.perf_counter(), time.process_time()
        Ingestor(store, emb, settings).ingest([lib])
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        f_wall, f_cpu = embed_only(store, emb, long_text=True)
        print(f"\nfirst ingest, {store.count()} chunks ({settings.chunk_words} words): {wall:.1f} s wall, {cpu:.1f} s CPU; "
              f"embedding alone {f_wall:.1f} s wall, {f_cpu:.1f} s CPU; ratio {wall / f_wall:.2f} wall, {cpu / f_cpu:.2f} CPU")


if __name__ == "__main__":
    main()
