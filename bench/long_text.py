"""Does embedding the whole of a long chunk (window mean) retrieve at least as well as truncation?

    OMP_WAIT_POLICY=PASSIVE HF_HUB_OFFLINE=1 python -m bench.long_text [--datasets nq_oracle,xquad_en]
        [--words 450] [--queries 0]

The development passages are short (median 87 / 113 words, under MiniLM's 256-token window), so the
question is built honestly: consecutive corpus passages (in corpus order, titles kept) are grouped
into documents of about `--words` words (a group closes once it reaches the target), each query's
gold passage maps to its group, and the groups are embedded by the bundled all-MiniLM-L6-v2 in both
modes. The gold text then lies anywhere in a ~450-word chunk, as in Hark's 500-word chunks. The plain
per-passage run shows the short-text case (both modes should agree). Exact cosine; metrics by ranx.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from bench.common import EVAL

METRICS = ["ndcg@10", "recall@10", "recall@50", "mrr@10"]


def load(name: str) -> tuple[list[tuple[str, str]], dict[str, str], dict[str, dict[str, int]]]:
    root = EVAL / name
    corpus = []
    with open(root / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            text = f"{r.get('title') or ''}\n\n{r['text']}".strip()
            corpus.append((str(r["_id"]), text))
    queries = {}
    with open(root / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            queries[str(r["_id"])] = r["text"]
    qrels: dict[str, dict[str, int]] = {}
    with open(root / "qrels" / "test.tsv", encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            q, d, s = line.rstrip("\n").split("\t")
            if int(s) > 0 and q in queries:
                qrels.setdefault(q, {})[d] = int(s)
    return corpus, queries, qrels


def group(corpus: list[tuple[str, str]], target_words: int) -> tuple[list[tuple[str, str]], dict[str, str]]:
    groups, owner, cur, cur_ids, words = [], {}, [], [], 0
    for doc_id, text in corpus:
        cur.append(text)
        cur_ids.append(doc_id)
        words += len(text.split())
        if words >= target_words:
            gid = f"g{len(groups)}"
            groups.append((gid, "\n\n".join(cur)))
            owner.update(dict.fromkeys(cur_ids, gid))
            cur, cur_ids, words = [], [], 0
    if cur:
        gid = f"g{len(groups)}"
        groups.append((gid, "\n\n".join(cur)))
        owner.update(dict.fromkeys(cur_ids, gid))
    return groups, owner


def evaluate(doc_vecs: np.ndarray, doc_ids: list[str], q_vecs: np.ndarray, q_ids: list[str], qrels) -> dict:
    from ranx import Qrels, Run
    from ranx import evaluate as rx_evaluate

    scores = q_vecs @ doc_vecs.T
    run = {}
    for i, qid in enumerate(q_ids):
        top = np.argsort(-scores[i])[:100]
        run[qid] = {doc_ids[j]: float(scores[i, j]) for j in top}
    return rx_evaluate(Qrels(qrels), Run(run), METRICS)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="nq_oracle,xquad_en")
    ap.add_argument("--words", type=int, default=450)
    ap.add_argument("--queries", type=int, default=0, help="first N judged queries (0: all)")
    args = ap.parse_args()

    from models.embedder import MiniLMEmbedder
    from models.settings import EmbedderSettings

    mean = MiniLMEmbedder(EmbedderSettings(backend="minilm", long_text="window_mean"))
    mean.warm_up()
    trunc = MiniLMEmbedder(EmbedderSettings(backend="minilm", long_text="truncate"))
    trunc._model, trunc._tok, trunc._max, trunc._loaded = mean._model, mean._tok, mean._max, True

    rows = []
    for name in args.datasets.split(","):
        corpus, queries, qrels = load(name)
        q_ids = sorted(qrels, key=lambda q: int("".join(c for c in q if c.isdigit()) or 0))
        if args.queries:
            q_ids = q_ids[: args.queries]
        q_vecs = mean.embed_documents([queries[q] for q in q_ids])
        groups, owner = group(corpus, args.words)
        g_qrels = {q: {owner[d]: 1 for d in qrels[q] if d in owner} for q in q_ids}
        g_words = [len(t.split()) for _, t in groups]
        g_tokens = [len(mean._token_ids(t)) for _, t in groups]
        over = sum(t > mean.window_size for t in g_tokens) / len(groups)
        p_qrels = {q: qrels[q] for q in q_ids}
        setups = [
            ("passages", [d for d, _ in corpus], [t for _, t in corpus], p_qrels),
            (f"~{args.words}-word groups", [g for g, _ in groups], [t for _, t in groups], g_qrels),
        ]
        for label, ids, texts, rel in setups:
            for mode, emb in (("truncate", trunc), ("window_mean", mean)):
                t0 = time.perf_counter()
                vecs = emb.embed_documents(texts)
                secs = time.perf_counter() - t0
                res = evaluate(vecs, ids, q_vecs, q_ids, rel)
                rows.append((name, label, len(ids), mode, res, secs))
                print(f"# {name} {label} {mode}: {res} ({secs:.0f} s)", flush=True)
        print(
            f"# {name}: {len(groups)} groups, median {int(np.median(g_words))} words / "
            f"{int(np.median(g_tokens))} tokens, {100 * over:.0f} % longer than one window",
            flush=True,
        )
    print("\n| dataset | documents | n | long_text | " + " | ".join(METRICS) + " | embed s |")
    print("|---|---|---|---|" + "---|" * len(METRICS) + "---|")
    for name, label, n, mode, res, secs in rows:
        vals = " | ".join(f"{res[m]:.3f}" for m in METRICS)
        print(f"| {name} | {label} | {n} | {mode} | {vals} | {secs:.0f} |")


if __name__ == "__main__":
    main()
