"""`python launch.py eval retrieval|intents`: run an evaluation, print its table, optionally write JSON."""

from __future__ import annotations

import json
from pathlib import Path

from knowledge.beir import load_beir
from knowledge.evaluate import METRICS, EvalReport, evaluate_dataset, limit_queries
from knowledge.open_library import open_embedder
from knowledge.settings import IngestSettings, RetrievalSettings, StoreSettings
from models.intent import IntentClassifier, IntentEvalResult, evaluate
from models.intent_data import read_csv
from models.runtime.errors import HarkError
from models.settings import EmbedderSettings, IntentSettings

_SHORT = {"rag_search": "rag", "web_search": "web", "greeting": "greet", "conversation_meta": "meta"}


def format_table(report: EvalReport) -> str:
    """One row per method, one column per metric."""
    head = f"{'method':<18}" + "".join(f"{m:>10}" for m in METRICS)
    lines = [head, "-" * len(head)]
    for name, scores in report.methods.items():
        lines.append(f"{name:<18}" + "".join(f"{scores[m]:>10.4f}" for m in METRICS))
    return "\n".join(lines)


def floor_line(report: EvalReport, margin: float = 0.01) -> str:
    """How the default compares with the better of BM25 and dense (the rule defaults are chosen by)."""
    m = report.methods
    if not {"bm25", "dense", "default"} <= set(m):
        return ""
    best = max(m["bm25"]["ndcg@10"], m["dense"]["ndcg@10"])
    gap = m["default"]["ndcg@10"] - best
    verdict = "meets" if gap >= -margin else "BELOW"
    return f"default − max(bm25, dense) = {gap:+.4f} nDCG@10 ({verdict} the rule: ≥ −{margin})"


def eval_retrieval_command(
    embedder_settings: EmbedderSettings,
    store_settings: StoreSettings,
    ingest: IngestSettings,
    retrieval: RetrievalSettings,
    dataset_dir: Path,
    methods: list[str] | None,
    json_out: str | None,
    *,
    limit: int | None = None,
    work_dir: Path | None = None,
) -> int:
    """`eval retrieval --dataset DIR [--methods LIST] [--json OUT] [--limit N]`; the index is cached
    in `work_dir` (default `<Hark cache>/eval`)."""
    from models.weights import cache_dir

    dataset = limit_queries(load_beir(dataset_dir), limit)
    embedder = open_embedder(embedder_settings)
    if embedder.is_fallback:
        print(f"note: {embedder.fallback_reason}; evaluating with {embedder.identity}")
    work = Path(work_dir) if work_dir else cache_dir() / "eval"
    report, _ = evaluate_dataset(dataset, embedder, store_settings, ingest, retrieval, work, methods)
    print(
        f"{report.dataset}: {report.queries} queries, {report.corpus} documents, {report.chunks} chunks, "
        f"embedder {report.embedder}, candidates {retrieval.candidates}"
    )
    print(format_table(report))
    floor = floor_line(report)
    if floor:
        print(floor)
    print("seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in report.seconds.items()))
    if json_out:
        Path(json_out).write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
        print(f"wrote {json_out}")
    return 0


def format_intent_report(result: IntentEvalResult, title: str = "", max_errors: int = 15) -> str:
    """Accuracy, macro-F1, F1 per label, the confusion matrix and the first misclassified rows."""
    names = [_SHORT.get(lab, lab) for lab in result.labels]
    lines = [title] if title else []
    n = sum(map(sum, result.confusion))
    lines.append(f"rows: {n}   accuracy: {result.accuracy:.4f}   macro-F1: {result.macro_f1:.4f}")
    lines.append("F1 per label: " + ", ".join(f"{lab} {f:.3f}" for lab, f in result.per_label_f1.items()))
    lines.append("confusion (rows = true, columns = predicted):")
    lines.append(f"{'':>8}" + "".join(f"{x:>8}" for x in names))
    for name, row in zip(names, result.confusion, strict=True):
        lines.append(f"{name:>8}" + "".join(f"{v:>8}" for v in row))
    if result.errors and max_errors:
        lines.append(f"misclassified ({len(result.errors)}, first {min(max_errors, len(result.errors))}):")
        lines += [f"  {true:>17} → {pred:<17} {text!r}" for text, true, pred in result.errors[:max_errors]]
    return "\n".join(lines)


def eval_intents_command(settings: IntentSettings, file: Path, json_out: str | None, base_dir: Path) -> int:
    """`eval intents --file CSV [--json OUT]`: accuracy, macro-F1 and the 4×4 confusion matrix."""
    examples = read_csv(Path(file))
    result = evaluate(IntentClassifier(settings, base_dir), examples)
    print(format_intent_report(result, f"intent classifier on {file}"))
    if json_out:
        out = Path(json_out)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(result.as_json(), indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise HarkError(f"could not write {out}: {exc}") from exc
        print(f"wrote {out}")
    return 0
