"""`eval grounding`: one dev set's questions against one dev set's library, through `ask`'s code.

The library's corpus is indexed by Hark's own Ingestor (cached, `knowledge.evaluate.index_dataset`);
each question runs `Retriever.retrieve` → `Answerer.assess` (the answerability decision) →
`Answerer.answer` (the configured chain; offline, the extractive answer). A question asked of its own
library is answerable; of another set's library it is out of scope. Reported: the not-known rate,
the cited-gold rate (the first cited chunk comes from a relevant document), how often a relevant chunk is
among the blocks the answer is made from (and the false not-known rate with and without one: the
decision's refusals and the search's misses) and, where the set has answer strings, how often the answer
holds one (`holds_gold`).
"""

from __future__ import annotations

import json
import logging
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.answer import Answerer
from assistant.answerability import Answerability, Signals
from assistant.speech_text import clean
from knowledge.beir import BeirDataset, doc_id_from_path, load_beir
from knowledge.sentences import split_sentences

log = logging.getLogger(__name__)


@dataclass
class Row:
    qid: str
    question: str
    answerable: bool  # the question was asked of its own library
    not_known: bool
    probability: float
    features: dict[str, float]
    text: str = ""
    cited_gold: bool | None = None
    found_gold: bool | None = None  # a relevant chunk is among the blocks the answer is made from
    gold_in_answer: bool | None = None
    ms: dict[str, float] = field(default_factory=dict)


def answers_of(dataset: BeirDataset) -> dict[str, list[str]]:
    """Gold answer strings per query id (sets that have them: XQuAD, NQ)."""
    out: dict[str, list[str]] = {}
    path = Path(dataset.path) / "queries.jsonl"
    for line in path.open(encoding="utf-8"):
        if line.strip():
            q = json.loads(line)
            if q.get("answers"):
                out[str(q["_id"])] = [str(a) for a in q["answers"]]
    return out


def holds_gold(text: str, answers: list[str]) -> bool:
    """Whether the answer holds a gold string, case aside, as written or as read out without the
    citation markers a voice skips ("… Sleeping with the Past [1]." holds "Sleeping with the
    Past."); runs of white space count as one space; numbers, accents and quotes are left as they are."""
    forms = (text.lower(), clean(text).lower())
    return any(" ".join(a.lower().split()) in f for a in answers for f in forms)


def holds_answers(library: BeirDataset, questions: BeirDataset) -> bool:
    """Whether the questions' judged documents are in the library (its own set, or a view of it)."""
    ids = {d.doc_id for d in library.corpus}
    judged = [q for q, docs in questions.qrels.items() if docs]
    return bool(judged) and sum(bool(set(questions.qrels[q]) & ids) for q in judged) > len(judged) / 2


def half(qids: list[str], which: str) -> list[str]:
    """'fit' / 'report': disjoint halves by a hash of the id; 'all': every id."""
    if which == "all":
        return qids
    want = 0 if which == "fit" else 1
    return [q for q in qids if zlib.crc32(q.encode()) % 2 == want]


