"""Ingestion in the app's process vs in a child process: time, and what the app's memory keeps.

    python bench/ingest_isolation.py [--repeats 3] [--docs 240] [--pdfs 20] [--docx 20]

The library: XQuAD-en paragraphs as .txt files, plus `--pdfs` text PDFs and `--docx` Word files
written from the same paragraphs (tests/knowledge/docs_factory.py), so the PDF and DOCX readers run.
Each measurement is a fresh worker process shaped like the app after warm-up: an `Assistant` built
from config.yaml (MiniLM: CLIP has no offline weights here) with its embedder and store loaded; then
`Assistant.ingest(library)` into an empty store with `ingest.isolation` inline or process. The worker
reports the ingest's wall time and its own VmRSS before and after (and VmHWM). Modes alternate, so
each pair is measured side by side. Prints a Markdown table of medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from models.runtime_env import prepare_process_env  # noqa: E402

prepare_process_env(offline=True)  # before torch is imported; nothing is downloaded

from bench.e2e import _mem  # noqa: E402 - resident and peak memory of this process, MB

EVAL = ROOT.parent / "shared" / "data" / "eval"
MODES = ("inline", "process")


def write_library(folder: Path, docs: int, pdfs: int, docx: int) -> int:
    from tests.knowledge.docs_factory import write_docx, write_text_pdf

    folder.mkdir(parents=True)
    def corpus(name: str) -> list[dict]:
        text = (EVAL / name / "corpus.jsonl").read_text(encoding="utf-8")
        return [json.loads(x) for x in text.splitlines() if x.strip()]

    for r in corpus("xquad_en")[:docs]:
        (folder / f"{r['_id']}.txt").write_text(f"{r.get('title', '')}\n\n{r['text']}\n", encoding="utf-8")
    nq = corpus("nq_oracle")  # other passages, so no PDF or DOCX is a duplicate of a .txt
    for i, r in enumerate(nq[:pdfs]):
        words = r["text"].encode("latin-1", "replace").decode("latin-1").split()  # Helvetica: Latin-1 only
        lines = [" ".join(words[j : j + 12]) for j in range(0, len(words), 12)]
        write_text_pdf(folder / f"paper_{i:03d}.pdf", [lines[:40], lines[40:80] or ["(end)"]], title=None)
    for i, r in enumerate(nq[pdfs : pdfs + docx]):
        write_docx(folder / f"memo_{i:03d}.docx", r.get("title") or "Memo", r["text"].split(". "))
    return len(list(folder.iterdir()))


def worker(mode: str, library: Path, data: Path) -> dict[str, float]:
    from assistant.assistant import Assistant
    from assistant.config import load_config

    cfg = load_config(
        ROOT / "config.yaml",
        embedder={"backend": "minilm"},
        store={"data_dir": str(data)},
        ingest={"isolation": mode},
    )
    assistant = Assistant(cfg)
    assistant.parts.embedder.get()
    assistant.parts.store.get()  # as after warm-up
    before = _mem()
    first: list[float] = []
    t0 = time.perf_counter()
    report = assistant.ingest([library], progress=lambda _f, _m: first or first.append(time.perf_counter() - t0))
    seconds = time.perf_counter() - t0
    after = _mem()
    counts = report.totals
    return {
        "seconds": seconds,
        "first_progress": first[0] if first else float("nan"),
        "rss_before": before["VmRSS"],
        "rss_after": after["VmRSS"],
        "hwm": after["VmHWM"],
        "added": counts["added"],
        "failed": counts["failed"],
        "chunks": report.total_chunks,
        "visible": assistant.parts.store.get().count(),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--docs", type=int, default=240)
    ap.add_argument("--pdfs", type=int, default=20)
    ap.add_argument("--docx", type=int, default=20)
    ap.add_argument("--worker", choices=MODES, help=argparse.SUPPRESS)
    ap.add_argument("--library", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.library, args.data)))
        return 0

    tmp = Path(tempfile.mkdtemp(prefix="hark-ingest-iso-"))
    n_files = write_library(tmp / "library", args.docs, args.pdfs, args.docx)
    runs: dict[str, list[dict[str, float]]] = {m: [] for m in MODES}
    for r in range(args.repeats):
        for mode in MODES if r % 2 == 0 else MODES[::-1]:
            data = tmp / f"data-{mode}-{r}"
            cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", mode,
                   "--library", str(tmp / "library"), "--data", str(data)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
            row = json.loads(out.stdout.strip().splitlines()[-1])
            runs[mode].append(row)
            print(f"run {r} {mode}: {row}", file=sys.stderr)

    def med(mode: str, key: str) -> float:
        return statistics.median(x[key] for x in runs[mode])

    print(f"\n# bench/ingest_isolation.py — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{n_files} files ({args.docs} txt, {args.pdfs} pdf, {args.docx} docx), {args.repeats} runs per mode")
    print("| isolation | ingest s | first progress s | app VmRSS before MB | app VmRSS after MB "
          "| kept by the app MB | app VmHWM MB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for mode in MODES:
        print(f"| {mode} | {med(mode, 'seconds'):.1f} | {med(mode, 'first_progress'):.1f} "
              f"| {med(mode, 'rss_before'):.0f} | {med(mode, 'rss_after'):.0f} "
              f"| {med(mode, 'rss_after') - med(mode, 'rss_before'):+.0f} | {med(mode, 'hwm'):.0f} |")
    ratio = med("process", "seconds") / med("inline", "seconds")
    print(f"\nmedians; process / inline ingest time {ratio:.2f}x "
          f"({med('process', 'seconds') - med('inline', 'seconds'):+.1f} s); the first progress message "
          f"comes {med('process', 'first_progress') - med('inline', 'first_progress'):+.1f} s later from the child")
    for mode in MODES:
        bad = [x for x in runs[mode] if x["visible"] != x["chunks"] or x["failed"]]
        if bad:
            print(f"WARNING {mode}: {len(bad)} runs with failed files or chunks not visible to the app")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
