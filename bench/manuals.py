"""Offline answers on real manuals a new user might index: ten hand-checked questions about the flex,
gnuplot and Graphviz manuals that Debian's documentation packages install, answered the way `ask`
answers them with no LLM (real ingestion, retrieval, the answerability model, the extractive answer).

An answer counts as right when its first two sentences hold one of the expected strings (checked by
hand against the PDFs' text). The PDFs (not in the repository):

    apt-get download flex-doc graphviz-doc gnuplot-doc && for f in *.deb; do dpkg -x "$f" pkgs; done
    python -m bench.manuals --pdfs pkgs/usr/share/doc [--other DIR]

`--other DIR`: the same questions through another checkout's code (e.g. `git worktree add DIR HEAD~1`),
run in a child process, side by side in one table.

`--out-of-scope SET,...`: the answerability decision on a domain it was not fitted on. The report
half of each dev set's questions (`../shared/data/eval/SET`, at most `--limit`) asked of the same
four manuals: the share answered "not known" (none of them is about these manuals), beside the ten
questions above that the manuals do answer.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

MANUALS = ["flex-doc/flex.pdf.gz", "gnuplot/gnuplot.pdf", "graphviz/pdf/dotguide.pdf.gz", "graphviz/pdf/dot.1.pdf.gz"]
QUESTIONS = {
    "What is the default name of the file that flex generates?": ["lex.yy.c"],
    "How do I make a flex scanner case-insensitive?": ["--case-insensitive"],
    "What does yywrap return to indicate that there are no more files?": ["true (non-zero)"],
    "What does the REJECT action do in flex?": ["second best"],
    "How do I set the title of a plot in gnuplot?": ["set title command"],
    "How do I save a gnuplot plot as a PNG file?": ["set term png", "set terminal png", "pngcairo"],
    "What does set logscale do?": ["base of the log scaling", "combinations of x"],
    "Which command fits a function to data in gnuplot?": ["fit command fits"],
    "What does the rankdir attribute control in dot?": ["rankdir=LR", "left to right"],
    "How do I make dot draw an edge without an arrowhead?": ["or none", "dir=none"],
}


def first_two(answer: str) -> str:
    parts = re.split(r"(?<=\]\.)\s+|(?<=\][!?])\s+", answer.strip())
    return " ".join(parts[:2])


def answers(pdfs: Path, out_of_scope: Sequence[str] = (), limit: int = 300) -> dict[str, str]:
    """Each question's answer, through this checkout's code (with `out_of_scope`: each set's
    not-known rate printed)."""
    from assistant.answer import Answerer
    from assistant.answerability import Answerability, Signals
    from assistant.config import LLMSettings, PromptSettings
    from knowledge.ingest import Ingestor
    from knowledge.retrieve import Retriever
    from knowledge.settings import IngestSettings, RetrievalSettings, StoreSettings
    from knowledge.store import ChunkStore
    from models.embedder import load_embedder
    from models.settings import EmbedderSettings

    work = Path(tempfile.mkdtemp(prefix="hark-manuals-"))
    docs = work / "docs"
    docs.mkdir()
    for rel in MANUALS:
        src = pdfs / rel
        data = gzip.decompress(src.read_bytes()) if src.suffix == ".gz" else src.read_bytes()
        (docs / src.name.removesuffix(".gz")).write_bytes(data)
    emb = load_embedder(EmbedderSettings(backend="minilm"))
    store = ChunkStore.open(str(work / "lancedb"), emb.identity, emb.dim, StoreSettings(data_dir=str(work)))
    Ingestor(store, emb, IngestSettings(isolation="inline")).ingest([docs])
    retriever = Retriever(emb, store, RetrievalSettings())
    answerer = Answerer(LLMSettings(order=[]), PromptSettings(), embed=emb.embed_documents,
                        answerability=Answerability.for_embedder(emb))

    def decide(q: str) -> tuple[Any, Any]:
        r = retriever.retrieve(q)
        return r, answerer.assess(q, r.hits, r.candidates, Signals(library_level=r.library_level, vocabulary=r.vocabulary))

    out, known = {}, []
    for q in QUESTIONS:
        r, decision = decide(q)
        out[q] = answerer.answer(q, r.hits, decision=decision).text
        known.append(decision.answerable)
    if out_of_scope:
        from assistant.grounding_eval import half
        from bench.common import EVAL
        from knowledge.beir import load_beir

        print("| questions → the manuals | kind | n | not known |\n|---|---|---:|---:|")
        print(f"| the ten above | answerable | {len(known)} | {1 - sum(known) / len(known):.3f} |")
        for name in out_of_scope:
            qs = load_beir(EVAL / name)
            nk = [not decide(qs.queries[i])[1].answerable for i in half(list(qs.queries), "report")[:limit]]
            print(f"| {name} | out of scope | {len(nk)} | {sum(nk) / len(nk):.3f} |", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pdfs", type=Path, default=Path("/usr/share/doc"), help="where the packages put the manuals")
    ap.add_argument("--other", type=Path, default=None, help="another checkout, answered side by side")
    ap.add_argument("--json", action="store_true", help="print this checkout's answers as JSON (for --other)")
    ap.add_argument("--out-of-scope", default="", help="comma-separated dev sets asked of the manuals")
    ap.add_argument("--limit", type=int, default=300, help="questions per --out-of-scope set")
    args = ap.parse_args()
    mine = answers(args.pdfs.resolve(), [s for s in args.out_of_scope.split(",") if s], args.limit)
    if args.json:
        print(json.dumps(mine))
        return
    runs = {"this code": mine}
    if args.other is not None:
        cmd = [sys.executable, __file__, "--pdfs", str(args.pdfs.resolve()), "--json"]
        env = {**os.environ, "PYTHONPATH": str(args.other.resolve())}  # that checkout's packages
        done = subprocess.run(cmd, cwd=args.other, env=env, capture_output=True, text=True, check=True)
        runs[str(args.other)] = json.loads(done.stdout.strip().splitlines()[-1])
    right = {name: 0 for name in runs}
    for q, expected in QUESTIONS.items():
        print(q)
        for name, got in runs.items():
            ok = any(e.lower() in first_two(got[q]).lower() for e in expected)
            right[name] += ok
            print(f"  {'right' if ok else 'wrong'} [{name}] {got[q][:220]}")
    print("\n| code | right (first two sentences) |\n|---|---:|")
    for name, n in right.items():
        print(f"| {name} | {n} / {len(QUESTIONS)} |")


if __name__ == "__main__":
    main()