def run_pairing(
    library: BeirDataset,
    questions: BeirDataset,
    retriever: Any,
    answerer: Answerer,
    *,
    which: str = "all",
    limit: int | None = None,
    answer: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> list[Row]:
    own = holds_answers(library, questions)
    canonical = library.canonical_ids()
    gold = answers_of(questions) if own else {}
    qids = half(list(questions.queries), which)[: limit or None]
    rows: list[Row] = []
    for i, qid in enumerate(qids):
        text = questions.queries[qid]
        t0 = time.perf_counter()
        retrieval = retriever.retrieve(text)
        t1 = time.perf_counter()
        decision = answerer.assess(text, retrieval.hits, retrieval.candidates,
                                   Signals(library_level=retrieval.library_level,
                                           vocabulary=retrieval.vocabulary))
        t2 = time.perf_counter()
        row = Row(qid, text, own, not decision.answerable, decision.probability, decision.features)
        if own:
            relevant = {canonical.get(d, d) for d in questions.qrels.get(qid, {})}
            found = (doc_id_from_path(h.source_path) for h in answerer.builder.blocks(retrieval.hits))
            row.found_gold = any(canonical.get(d, d) in relevant for d in found)
        if answer:
            result = answerer.answer(text, retrieval.hits, decision=decision)
            row.not_known, row.text = result.not_known, result.text
            if own and not result.not_known and result.cited:
                first = doc_id_from_path(result.cited[0].source_path)
                row.cited_gold = canonical.get(first, first) in relevant
            if own and qid in gold:
                row.gold_in_answer = not result.not_known and holds_gold(result.text, gold[qid])
        row.ms = {"retrieve": (t1 - t0) * 1e3, "assess": (t2 - t1) * 1e3, "answer": (time.perf_counter() - t2) * 1e3}
        rows.append(row)
        if progress is not None:
            progress(i + 1, len(qids))
    return rows


def summarise(rows: list[Row]) -> dict[str, Any]:
    def rate(values: list[bool]) -> float | None:
        return round(sum(values) / len(values), 4) if values else None

    own = [r for r in rows if r.answerable]
    other = [r for r in rows if not r.answerable]
    times = sorted(r.ms.get("assess", 0) + r.ms.get("answer", 0) for r in rows)
    lengths = [len(split_sentences(r.text)) for r in own if not r.not_known and r.text]
    return {
        "questions": len(rows),
        "out_of_scope_not_known": rate([r.not_known for r in other]),
        "answerable_false_not_known": rate([r.not_known for r in own]),
        "cited_gold": rate([bool(r.cited_gold) for r in own if not r.not_known]),
        "found_gold": rate([bool(r.found_gold) for r in own]),
        # false not-known split: the decision's refusals of found evidence, and the search's misses
        "false_not_known_found": rate([r.not_known for r in own if r.found_gold]),
        "false_not_known_missed": rate([r.not_known for r in own if not r.found_gold]),
        "gold_in_answer": rate([bool(r.gold_in_answer) for r in own if r.gold_in_answer is not None]),
        "assess_answer_ms_p50": round(times[len(times) // 2], 1) if times else None,
        "sentences_per_answer": round(sum(lengths) / len(lengths), 2) if lengths else None,
        "at_most_two_sentences": rate([n <= 2 for n in lengths]),
    }


def build(
    cfg: Any, library_dir: Path, work_dir: Path, sentence_candidates: int | None = None
) -> tuple[BeirDataset, Any, Answerer]:
    """The library indexed, a Retriever on it and an Answerer as `ask` builds them (with
    `sentence_candidates`, its `sentence_sim` measured over that many sentences, whatever the model)."""
    from assistant.components import load_judge
    from knowledge.evaluate import index_dataset
    from knowledge.retrieve import Retriever
    from models.embedder import load_embedder

    library = load_beir(library_dir)
    embedder = load_embedder(cfg.embedder)
    store = index_dataset(library, embedder, cfg.store, cfg.ingest, work_dir)
    retriever = Retriever(embedder, store, cfg.retrieval)
    answerer = Answerer(
        cfg.llm,
        cfg.prompts,
        embed=embedder.embed_documents,
        answerability=Answerability.for_embedder(embedder),
        judge=load_judge(cfg),
        judge_weight=cfg.judge.weight,
        judge_candidates=cfg.judge.candidates,
    )
    if sentence_candidates is not None:
        answerer.extractive.similarity_candidates = sentence_candidates
    return library, retriever, answerer


def eval_grounding_command(
    cfg: Any,
    library_dir: Path,
    questions_dir: Path,
    json_out: str | None,
    *,
    which: str = "all",
    limit: int | None = None,
    work_dir: Path | None = None,
) -> int:
    """`python launch.py eval grounding --library DIR --questions DIR [--json OUT]`."""
    from models.weights import cache_dir

    work = Path(work_dir) if work_dir else cache_dir() / "eval"
    library, retriever, answerer = build(cfg, Path(library_dir), work)
    questions = load_beir(Path(questions_dir))
    rows = run_pairing(library, questions, retriever, answerer, which=which, limit=limit)
    s = summarise(rows)
    kind = "answerable (own library)" if rows and rows[0].answerable else "out of scope (another library)"
    print(f"{questions.name} questions → {library.name} library: {s['questions']} questions, {kind}")
    if rows and rows[0].answerable:
        print(f"  false not-known:  {s['answerable_false_not_known']}")
        print(f"  cited gold:       {s['cited_gold']}")
        print(f"  gold in evidence: {s['found_gold']} (false not-known: {s['false_not_known_found']} with it, "
              f"{s['false_not_known_missed']} without)")
        if s["gold_in_answer"] is not None:
            print(f"  gold in answer:   {s['gold_in_answer']}")
        print(f"  sentences per answer: {s['sentences_per_answer']} (≤ 2: {s['at_most_two_sentences']})")
    else:
        print(f"  not known:        {s['out_of_scope_not_known']}")
    print(f"  assess + answer p50 ms: {s['assess_answer_ms_p50']}")
    if json_out:
        out = {"library": library.name, "questions": questions.name, "summary": s,
               "rows": [r.__dict__ for r in rows]}
        Path(json_out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {json_out}")
    return 0
