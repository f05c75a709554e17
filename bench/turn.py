"""Per-stage latency of one turn (`Assistant.respond`) on a small real library, plus the cost of the
conversation stages themselves (persona, routing, follow-up rewrite, trace).

    python -m bench.turn [--dataset ../shared/data/eval/xquad_en] [--docs 60] [--questions 40]

Builds a LanceDB library from the first `--docs` paragraphs of a BEIR-layout set (real Ingestor,
MiniLM), asks `--questions` of its questions whose gold paragraph is in the library — each in a
fresh session, then once more as a two-turn dialogue with a follow-up — and prints the median and
90th percentile of each stage's milliseconds (from the turn traces), and how often the answer holds
a gold answer string (extractive answers, no LLM). Nothing is downloaded.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from bench.common import EVAL, ROOT, pct, without_provider_keys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=str(EVAL / "xquad_en"))
    ap.add_argument("--docs", type=int, default=60)
    ap.add_argument("--questions", type=int, default=40)
    args = ap.parse_args()
    without_provider_keys()  # extractive answers only: the numbers must not depend on a provider

    from assistant.assistant import Assistant
    from assistant.config import load_config
    from assistant.persona import Persona
    from assistant.routing import route
    from knowledge.ingest import Ingestor
    from knowledge.open_library import open_library
    from models.runtime.errors import HarkError

    data = Path(args.dataset)
    corpus = [
        json.loads(x) for x in (data / "corpus.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()
    ]
    corpus = corpus[: args.docs]
    ids = {d["_id"] for d in corpus}
    gold: dict[str, str] = {}
    for line in (data / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, did, *_ = line.split("\t")
        gold[qid] = did
    queries = [
        json.loads(x) for x in (data / "queries.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()
    ]
    queries = [q for q in queries if gold.get(q["_id"]) in ids][: args.questions]

    tmp = Path(tempfile.mkdtemp(prefix="hark-bench-turn-"))
    docs = tmp / "docs"
    docs.mkdir()
    for d in corpus:
        (docs / f"{d['_id']}.txt").write_text(f"{d['title']}\n\n{d['text']}\n", encoding="utf-8")
    cfg = load_config(ROOT / "config.yaml")
    cfg._base_dir = tmp
    cfg.embedder.backend = "minilm"
    cfg.intent.adapter_dir = str(ROOT / cfg.intent.adapter_dir)
    emb, store = open_library(cfg.embedder, cfg.store, cfg.lancedb_uri)
    t0 = time.perf_counter()
    Ingestor(store, emb, cfg.ingest).ingest([docs])
    print(
        f"library: {store.count()} chunks from {len(corpus)} paragraphs in {time.perf_counter() - t0:.1f} s"
    )

    a = Assistant(cfg, embedder=emb, store=store)
    try:  # the committed intent classifier when there is one, else rules
        a.warm_up(speech=False, tts=False)
    except HarkError as exc:
        print(f"warm-up incomplete: {exc}", file=sys.stderr)
    intent = "classifier" if a.status()["models_loaded"]["intent classifier"] else "rules"
    list(a.respond(a.new_session(), "warm-up question about the library"))  # loads lazily built parts

    stages: dict[str, list[float]] = defaultdict(list)
    correct = 0
    thr = cfg.routing.confidence_threshold
    routed = {"classifier alone": 0, "pipeline": 0}
    for q in queries:
        done = list(a.respond(a.new_session(), q["text"]))[-1]
        it = done.trace["intent"]
        alone = it["predicted"] if it["confidence"] >= thr else "rag_search"
        routed["classifier alone"] += alone == "rag_search"
        routed["pipeline"] += it["label"] == "rag_search"
        for name, ms in done.trace["timings_ms"].items():
            stages[name].append(float(ms))
        own = sum(done.trace["timings_ms"].get(k, 0.0) for k in ("persona", "intent", "rewrite"))
        stages["(persona+intent+rewrite)"].append(own)
        answers = [x.lower() for x in q.get("answers", [])]
        correct += any(x in done.answer.text.lower() for x in answers)
    follow: list[float] = []
    follow_ups = [
        "tell me more",
        "why?",
        "what else?",
        "can you explain that?",
        "and what about its history?",
    ]
    followed = {"classifier alone": 0, "pipeline": 0}
    n_follow = 0
    for i, q in enumerate(queries[:20]):
        s = a.new_session()
        list(a.respond(s, q["text"]))
        done = list(a.respond(s, follow_ups[i % len(follow_ups)]))[-1]
        follow.append(done.trace["timings_ms"].get("rewrite", 0.0))
        it = done.trace["intent"]
        alone = it["predicted"] if it["confidence"] >= thr else "rag_search"
        n_follow += 1
        followed["classifier alone"] += alone == "rag_search"
        followed["pipeline"] += it["label"] == "rag_search"

    import csv

    web_qs = [r["text"] for r in csv.DictReader((ROOT / "models" / "intent_external.csv").open(encoding="utf-8"))
              if r["label"] == "web_search"]  # fmt: skip
    web_kept = {"classifier alone": 0, "pipeline": 0}
    for text in web_qs:
        it = list(a.respond(a.new_session(), text))[-1].trace["intent"]
        web_kept["classifier alone"] += (
            it["predicted"] if it["confidence"] >= thr else "rag_search"
        ) == "web_search"
        web_kept["pipeline"] += it["label"] == "web_search"

    persona = Persona()
    texts = [q["text"] for q in queries] * 25
    t = time.perf_counter()
    for x in texts:
        persona.check(x)
    persona_us = (time.perf_counter() - t) / len(texts) * 1e6
    t = time.perf_counter()
    for x in texts:
        route(x, always_web=False, classifier=None, threshold=0.5)
    rules_us = (time.perf_counter() - t) / len(texts) * 1e6

    print(f"\nturn stages over {len(queries)} questions (fresh session each; extractive answers; "
          f"intent: {intent})")  # fmt: skip
    print("| stage | median ms | p90 ms | n |\n|---|---|---|---|")
    for name in sorted(stages, key=lambda n: -statistics.median(stages[n])):
        v = stages[name]
        print(f"| {name} | {statistics.median(v):.1f} | {pct(v, 0.9):.1f} | {len(v)} |")
    print(f"| rewrite of a follow-up (heuristic) | {statistics.median(follow):.2f} | "
          f"{pct(follow, 0.9):.2f} | {len(follow)} |")  # fmt: skip
    print(f"\nrouting (intent: {intent}; threshold {thr}; "
          f"web_min_confidence {cfg.routing.web_min_confidence}) — share sent to the documents:")  # fmt: skip
    print("| turns | classifier + threshold alone | whole pipeline |\n|---|---|---|")
    print(f"| {len(queries)} library questions (fresh session) | {routed['classifier alone']}/{len(queries)} | "
          f"{routed['pipeline']}/{len(queries)} |")  # fmt: skip
    print(f"| {n_follow} follow-ups of a library question | {followed['classifier alone']}/{n_follow} | "
          f"{followed['pipeline']}/{n_follow} |")  # fmt: skip
    print(f"\nweb questions of models/intent_external.csv kept on the web path (library: the same {len(corpus)} "
          f"paragraphs): classifier alone {web_kept['classifier alone']}/{len(web_qs)}, "
          f"whole pipeline {web_kept['pipeline']}/{len(web_qs)}")  # fmt: skip
    print(f"\npersona check: {persona_us:.0f} µs per question; rule routing: {rules_us:.0f} µs per question")
    print(
        f"answer contains a gold answer string: {correct}/{len(queries)} = {correct / max(1, len(queries)):.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
