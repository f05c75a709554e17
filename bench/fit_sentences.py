"""Fit the extractive answer's sentence weights (`assistant/llm/sentence_rank.py`) on the select halves.

    python -m bench.fit_sentences --pdfs DIR [--eval DIR] [--limit 300] [--out assistant/llm/sentence_weights.json]

For each question of the select (fit) half of the manuals (English, answerable) and of nq_oracle,
xquad_en and xquad_de, the question is retrieved and ranked as `ask` does; every candidate sentence's
features are recorded, and a sentence is right when it holds the answer. A conditional logit (the
sentences of one question compete, softmax) is fitted by L-BFGS with an L2 penalty, each set weighing
the same. Printed: the share of questions whose first sentence is right, per set, with the hand-set
weights, the fitted ones, and the fitted ones in 2-fold cross-validation within the select half
(what to expect on the report half). `--out` writes the weights; the report half is never read.
Write them only when the 2-fold column beats the hand-set one.
"""

from __future__ import annotations

import argparse
import json
import logging
import pickle
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from assistant.llm.extractive import ExtractiveAnswerer
from assistant.llm.sentence_rank import FEATURES, HAND, WEIGHTS_FILE

PASSAGE_SETS = ("nq_oracle", "xquad_en", "xquad_de")
L2 = 0.01


@dataclass
class Case:
    qid: str
    x: np.ndarray  # (n, features)
    right: np.ndarray  # (n,) bool


class Recorder:
    """Keeps the features of the first ranking after `start` (a turn may rank twice)."""

    def __init__(self) -> None:
        self.x: np.ndarray | None = None
        self.texts: list[str] = []
        orig = ExtractiveAnswerer.features

        def features(*args, **kwargs):  # noqa: ANN002, ANN003 - the same signature as the original
            x = orig(*args, **kwargs)
            if self.x is None:
                self.x, self.texts = x, [s.text for s in args[0]]
            return x

        ExtractiveAnswerer.features = staticmethod(features)  # type: ignore[method-assign]

    def start(self) -> None:
        self.x, self.texts = None, []

    def case(self, qid: str, right: Callable[[str], bool]) -> Case | None:
        if self.x is None or not len(self.texts):
            return None
        labels = np.array([right(t) for t in self.texts])
        return Case(qid, self.x, labels) if labels.any() else None


