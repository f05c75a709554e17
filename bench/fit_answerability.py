"""Fit the answerability model (assistant/answerability.json) on the dev sets and report it.

Answerable pairs: a set's questions against its own library. Out-of-scope pairs: one set's questions
against another set's library (never its own). Features come from Hark's own ingest, retrieval and
sentence ranking (`assistant.grounding_eval.run_pairing`, no answer written). The logistic model is
fitted on the "fit" half of every pairing's questions (a hash of the id), the threshold is the
largest that keeps the false not-known rate ≤ 4 % on every answerable pairing of that half (the
≤ 5 % target with a margin);
the table reports each pairing on the other half. A few more pairings are reported, never fitted on
(`REPORTED_ANSWERABLE`, `REPORTED_OUT_OF_SCOPE`: answers in another language than the question's, the
health questions' own library).

    nice -n 10 python -m bench.fit_answerability [--limit 300] [--skip SET,...] [--select] [--write [--write-lexical]]
        [--write-reference]         # this embedder's anchor points: the one other embedders are calibrated to
        [--without FEATURE,...]     # an ablation: the model refitted without these
        [--fit-reported]            # an experiment: fitted on the reported-only pairings too
        [--cross-lingual]           # an experiment: a second model for an English question on German evidence
        [--long-text window_mean]   # another layout's model than config.yaml's `embedder.long_text`
        [--sentence-candidates 2]   # sentence_sim: the best cosine of the first k sentences by overlap
        [--text-model NAME|FOLDER]  # another sentence-transformers embedder than config.yaml's: its own fit,
                                    # and the shipped model as Hark loads it for that embedder (calibrated)
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from assistant.answerability import (
    FEATURES,
    LEXICAL,
    MODEL_FILE,
    RECORDED,
    SENTENCE,
    Answerability,
    Logistic,
    mean_space,
)
from assistant.calibration import Calibrated, anchor_points_of
from bench.common import EVAL

ANSWERABLE = [("xquad_en", "xquad_en"), ("xquad_de", "xquad_de"), ("nq_oracle", "nq_oracle"),
              ("covid_faq", "covid_faq"), ("xquad_en_noisy", "xquad_en_noisy")]
OUT_OF_SCOPE = [("medquad_liveqa", "xquad_en"), ("xquad_en", "covid_faq"), ("covid_faq", "xquad_en"),
                ("nq_oracle", "covid_faq"), ("xquad_de", "covid_faq"), ("medquad_liveqa", "nq_oracle"),
                ("covid_faq", "xquad_de"), ("xquad_en_noisy", "covid_faq")]
# reported, never fitted on nor binding the threshold: English questions whose answer is in German text (the
# bilingual library, half of whose articles are German only; the German library), the health questions against
# their own 15,768 passages, and the German and the bilingual libraries for questions about other things
# ("SET@SPLIT": the questions judged in that set's qrels/SPLIT.tsv)
REPORTED_ANSWERABLE = [("xquad_de_en", "xquad_de_en"), ("xquad_de_en@test_german_only", "xquad_de_en"),
                       ("xquad_en", "xquad_de"), ("medquad_liveqa", "medquad_liveqa")]
REPORTED_OUT_OF_SCOPE = [("covid_faq", "xquad_de_en"), ("medquad_liveqa", "xquad_de_en"), ("nq_oracle", "xquad_de"),
                         ("medquad_liveqa", "xquad_de"), ("nq_oracle", "xquad_de_en")]


def _kept(pairs: list[tuple[str, str]], skip: set[str]) -> list[tuple[str, str]]:
    return [p for p in pairs if not {p[0].partition("@")[0], p[1]} & skip]


def pairings(skip: set[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The answerable and out-of-scope pairings that are fitted on."""
    return _kept(ANSWERABLE, skip), _kept(OUT_OF_SCOPE, skip)


