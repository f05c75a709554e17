"""`python launch.py eval retrieval|intents`: run an evaluation, print its table, optionally write JSON."""

from __future__ import annotations

import json
from pathlib import Path

from knowledge.beir import load_beir
from knowledge.evaluate import (
    METRICS,
    SUMMARY_METHODS,
    EvalReport,
    evaluate_dataset,
    limit_queries,
    weighted_mean,
)
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


def summary_table(reports: list[EvalReport], half: str, margin: float = 0.01) -> str:
    """nDCG@10 per set × {BM25, dense, old default, default, RRF}, the default's margin over the floor
    max(BM25, dense) − margin, and the means (plain, and with the XQuAD views as one set)."""
    names = [n for n in SUMMARY_METHODS if all(n in r.methods for r in reports)]
    head = f"{'set':<16}{'queries':>8}" + "".join(f"{n:>13}" for n in names) + f"{'floor':>9}{'default−floor':>15}"
    lines = [f"nDCG@10, {half} half", head, "-" * len(head)]
    per_method: dict[str, dict[str, float]] = {n: {} for n in names}
    for r in reports:
        vals = {n: r.methods[n]["ndcg@10"] for n in names}
        for n in names:
            per_method[n][r.dataset] = vals[n]
        row = f"{r.dataset:<16}{r.queries:>8}" + "".join(f"{vals[n]:>13.4f}" for n in names)
        if {"bm25", "dense", "default"} <= set(vals):
            floor = max(vals["bm25"], vals["dense"]) - margin
            row += f"{floor:>9.4f}{vals['default'] - floor:>+15.4f}"
        lines.append(row)
    if len(reports) > 1:
        lines.append("-" * len(head))
        plain = {n: sum(v.values()) / len(v) for n, v in per_method.items()}
        lines.append(f"{'mean':<16}{'':>8}" + "".join(f"{plain[n]:>13.4f}" for n in names))
        lines.append(f"{'mean, xquad=1':<16}{'':>8}" + "".join(f"{weighted_mean(per_method[n]):>13.4f}" for n in names))
    return "\n".join(lines)


def eval_retrieval_command(
    embedder_settings: EmbedderSettings,
    store_settings: StoreSettings,
    ingest: IngestSettings,
    retrieval: RetrievalSettings,
    dataset_dirs: Path | list[Path],
    methods: list[str] | None,
    json_out: str | None,
    *,
    limit: int | None = None,
    work_dir: Path | None = None,
    half: str = "all",
) -> int:
    """`eval retrieval --dataset DIR [--dataset DIR …] [--half all|select|report] [--methods LIST]
    [--json OUT] [--limit N]`: each set's metrics table, then nDCG@10 of the sets side by side. The
    index is cached in `work_dir` (default `<Hark cache>/eval`)."""
    from models.weights import cache_dir

    dirs = [dataset_dirs] if isinstance(dataset_dirs, Path | str) else list(dataset_dirs)
    embedder = open_embedder(embedder_settings)
    if embedder.is_fallback:
        print(f"note: {embedder.fallback_reason}; evaluating with {embedder.identity}")
    work = Path(work_dir) if work_dir else cache_dir() / "eval"
    reports = []
    for d in dirs:
        dataset = limit_queries(load_beir(Path(d)), limit)
        report, _ = evaluate_dataset(dataset, embedder, store_settings, ingest, retrieval, work, methods, half)
        reports.append(report)
        print(
            f"{report.dataset}: {report.queries} queries ({half} half), {report.corpus} documents, "
            f"{report.chunks} chunks, embedder {report.embedder}, candidates {retrieval.candidates}"
        )
        print(format_table(report))
        floor = floor_line(report)
        if floor:
            print(floor)
        print("seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in report.seconds.items()) + "\n", flush=True)
    print(summary_table(reports, half))
    if json_out:
        body = reports[0].to_json() if len(reports) == 1 else {"sets": [r.to_json() for r in reports]}
        Path(json_out).write_text(json.dumps({**body, "half": half}, indent=2) + "\n", encoding="utf-8")
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
