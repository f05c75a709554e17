"""MODEL_CARD.md for the intent adapter, rendered from a training report (models/intent_train.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from models.intent_train import RunLog, TrainReport

_SHORT = {"rag_search": "rag", "web_search": "web", "greeting": "greet", "conversation_meta": "meta"}


def _confusion(m: dict[str, Any]) -> list[str]:
    names = [_SHORT.get(lab, lab) for lab in m["labels"]]
    rows = ["| true \\ predicted | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    rows += [
        f"| {n} | " + " | ".join(str(v) for v in r) + " |" for n, r in zip(names, m["confusion"], strict=True)
    ]
    return rows


def _curve(run: RunLog) -> list[str]:
    rows = [
        f"Learning rate {run.learning_rate:g} ({run.seconds:.0f} s; best epoch by validation macro-F1: "
        f"{run.best_epoch}):",
        "",
        "| epoch | train loss | val accuracy | val macro-F1 | test macro-F1 | external macro-F1 |",
        "|---|---|---|---|---|---|",
    ]
    rows += [
        f"| {e.epoch} | {e.train_loss:.4f} | {e.val_accuracy:.4f} | {e.val_macro_f1:.4f} | "
        f"{e.test_macro_f1:.4f} | {e.external_macro_f1:.4f} |"
        for e in run.curve
    ]
    return rows + [""]


def render(r: TrainReport) -> str:
    s = r.settings
    kept = r.runs[0]
    out = [
        "# Hark intent classifier: LoRA adapter on all-MiniLM-L6-v2"
        if "MiniLM" in s["base_model"]
        else f"# Hark intent classifier: LoRA adapter on {s['base_model']}",
        "",
        "Four labels: `rag_search` (questions about the user's documents, and explanations of a topic a",
        "library may hold: how does photosynthesis work), `web_search` (live or current facts: weather, news,",
        "prices, scores, opening hours; short factual lookups about the world: a name, a date, a place, a",
        "number, such as the capital of Peru or who painted the Night Watch; or an explicit request to search",
        "the web), `greeting` (hello, thanks, goodbye, small talk) and `conversation_meta` (questions about",
        "this conversation or the assistant: what did I ask, repeat that, summarise our chat, who are you).",
        "Used by Hark's router, which also asks the library: a `web_search` turn is answered from the",
        "documents when they answer it, and so is a `greeting` or `conversation_meta` turn whose words are not",
        "a greeting or about the conversation; below its confidence threshold a turn goes to `rag_search`.",
        "",
        "Written by `python launch.py train-intents` (models/intent_train.py); every number below comes",
        "from that run and is also in `training_log.json`.",
        "",
        "## Data",
        f"- Synthetic (models/intent_data.py + intent_templates.yaml, seed {s['seed']}): {s['dataset_rows']} rows,",
        "  equally many per label, from templates and paraphrases over six document domains (regulations,",
        "  manuals, reports, course handbooks, contracts/HR, encyclopedic topics) plus live-fact, greeting and",
        "  conversation templates, with casual spellings, keyboard typos, filler prefixes, optional",
        "  punctuation and, at one rate for every label, the slips of fast typing and speech recognition (a",
        "  stray symbol, words joined or split, dropped vowels). Split 80/20 stratified (seed 42): "
        f"{r.n_train + r.n_val} train / {r.n_test} test; {r.n_val} of the train rows",
        f"  ({s['validation_fraction']:.0%}, stratified) are held out as the validation set that picks the best epoch.",
        f"- External (`{s['external_file']}`): {r.n_external} hand-written real-world-style queries with typos,",
        "  at least 50 per label, sharing no template with the generator; its noisy world questions (stray",
        "  symbols, joined or split words, dropped letters) were written for this file, not taken from any",
        "  public intent set. It is never used for training or model selection. Rows whose exact text also occurs in the generated data",
        f"  ({len(r.external_overlap)}): {', '.join(repr(t) for t in r.external_overlap) or 'none'}.",
        "",
        "## Hyperparameters",
        "| setting | value |",
        "|---|---|",
        f"| base model | `{s['base_model']}` |",
        f"| LoRA | rank {s['lora_r']}, alpha {s['lora_alpha']}, dropout {s['lora_dropout']} on attention "
        f"{' + '.join(s['target_modules'])} |",
        "| trained | LoRA matrices + classification head (`modules_to_save`); every other weight frozen |",
        f"| trainable parameters | {r.trainable_params:,} of {r.total_params:,} "
        f"({100 * r.trainable_params / r.total_params:.2f}%) |",
        f"| learning rate | {kept.learning_rate:g}, linear decay to 0, no warm-up, AdamW |",
        f"| epochs / batch / max length | {s['epochs']} / {s['batch_size']} / {s['max_length']} tokens, dynamic padding |",
        "| checkpoint kept | best epoch by validation macro-F1 |",
        f"| machine | {r.machine} |",
        "",
        "## Training curves",
        "",
    ]
    for run in r.runs:
        out += _curve(run)
    if len(r.runs) > 1:
        out += [
            "The first table is the adapter shipped here; the others are the same recipe, same data and seed,",
            "at another learning rate (curves only, not saved).",
            "",
        ]
    t, e, u = r.test, r.external, r.external_unseen
    out += [
        "## Metrics of the shipped adapter",
        "| set | rows | accuracy | macro-F1 |",
        "|---|---|---|---|",
        f"| synthetic test split | {r.n_test} | {t['accuracy']:.4f} | {t['macro_f1']:.4f} |",
        f"| external file | {r.n_external} | {e['accuracy']:.4f} | {e['macro_f1']:.4f} |",
        f"| external without exact overlaps | {r.n_external - len(r.external_overlap)} | {u['accuracy']:.4f} | "
        f"{u['macro_f1']:.4f} |",
        "",
        "F1 per label, external: " + ", ".join(f"{k} {v:.3f}" for k, v in e["per_label_f1"].items()),
        "",
        "Confusion on the external file:",
        "",
        *_confusion(e),
        "",
        "Confusion on the synthetic test split:",
        "",
        *_confusion(t),
        "",
        f"Misclassified external queries ({len(e['errors'])}):",
        "",
        *[f"- `{text}`: {true} → {pred}" for text, true, pred in e["errors"]],
        "",
        "## Inference latency",
        f"One query at a time, model loaded once, adapter merged into the base weights ({r.machine}): "
        f"p50 {r.latency_ms['p50']:.1f} ms, p90 {r.latency_ms['p90']:.1f} ms wall-clock over "
        f"{int(r.latency_ms['n'])} calls"
        + (
            f"; p50 CPU time {r.latency_ms['cpu_p50']:.1f} ms (the wall time of an idle core), load average "
            f"{r.latency_ms['load_average']:.1f} during the measurement"
            if "cpu_p50" in r.latency_ms
            else ""
        )
        + ". `python bench/intent.py` measures it on its own (docs/results.md).",
        "",
        "## Limitations",
        "- English only; the training data is synthetic and the external file was written by the same team,",
        "  so real traffic will contain phrasings neither covers.",
        "- The line between a world lookup (`web_search`: who painted the Night Watch) and an explanation a",
        "  library may hold (`rag_search`: how does photosynthesis work) is a judgement; the router asks the",
        "  library for every `web_search` that does not ask for the web itself, so a library that holds the",
        '  answer still gives it. Questions that mix both ("is the rent in my lease above the current',
        '  average?") have no single right label.',
        "- Confidence is a softmax score, not a calibrated probability.",
        "",
        "## Reproduce",
        "```",
        "python launch.py train-intents",
        f"python launch.py eval intents --file {s['external_file']}",
        "python bench/intent.py",
        "```",
    ]
    return "\n".join(out) + "\n"


def write_model_card(report: TrainReport, path: Path) -> None:
    Path(path).write_text(render(report), encoding="utf-8")