def reported(skip: set[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The answerable and out-of-scope pairings that are only reported."""
    return _kept(REPORTED_ANSWERABLE, skip), _kept(REPORTED_OUT_OF_SCOPE, skip)


def config(long_text: str | None, text_model: str | None = None) -> Any:
    """config.yaml's configuration, with `embedder.long_text` and `embedder.text_model` set when given."""
    from assistant.config import load_config

    cfg = load_config(None)
    if long_text:
        cfg.embedder.long_text = long_text
    if text_model:
        cfg.embedder.text_model = text_model
    return cfg


def collect(limit: int, work: Path, cache: Path, skip: set[str], long_text: str | None = None,
            sentence_candidates: int = 2, text_model: str | None = None) -> tuple[dict[str, list[dict]], Any]:
    """Feature rows per pairing and half (cached as JSON beside the indexes)."""
    from assistant.grounding_eval import build, run_pairing
    from knowledge.beir import load_beir

    cfg = config(long_text, text_model)
    cfg.llm.order = []  # features only; no provider is asked
    data: dict[str, list[dict]] = json.loads(cache.read_text()) if cache.is_file() else {}
    built: dict[str, tuple] = {}
    (answerable, out), (more_answerable, more_out) = pairings(skip), reported(skip)
    for qs, lib in answerable + out + more_answerable + more_out:
        for which in ("fit", "report"):
            key = f"{qs}->{lib}:{which}:{limit}"
            if key in data:
                continue
            if lib not in built:
                built[lib] = build(cfg, EVAL / lib, work, sentence_candidates)
            library, retriever, answerer = built[lib]
            t = time.perf_counter()
            name, _, split = qs.partition("@")
            questions = load_beir(EVAL / name, split or "test")
            rows = run_pairing(library, questions, retriever, answerer, which=which, limit=limit, answer=False)
            data[key] = [{"y": int(r.answerable), "x": r.features} for r in rows]
            print(f"{key}: {len(rows)} questions in {time.perf_counter() - t:.0f} s", flush=True)
            cache.write_text(json.dumps(data))
    from models.embedder import load_embedder

    return data, load_embedder(cfg.embedder)


def _config_key(long_text: str | None = None, sentence_candidates: int = 2, text_model: str | None = None) -> str:
    """The feature cache (every feature `assistant.answerability.features` records) is valid for one
    retrieval, ingest and embedder configuration, one version of the feature, sentence-splitting and
    sentence-ranking code, and one number of sentences that `sentence_sim` is the best of."""
    import hashlib

    import assistant.answerability
    import assistant.llm.extractive
    import assistant.word_match
    import knowledge.sentences

    cfg = config(long_text, text_model)
    code = [Path(m.__file__).read_text(encoding="utf-8")
            for m in (assistant.answerability, assistant.word_match, assistant.llm.extractive, knowledge.sentences)]
    blob = json.dumps([cfg.retrieval.model_dump(), cfg.ingest.model_dump(), cfg.embedder.model_dump(), code,
                       cfg.llm.extractive_embedding, sentence_candidates], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:10]


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0, iters: int = 50) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by Newton's method (standardised inputs)."""
    n, d = x.shape
    a = np.hstack([x, np.ones((n, 1))])
    w = np.zeros(d + 1)
    reg = np.diag([l2] * d + [0.0])
    for _ in range(iters):
        p = 1 / (1 + np.exp(-np.clip(a @ w, -60, 60)))
        g = a.T @ (p - y) + reg @ w
        h = (a * (p * (1 - p))[:, None]).T @ a + reg
        step = np.linalg.solve(h, g)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:d], float(w[d])


def model_for(
    name: str, feats: tuple[str, ...], rows: list[dict], groups: list[list[dict]], max_false_nk: float,
    sentence_candidates: int = 0,
) -> Logistic:
    """Fitted on all rows; the threshold keeps the false not-known rate ≤ `max_false_nk` on every
    answerable pairing (`groups`) of the fit half."""
    x = np.array([[r["x"][f] for f in feats] for r in rows], dtype=np.float64)
    y = np.array([r["y"] for r in rows], dtype=np.float64)
    mean, scale = x.mean(0), x.std(0) + 1e-9
    coef, icpt = fit((x - mean) / scale, y)
    k = sentence_candidates if set(SENTENCE) & set(feats) else 0
    m = Logistic(name, feats, tuple(mean), tuple(scale), tuple(coef), icpt, 0.5, k)
    limits = []
    for group in groups:
        p = np.sort([m.probability(r["x"]) for r in group])
        if len(p):
            limits.append(float(p[int(np.floor(max_false_nk * len(p)))]))  # the k-th lowest probability
    # rounded down: rounded up, it can pass the k-th lowest probability and add one false not-known
    threshold = math.floor(min(limits) * 1e4) / 1e4 if limits else 0.5
    return Logistic(name, feats, tuple(mean), tuple(scale), tuple(coef), icpt, threshold, k)


def cross_lingual(x: dict[str, float]) -> bool:
    """An English question whose top chunks are mostly German (the features `german`, `evidence_german`)."""
    return x.get("german", 0.0) == 0.0 and x.get("evidence_german", 0.0) >= 0.5


@dataclass(frozen=True)
class Gated:
    """`cross` for a cross-lingual turn, `base` for any other; each at its own threshold (shifted to 0.5)."""

    name: str
    base: Logistic
    cross: Logistic
    threshold: float = 0.5

    def probability(self, x: dict[str, float]) -> float:
        m = self.cross if cross_lingual(x) else self.base
        return m.probability(x) - m.threshold + 0.5


