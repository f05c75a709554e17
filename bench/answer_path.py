"""The answer path with no LLM at 10k chunks: typed turns, answerability model vs the threshold.

    nice -n 10 python -m bench.answer_path [--filler 10000] [--questions 40]

The library is bench/e2e.py's (XQuAD-en paragraphs ingested for real, padded with NQ-text chunks to
`--filler` chunks); no provider is configured, so every answer is the extractive one. Each question
runs four times, interleaved in one process: with the answerability model (`Answerer.assess` in
the evidence stage, what Hark does), the same without the sentence judge (the offline answer ranked by
words alone), with that model but no sentence embedded for its `sentence_sim`
(the feature then takes its fitted mean: the embedding's cost alone), and with only the cosine
threshold `retrieval.min_score`. Reported from the turn traces: p50/p90 of the whole turn, of the answer stage, and of the
answerability stage.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from bench.common import ROOT, load_average, pct
from bench.e2e import build_library


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--filler", type=int, default=10000)
    ap.add_argument("--questions", type=int, default=40)
    args = ap.parse_args()

    from assistant.assistant import Assistant
    from assistant.config import load_config
    from assistant.events import Done
    from assistant.turn import Turn

    tmp = Path(tempfile.mkdtemp(prefix="hark-answer-path-"))
    cfg = load_config(ROOT / "config.yaml")
    cfg._base_dir = tmp
    cfg.embedder.backend = "minilm"
    cfg.llm.order = []  # no LLM: the extractive answer
    cfg.intent.adapter_dir = str(ROOT / cfg.intent.adapter_dir)
    assistant = Assistant(cfg)
    questions, chunks = build_library(tmp, assistant, args.filler)
    questions = questions[: args.questions]
    decide = Turn._decide
    rows: dict[str, list[dict]] = {"answerability model": [], "model, no sentence judge": [],
                                   "model, no sentence embedded": [], "threshold only": []}
    assistant.respond(assistant.new_session(), "warm up")  # models loaded before the clock
    extractive = assistant.parts.answerer.get().extractive
    k, judge = extractive.similarity_candidates, extractive.judge
    for q in questions:
        for mode in rows:
            Turn._decide = (lambda self, found: found) if mode == "threshold only" else decide
            extractive.similarity_candidates = 0 if mode == "model, no sentence embedded" else k
            extractive.judge = None if mode == "model, no sentence judge" else judge
            done = [e for e in assistant.respond(assistant.new_session(), q["text"]) if isinstance(e, Done)][-1]
            rows[mode].append(done.trace.get("timings_ms", {}) | {"not_known": done.answer.not_known})
    Turn._decide = decide
    extractive.similarity_candidates, extractive.judge = k, judge
    print(f"{len(questions)} XQuAD questions, {chunks} chunks, no LLM (extractive answers), "
          f"load {load_average():.1f}")
    print("| path | turn p50 ms | turn p90 ms | answerability p50 ms | answer p50 ms | not known |")
    print("|---|---:|---:|---:|---:|---:|")
    for mode, rs in rows.items():
        total = [r["total"] for r in rs]
        dec = [r.get("answerability", 0.0) for r in rs]
        ans = [r.get("answer", 0.0) for r in rs]
        nk = sum(r["not_known"] for r in rs)
        print(f"| {mode} | {statistics.median(total):.1f} | {pct(total, 0.9):.1f} | "
              f"{statistics.median(dec):.1f} | {statistics.median(ans):.1f} | {nk}/{len(rs)} |")


if __name__ == "__main__":
    main()
