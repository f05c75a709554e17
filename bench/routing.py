"""Routing by where the answer is, on real manuals: where each kind of question goes.

    python -m bench.routing [--pdfs /work/pdfs] [--other DIR]

A library of the English PDF manuals of `../shared/data/eval/manuals` (real ingest, LanceDB in a temp
folder, MiniLM, no LLM, no web key), and four kinds of question, each asked as a full turn of a real
`Assistant` with the shipped intent classifier; the route is the trace's final intent label:
- the manuals set's answerable English questions → `rag_search` (the documents);
- the `conversation_meta` rows of the intent external file, asked after one exchange → `conversation_meta`
  (or `persona`, which answers questions about Hark itself);
- its `greeting` rows → `greeting`;
- its `web_search` rows (live facts, world lookups, the noisy ones) → `web_search` (the library does not
  answer them; with a key they go to the web, without one the answer is "not known").

`--other DIR`: the same through another checkout's code and adapter (e.g. `git archive BASE | tar -x -C
DIR`), in a child process, side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from bench.common import EVAL, ROOT, jsonl, load_average, without_provider_keys

# the accepted final labels; a question about Hark itself ("who are you?") is answered by the persona
EXPECTED = {"manuals": ("rag_search",), "conversation": ("conversation_meta", "persona"), "greeting": ("greeting",),
            "world": ("web_search",)}


def question_sets(external: Path) -> dict[str, list[str]]:
    from models.intent_data import read_csv

    rows = read_csv(external)
    manuals = [q["question"] for q in jsonl(EVAL / "manuals" / "questions.jsonl")
               if q["kind"] == "answerable" and q["language"] == "en" and q["file"] != "lilypond-learning-de.pdf"]
    by = {label: [e.text for e in rows if e.label == label] for label, *_ in EXPECTED.values()}
    return {"manuals": manuals, "conversation": by["conversation_meta"], "greeting": by["greeting"],
            "world": by["web_search"]}


def routes(pdfs: Path, external: Path) -> dict[str, list[str]]:
    """Each set's final route labels, through this checkout's code."""
    from assistant.assistant import Assistant
    from assistant.config import load_config
    from assistant.memory import Exchange

    without_provider_keys()
    work = Path(tempfile.mkdtemp(prefix="hark-routing-"))
    docs = work / "docs"
    docs.mkdir()
    for pdf in sorted(pdfs.glob("*.pdf")):
        if not pdf.stem.endswith("-de"):
            (docs / pdf.name).symlink_to(pdf.resolve())
    cfg = load_config(ROOT / "config.yaml", **{
        "embedder": {"backend": "minilm"}, "store": {"data_dir": str(work / "data")}, "tts": {"enabled": False},
        "ingest": {"isolation": "inline"}, "llm": {"order": []},
        "trace": {"path": str(work / "traces.jsonl"), "log_path": str(work / "hark.log")},
    })  # fmt: skip
    cfg._base_dir = ROOT
    assistant = Assistant(cfg)
    out: dict[str, list[str]] = {}
    try:
        assistant.warm_up(speech=False, tts=False)
        assistant.ingest([docs])
        assistant.library_changed()
        for name, questions in question_sets(external).items():
            labels = []
            for q in questions:
                session = assistant.new_session()
                if name == "conversation":
                    session.memory.add(Exchange(user="How do I set the title of a plot?", assistant="With set title [1].",
                                                intent="rag_search", query="How do I set the title of a plot?"))  # fmt: skip
                done = list(assistant.respond(session, q))[-1]
                labels.append(str((done.trace.get("intent") or {}).get("label", "")))
            out[name] = labels
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pdfs", type=Path, default=Path("/work/pdfs"), help="the manuals' PDFs (manuals/fetch.sh)")
    ap.add_argument("--external", type=Path, default=ROOT / "models" / "intent_external.csv",
                    help="the intent external file whose rows are asked (the same file for --other)")
    ap.add_argument("--other", type=Path, default=None, help="another checkout, side by side")
    ap.add_argument("--json", action="store_true", help="print the routes as JSON (for --other)")
    args = ap.parse_args()
    mine = routes(args.pdfs.resolve(), args.external.resolve())
    if args.json:
        print(json.dumps(mine))
        return 0
    runs = {"this code": mine}
    if args.other is not None:
        cmd = [sys.executable, __file__, "--pdfs", str(args.pdfs.resolve()), "--external", str(args.external.resolve()),
               "--json"]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(args.other.resolve())}
        done = subprocess.run(cmd, cwd=args.other, env=env, capture_output=True, text=True, check=True)
        runs[str(args.other)] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"load average {load_average():.1f}; routes of full turns on the English manuals (no LLM, no web key)")
    print("| questions | n | expected | " + " | ".join(runs) + " |\n|---|---:|---|" + "---:|" * len(runs))
    for name, expected in EXPECTED.items():
        cells = [f"{sum(label in expected for label in got[name]) / len(got[name]):.3f}" for got in runs.values()]
        print(f"| {name} | {len(mine[name])} | {' or '.join(expected)} | " + " | ".join(cells) + " |")
    for run, got in runs.items():
        for name, expected in EXPECTED.items():
            wrong = Counter(label for label in got[name] if label not in expected)
            if wrong:
                print(f"[{run}] {name}: elsewhere {dict(wrong)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