def gated_model(base: Logistic, data: dict[str, list[dict]], limit: int, skip: set[str]) -> Gated:
    """`base` plus a model fitted on the cross-lingual rows of every pairing's fit half (reported ones
    too); its threshold is the lowest at which no fitted out-of-scope pairing's fit-half not-known rate
    falls below `base`'s."""
    (answerable, out), (more_answerable, more_out) = pairings(skip), reported(skip)
    every = [p for p in answerable + out + more_answerable + more_out if "@" not in p[0]]
    rows = [r for qs, lib in every for r in data[f"{qs}->{lib}:fit:{limit}"] if cross_lingual(r["x"])]
    cross = model_for("cross-lingual", base.features, rows, [], 0.0, base.sentence_candidates)
    oos = [f"{qs}->{lib}:fit:{limit}" for qs, lib in out]
    floor = not_known_rates(base, data, oos)
    for t in sorted({round(cross.probability(r["x"]), 6) for r in rows}):
        candidate = Gated("gated", base, replace(cross, threshold=t))
        if all(a >= b - 1e-9 for a, b in zip(not_known_rates(candidate, data, oos), floor, strict=True)):
            return candidate
    return Gated("gated", base, replace(cross, threshold=1.0))


def not_known_rates(m: Logistic | Gated, data: dict[str, list[dict]], keys: list[str]) -> list[float]:
    return [float(np.mean([m.probability(r["x"]) < m.threshold for r in data[k]])) if data[k] else 0.0 for k in keys]


def select(data: dict[str, list[dict]], limit: int, skip: set[str], max_false_nk: float) -> tuple[str, ...]:
    """Greedy feature choice on the fit half: from the current list, add or drop the one feature that
    most raises (worst + mean) out-of-scope not-known rate at the threshold rule; stop when none
    raises it by 0.002."""
    answerable, out = pairings(skip)
    rows = [r for qs, lib in answerable + out for r in data[f"{qs}->{lib}:fit:{limit}"]]
    groups = [data[f"{qs}->{lib}:fit:{limit}"] for qs, lib in answerable]
    oos = [f"{qs}->{lib}:fit:{limit}" for qs, lib in out]

    def score(feats: tuple[str, ...]) -> float:
        rates = not_known_rates(model_for("m", feats, rows, groups, max_false_nk), data, oos)
        return (min(rates) + sum(rates) / len(rates)) / 2

    cur = FEATURES
    best = score(cur)
    print(f"select: start {best:.4f} {list(cur)}")
    while True:
        moves = [cur + (f,) for f in FEATURES + RECORDED if f not in cur]
        moves += [tuple(g for g in cur if g != f) for f in cur if len(cur) > 1]
        top = max(moves, key=score)
        if score(top) <= best + 0.002:
            return cur
        cur, best = top, score(top)
        print(f"select: {best:.4f} {list(cur)}")