def manuals_cases(cfg, pdfs: Path, questions: Path, rec: Recorder) -> list[Case]:
    from assistant.answers_eval import build_assistant, holds, in_half
    from models.weights import cache_dir

    a = build_assistant(cfg, pdfs, cache_dir() / "eval" / "answers")
    qs = [json.loads(line) for line in questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    for q in qs:
        if q["kind"] != "answerable" or not in_half(q["id"], "select") or q.get("doc_language", "en") != "en":
            continue
        rec.start()
        for _ in a.respond(a.new_session(), q["question"]):
            pass
        case = rec.case(q["id"], lambda t, q=q: holds(t, q["answers"]))
        if case is not None:
            out.append(case)
    return out


def passage_cases(cfg, folder: Path, limit: int, rec: Recorder) -> list[Case]:
    from assistant.answerability import Signals
    from assistant.grounding_eval import answers_of, build, half, holds_gold
    from knowledge.beir import load_beir
    from models.weights import cache_dir

    library, retriever, answerer = build(cfg, folder, cache_dir() / "eval")
    questions = load_beir(folder)
    gold = answers_of(questions)
    out = []
    for qid in [q for q in half(list(questions.queries), "fit") if q in gold][:limit]:
        text = questions.queries[qid]
        r = retriever.retrieve(text)
        rec.start()
        answerer.assess(text, r.hits, r.candidates, Signals(library_level=r.library_level, vocabulary=r.vocabulary))
        case = rec.case(qid, lambda t, qid=qid: holds_gold(t, gold[qid]))
        if case is not None:
            out.append(case)
    return out


def loss(w: np.ndarray, sets: list[list[Case]], prior: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean over sets of the mean negative log-likelihood of the right sentences, + L2 toward `prior`."""
    total, grad = 0.0, np.zeros_like(w)
    for cases in sets:
        for c in cases:
            s = c.x @ w
            s -= s.max()
            p = np.exp(s)
            p /= p.sum()
            pr = p[c.right].sum()
            total -= np.log(pr + 1e-12) / len(cases) / len(sets)
            q = np.where(c.right, p, 0.0) / (pr + 1e-12)  # the posterior over right sentences
            grad -= (q - p) @ c.x / len(cases) / len(sets)
    d = w - prior
    return total + L2 * float(d @ d), grad + 2 * L2 * d


def fit(sets: list[list[Case]], start: np.ndarray) -> np.ndarray:
    from scipy.optimize import minimize

    res = minimize(loss, start, args=(sets, start), jac=True, method="L-BFGS-B")
    return res.x


def top1(cases: list[Case], w: np.ndarray) -> float:
    return float(np.mean([c.right[int(np.argmax(c.x @ w))] for c in cases])) if cases else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pdfs", required=True, type=Path)
    ap.add_argument("--eval", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data" / "eval")
    ap.add_argument("--limit", type=int, default=300, help="questions per passage set")
    ap.add_argument("--features", default=",".join(FEATURES), help="the features to fit (the others weigh 0)")
    ap.add_argument("--cases", type=Path, default=None, help="keep the recorded features here (a later run reads them)")
    ap.add_argument("--out", type=Path, default=None, help=f"write the weights (e.g. {WEIGHTS_FILE})")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    from assistant.config import load_config

    cfg = load_config(None)
    if args.cases and args.cases.exists():
        with args.cases.open("rb") as f:
            sets = pickle.load(f)
    else:
        rec = Recorder()
        sets = {"manuals": manuals_cases(cfg, args.pdfs, args.eval / "manuals" / "questions.jsonl", rec)}
        for name in PASSAGE_SETS:
            sets[name] = passage_cases(cfg, args.eval / name, args.limit, rec)
        if args.cases:
            with args.cases.open("wb") as f:
                pickle.dump(sets, f)
    use = [f in args.features.split(",") for f in FEATURES]
    mask = np.array(use, dtype=np.float64)
    hand = np.array([HAND.get(f, 0.0) for f in FEATURES])
    groups = list(sets.values())
    w = fit([[Case(c.qid, c.x * mask, c.right) for c in g] for g in groups], hand * mask)
    # 2-fold cross-validation within the select half (by a hash of the question id)
    fold = lambda c: zlib.crc32(c.qid.encode()) % 4 < 2  # noqa: E731
    cv = {name: [] for name in sets}
    for k in (True, False):
        train = [[Case(c.qid, c.x * mask, c.right) for c in g if fold(c) != k] for g in groups]
        wk = fit(train, hand * mask)
        for name, g in sets.items():
            cv[name] += [c.right[int(np.argmax((c.x * mask) @ wk))] for c in g if fold(c) == k]
    print(f"{'set':<10} {'n':>4} {'hand':>6} {'fitted':>7} {'2-fold':>7}")
    for name, g in sets.items():
        print(f"{name:<10} {len(g):>4} {top1(g, hand):>6.3f} {top1(g, w):>7.3f} {np.mean(cv[name]):>7.3f}")
    print("mean       " + " " * 4 + f" {np.mean([top1(g, hand) for g in groups]):>6.3f} "
          f"{np.mean([top1(g, w) for g in groups]):>7.3f} {np.mean([np.mean(v) for v in cv.values()]):>7.3f}")
    weights = {f: round(float(v), 4) for f, v, u in zip(FEATURES, w, use, strict=True) if u}
    print(json.dumps(weights))
    if args.out:
        args.out.write_text(json.dumps({
            "weights": weights,
            "fitted_on": {name: len(g) for name, g in sets.items()},
            "command": "python -m bench.fit_sentences --pdfs DIR --out assistant/llm/sentence_weights.json",
        }, indent=1) + "\n", encoding="utf-8")  # fmt: skip


if __name__ == "__main__":
    main()
