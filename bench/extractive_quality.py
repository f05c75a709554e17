"""How often the extractive answerer's answer contains the gold answer span (XQuAD-en / NQ-oracle).

Evidence per question: the gold passage plus up to 4 distractor passages (XQuAD: other paragraphs
of the same article — same topic, hard; NQ: random passages), with the gold passage at position 1
("gold first", what a good retriever gives) or at position 3 ("gold third"). Methods:
- lead-3: the first three sentences of block 1 (a baseline needing no question at all);
- lexical: ExtractiveAnswerer with IDF-weighted content-word overlap only;
- lexical+minilm: plus the cosine of all-MiniLM-L6-v2 sentence embeddings (what the app uses).

    python -m bench.extractive_quality [--dataset xquad_en|nq_oracle] [--limit 300]
"""

from __future__ import annotations

import argparse
import json
import random
import time
import zlib

from assistant.llm.extractive import ExtractiveAnswerer, split_sentences
from bench.common import EVAL
from knowledge.types import Hit


def load(dataset: str) -> tuple[dict[str, dict], list[dict], dict[str, str]]:
    root = EVAL / dataset
    corpus = {d["_id"]: d for d in map(json.loads, (root / "corpus.jsonl").open())}
    queries = [json.loads(line) for line in (root / "queries.jsonl").open()]
    qrels: dict[str, str] = {}
    for line in (root / "qrels" / "test.tsv").open().readlines()[1:]:
        q, d, _ = line.rstrip("\n").split("\t")
        qrels.setdefault(q, d)
    return corpus, queries, qrels


def evidence_for(
    corpus: dict, gold_id: str, rng: random.Random, gold_pos: int, same_article: bool
) -> list[Hit]:
    ids = list(corpus)
    if same_article:
        prefix = gold_id.rsplit("_", 1)[0]
        pool = [i for i in ids if i != gold_id and i.rsplit("_", 1)[0] == prefix]
    else:
        pool = [i for i in rng.sample(ids, 8) if i != gold_id]
    distractors = rng.sample(pool, min(4, len(pool)))
    order = distractors[:]
    order.insert(min(gold_pos, len(order)), gold_id)
    return [
        Hit(i, i, corpus[i].get("title", ""), corpus[i]["text"], 1.0 - 0.1 * n) for n, i in enumerate(order)
    ]


def contains(text: str, answers: list[str]) -> bool:
    low = text.lower()
    return any(a.lower() in low for a in answers)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="xquad_en")
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--split", choices=["dev", "test", "all"], default="all", help="dev/test: disjoint halves by id hash"
    )
    ap.add_argument("--no-embed", action="store_true", help="skip the (slow) MiniLM method")
    ap.add_argument("--min-relative", type=float, default=None)
    ap.add_argument("--rank-prior", type=float, default=None)
    args = ap.parse_args()

    corpus, queries, qrels = load(args.dataset)
    rng = random.Random(args.seed)
    qs = [q for q in queries if q["_id"] in qrels and q.get("answers")]
    if args.split != "all":
        want = 0 if args.split == "dev" else 1
        qs = [q for q in qs if zlib.crc32(q["_id"].encode()) % 2 == want]
    qs = rng.sample(qs, min(args.limit, len(qs)))
    same_article = args.dataset == "xquad_en"

    knobs = {
        k: v
        for k, v in (("min_relative", args.min_relative), ("rank_prior", args.rank_prior))
        if v is not None
    }
    methods = {"lexical": ExtractiveAnswerer(max_sentences=3, **knobs)}
    if not args.no_embed:
        from models.embedder import MiniLMEmbedder
        from models.settings import EmbedderSettings

        emb = MiniLMEmbedder(EmbedderSettings(backend="minilm"))
        emb.warm_up()
        methods["lexical+minilm"] = ExtractiveAnswerer(max_sentences=3, embed=emb.embed_documents, **knobs)
    print(
        f"dataset={args.dataset} split={args.split} {knobs or 'default knobs'} questions={len(qs)} "
        f"distractors=4 ({'same article' if same_article else 'random'})"
    )
    print(f"| evidence | {'method':<15} | answer span in answer | median ms |")
    print("|---|---|---|---|")
    for gold_pos, label in ((0, "gold first"), (2, "gold third")):
        rng_case = random.Random(args.seed + gold_pos)
        cases = [(q, evidence_for(corpus, qrels[q["_id"]], rng_case, gold_pos, same_article)) for q in qs]
        lead = sum(contains(" ".join(split_sentences(ev[0].chunk_text)[:3]), q["answers"]) for q, ev in cases)
        print(f"| {label} | {'lead-3':<15} | {lead / len(cases):.3f} | – |")
        for name, answerer in methods.items():
            hits, times = 0, []
            for q, ev in cases:
                t = time.perf_counter()
                text = answerer.answer(q["text"], ev)
                times.append((time.perf_counter() - t) * 1000)
                hits += contains(text, q["answers"])
            times.sort()
            print(f"| {label} | {name:<15} | {hits / len(cases):.3f} | {times[len(times) // 2]:.1f} |")


if __name__ == "__main__":
    main()