def report(models: dict[str, Logistic | Gated], data: dict[str, list[dict]], limit: int, skip: set[str]) -> None:
    """The report half's table; the reported-only pairings last, left out of the mean and worst."""
    (answerable, out), (more_answerable, more_out) = pairings(skip), reported(skip)
    print("| questions → library | kind | n | " + " | ".join(f"not known ({k})" for k in models) + " |")
    worst = {k: [] for k in models}
    print("|---|---|---|" + "---|" * len(models))
    for qs, lib in answerable + out + more_answerable + more_out:
        rows = data[f"{qs}->{lib}:report:{limit}"]
        kind = "answerable" if (qs, lib) in answerable + more_answerable else "out of scope"
        if (qs, lib) in more_answerable + more_out:
            kind += ", reported only"
        cells = []
        for m in models.values():
            nk = np.mean([m.probability(r["x"]) < m.threshold for r in rows]) if rows else float("nan")
            cells.append(f"{nk:.3f}")
        for k, c in zip(models, cells, strict=True):
            if kind == "out of scope":  # the fitted pairings only
                worst[k].append(float(c))
        print(f"| {qs} → {lib} | {kind} | {len(rows)} | " + " | ".join(cells) + " |")
    print("| out of scope: mean / worst | | | " + " | ".join(
        f"{np.mean(v):.3f} / {min(v):.3f}" for v in worst.values()) + " |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=200, help="questions per pairing and half")
    ap.add_argument("--max-false-not-known", type=float, default=0.04)
    ap.add_argument("--write", action="store_true", help=f"write this embedder's model into {MODEL_FILE.name}")
    ap.add_argument("--write-lexical", action="store_true", help="with --write: also replace the lexical model")
    ap.add_argument("--work", default=None, help="index cache (default <cache>/hark/eval)")
    ap.add_argument("--select", action="store_true", help="choose the features greedily on the fit half (else FEATURES)")
    ap.add_argument("--long-text", choices=["window_max", "window_mean", "truncate"], default=None,
                    help="the embedder layout to fit for (default: config.yaml's embedder.long_text)")
    ap.add_argument("--sentence-candidates", type=int, default=2,
                    help="sentence_sim is the best cosine of this many sentences (the first by overlap and chunk rank)")
    ap.add_argument("--write-reference", action="store_true",
                    help="write this embedder's anchor points: other embedders are calibrated to its model")
    ap.add_argument("--text-model", default=None,
                    help="another sentence-transformers embedder (name or folder) than config.yaml's embedder.text_model")
    ap.add_argument("--without", default="", help="comma-separated features left out of the fit (an ablation)")
    ap.add_argument("--fit-reported", action="store_true",
                    help="fit on the reported-only pairings' fit half too (the threshold rule stays on the others)")
    ap.add_argument("--cross-lingual", action="store_true",
                    help="also report the model with a second one for an English question on German evidence")
    ap.add_argument("--skip", default="", help="comma-separated sets left out (e.g. a library not indexed yet)")
    args = ap.parse_args()
    from models.weights import cache_dir

    work = Path(args.work) if args.work else cache_dir() / "eval"
    work.mkdir(parents=True, exist_ok=True)
    skip = {s for s in args.skip.split(",") if s}
    k = args.sentence_candidates
    key = _config_key(args.long_text, k, args.text_model)
    data, embedder = collect(args.limit, work, work / f"answerability-features-{key}.json", skip, args.long_text, k,
                             args.text_model)
    identity = embedder.identity
    answerable, out = pairings(skip)
    fitted = answerable + out
    if args.fit_reported:  # a subset ("SET@SPLIT") is left out: its rows are in its set's
        more_answerable, more_out = reported(skip)
        fitted += [p for p in more_answerable + more_out if "@" not in p[0]]
    fit_rows = [r for qs, lib in fitted for r in data[f"{qs}->{lib}:fit:{args.limit}"]]
    groups = [data[f"{qs}->{lib}:fit:{args.limit}"] for qs, lib in answerable]
    feats = FEATURES
    if args.select:
        feats = select(data, args.limit, skip, args.max_false_not_known)
    feats = tuple(f for f in feats if f not in set(args.without.split(",")))
    shipped = {f"{k} (shipped)": Logistic.from_json(k, v)
               for k, v in json.loads(MODEL_FILE.read_text()).get("models", {}).items()} if MODEL_FILE.is_file() else {}
    models = {identity: model_for(identity, feats, fit_rows, groups, args.max_false_not_known, k),
              "lexical": model_for("lexical", LEXICAL, fit_rows, groups, args.max_false_not_known)}
    for name, m in models.items():
        print(f"{name}: threshold {m.threshold}; " + ", ".join(
            f"{f} {c:+.2f}" for f, c in zip(m.features, m.coef, strict=True)))
    experiments: dict[str, Logistic | Gated] = {}  # reported, never written
    if args.cross_lingual:
        g = gated_model(models[identity], data, args.limit, skip)
        print(f"cross-lingual: threshold {g.cross.threshold:.4f}; " + ", ".join(
            f"{f} {c:+.2f}" for f, c in zip(g.cross.features, g.cross.coef, strict=True)))
        experiments["+ cross-lingual"] = g
    loaded = Answerability.for_embedder(embedder).model
    as_loaded = {loaded.name: loaded} if isinstance(loaded, Calibrated) else {}
    report(models | experiments | shipped | as_loaded, data, args.limit, skip)
    if args.write or args.write_reference:
        raw = json.loads(MODEL_FILE.read_text()) if MODEL_FILE.is_file() else {}
        if args.write_reference:
            p = anchor_points_of(embedder)()
            raw["reference"] = {"embedder": mean_space(identity) or identity, "matched": p.matched,
                                "mismatched": p.mismatched}
            print(f"the reference points: {p}")
        if args.write:  # this embedder's model; the others (another layout, lexical) stay unless asked
            fresh = {k: m.to_json() for k, m in models.items() if k != "lexical" or args.write_lexical}
            raw |= {"fitted_by": "bench/fit_answerability.py", "limit_per_half": args.limit,
                    "models": raw.get("models", {}) | fresh}
        MODEL_FILE.write_text(json.dumps(raw, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {MODEL_FILE}")


if __name__ == "__main__":
    main()
