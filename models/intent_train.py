"""Training the intent adapter (`python launch.py train-intents`): regenerate the dataset, LoRA
fine-tune, write the adapter.

The recipe (all values from `IntentSettings`): peft LoRA rank 8, alpha 16, dropout 0.05 on the
attention query and key projections; every other base weight frozen; the classification head
trained in full (`modules_to_save`); AdamW with a linear decay of the learning rate, 3 epochs,
evaluation after each epoch on a validation split carved from the training rows (stratified),
and the best epoch by validation macro-F1 kept (transformers `Trainer`). The synthetic test split
and the hand-written external file are only measured, never used to choose anything.

Output in `adapter_dir`: `adapter_config.json` + `adapter_model.safetensors` (LoRA weights and
the head), `label_map.json`, `training_log.json` and `MODEL_CARD.md` (models/intent_card.py).
"""

from __future__ import annotations

import json
import logging
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from models.intent import (
    LABEL_MAP_FILE,
    IntentClassifier,
    IntentEvalResult,
    configured_adapter_dir,
    evaluate,
    load_base,
    target_modules_for,
)
from models.intent_data import LABELS, IntentExample, build_dataset, read_csv, split
from models.settings import IntentSettings

log = logging.getLogger(__name__)


@dataclass
class EpochLog:
    epoch: int
    train_loss: float
    val_macro_f1: float
    val_accuracy: float
    test_macro_f1: float
    external_macro_f1: float


@dataclass
class RunLog:
    learning_rate: float
    curve: list[EpochLog]
    best_epoch: int
    seconds: float


@dataclass
class TrainReport:
    settings: dict[str, Any]
    n_train: int
    n_val: int
    n_test: int
    n_external: int
    trainable_params: int
    total_params: int
    runs: list[RunLog]  # the kept run first, then comparison runs
    test: dict[str, Any] = field(default_factory=dict)
    external: dict[str, Any] = field(default_factory=dict)
    external_unseen: dict[str, Any] = field(default_factory=dict)  # without the overlap rows
    latency_ms: dict[str, float] = field(default_factory=dict)
    machine: str = ""
    # external rows whose text (case-insensitive) also occurs in the generated data
    external_overlap: list[str] = field(default_factory=list)


class _Rows:
    """A torch-style dataset of tokenized rows (dynamic padding happens in the collator)."""

    def __init__(self, examples: list[IntentExample], tokenizer: Any, max_length: int) -> None:
        enc = tokenizer([e.text for e in examples], truncation=True, max_length=max_length)
        label_id = {lab: i for i, lab in enumerate(LABELS)}
        self.items = [
            {**{k: enc[k][i] for k in enc.keys()}, "labels": label_id[e.label]}
            for i, e in enumerate(examples)
        ]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return self.items[i]


def _metrics(pred: Any) -> dict[str, float]:
    from sklearn.metrics import accuracy_score, f1_score

    y_pred = pred.predictions.argmax(-1)
    return {
        "accuracy": float(accuracy_score(pred.label_ids, y_pred)),
        "macro_f1": float(f1_score(pred.label_ids, y_pred, average="macro", labels=list(range(len(LABELS))))),
    }


def build_lora_model(settings: IntentSettings) -> tuple[Any, Any]:
    """(tokenizer, peft model): LoRA on the attention roles, the head trainable, the rest frozen."""
    from peft import LoraConfig, TaskType, get_peft_model

    tokenizer, base = load_base(settings, LABELS)
    config = LoraConfig(
        task_type=TaskType.SEQ_CLS,
        r=settings.lora_r,
        lora_alpha=settings.lora_alpha,
        lora_dropout=settings.lora_dropout,
        target_modules=target_modules_for(base.config.model_type, settings.target_modules),
        modules_to_save=["classifier"],
    )
    return tokenizer, get_peft_model(base, config)


def _run(
    settings: IntentSettings,
    learning_rate: float,
    data: dict[str, list[IntentExample]],
    save_to: Path | None,
) -> tuple[RunLog, int, int]:
    """One training run; with `save_to`, the best epoch's adapter is written there."""
    from transformers import DataCollatorWithPadding, Trainer, TrainingArguments, set_seed

    set_seed(settings.seed)
    tokenizer, model = build_lora_model(settings)
    trainable, total = model.get_nb_trainable_parameters()
    sets = {name: _Rows(rows, tokenizer, settings.max_length) for name, rows in data.items()}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hark-intent-") as tmp:
        args = TrainingArguments(
            output_dir=tmp,
            learning_rate=learning_rate,
            lr_scheduler_type="linear",
            num_train_epochs=settings.epochs,
            per_device_train_batch_size=settings.batch_size,
            per_device_eval_batch_size=64,
            eval_strategy="epoch",
            save_strategy="epoch",
            logging_strategy="epoch",
            load_best_model_at_end=True,
            metric_for_best_model="val_macro_f1",
            greater_is_better=True,
            save_total_limit=1,
            seed=settings.seed,
            use_cpu=True,
            report_to="none",
            disable_tqdm=True,
        )
        trainer = Trainer(
            model=model,
            args=args,
            train_dataset=sets["train"],
            eval_dataset={"val": sets["val"], "test": sets["test"], "external": sets["external"]},
            data_collator=DataCollatorWithPadding(tokenizer),
            compute_metrics=_metrics,
        )
        trainer.train()
        history = trainer.state.log_history
        if save_to is not None:
            save_to.mkdir(parents=True, exist_ok=True)
            trainer.model.save_pretrained(str(save_to))
            (save_to / "README.md").unlink(missing_ok=True)  # peft's template; MODEL_CARD.md is ours
    seconds = time.perf_counter() - started
    curve = []
    for epoch in range(1, settings.epochs + 1):
        at = [h for h in history if round(h.get("epoch", 0)) == epoch]
        merged: dict[str, float] = {}
        for h in at:
            merged.update(h)
        curve.append(
            EpochLog(
                epoch=epoch,
                train_loss=float(merged.get("loss", float("nan"))),
                val_macro_f1=float(merged["eval_val_macro_f1"]),
                val_accuracy=float(merged["eval_val_accuracy"]),
                test_macro_f1=float(merged["eval_test_macro_f1"]),
                external_macro_f1=float(merged["eval_external_macro_f1"]),
            )
        )
    best = max(curve, key=lambda e: (e.val_macro_f1, -e.epoch)).epoch
    log.info("lr %g: best epoch %d of %d in %.0f s", learning_rate, best, settings.epochs, seconds)
    return RunLog(learning_rate, curve, best, seconds), trainable, total


def _fix_adapter_config(adapter_dir: Path, settings: IntentSettings) -> None:
    """Record the portable base name (not this machine's site-packages path) and the label map."""
    cfg_file = adapter_dir / "adapter_config.json"
    cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
    cfg["base_model_name_or_path"] = settings.base_model
    cfg_file.write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    meta = {"labels": list(LABELS), "base_model": settings.base_model, "max_length": settings.max_length}
    (adapter_dir / LABEL_MAP_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


def _latency(classifier: IntentClassifier, texts: list[str], repeats: int = 3) -> dict[str, float]:
    """Wall-clock and CPU milliseconds per single-query call (CPU time = what an idle core takes)."""
    for t in texts[:10]:
        classifier.predict(t)
    wall, cpu = [], []
    for _ in range(repeats):
        for t in texts:
            w0, c0 = time.perf_counter(), time.process_time()
            classifier.predict(t)
            wall.append((time.perf_counter() - w0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
    wall.sort()
    return {
        "p50": statistics.median(wall),
        "p90": wall[int(0.9 * (len(wall) - 1))],
        "cpu_p50": statistics.median(cpu),
        "n": float(len(wall)),
        "load_average": os.getloadavg()[0],
    }


def train(
    settings: IntentSettings,
    base_dir: Path,
    latency_repeats: int = 3,
    on_evaluated: Callable[[str, IntentEvalResult], None] | None = None,
) -> TrainReport:
    """Train, evaluate and write the adapter, its training log and model card. `on_evaluated(title,
    result)` sees the test-split and external-file evaluations as soon as they are known."""
    import torch

    from models.intent_card import write_model_card

    torch.set_num_threads(settings.train_threads)
    base_dir = Path(base_dir)
    files = build_dataset(settings.dataset_rows, settings.seed, base_dir / settings.data_dir)
    train_rows, val_rows = split(read_csv(files.train), settings.validation_fraction, settings.seed)
    external = read_csv(base_dir / settings.external_file)
    data = {"train": train_rows, "val": val_rows, "test": read_csv(files.test), "external": external}
    generated = {e.text.lower() for rows in (train_rows, val_rows, data["test"]) for e in rows}
    overlap = sorted({e.text for e in external if e.text.lower() in generated})
    adapter_dir = configured_adapter_dir(settings, base_dir)

    kept, trainable, total = _run(settings, settings.learning_rate, data, save_to=adapter_dir)
    _fix_adapter_config(adapter_dir, settings)
    runs = [kept]
    for lr in settings.compare_learning_rates:
        if lr != settings.learning_rate:
            runs.append(_run(settings, lr, data, save_to=None)[0])

    classifier = IntentClassifier(settings, base_dir)  # the saved adapter, loaded as users load it
    test = evaluate(classifier, data["test"])
    ext = evaluate(classifier, external)
    unseen = evaluate(classifier, [e for e in external if e.text not in overlap])
    if on_evaluated is not None:
        on_evaluated("synthetic test split", test)
        on_evaluated(f"external file {settings.external_file}", ext)
    report = TrainReport(
        settings=settings.model_dump(),
        n_train=len(train_rows),
        n_val=len(val_rows),
        n_test=len(data["test"]),
        n_external=len(external),
        trainable_params=int(trainable),
        total_params=int(total),
        runs=runs,
        test={**test.as_json(), "per_label_f1": test.per_label_f1},
        external={**ext.as_json(), "per_label_f1": ext.per_label_f1, "errors": ext.errors},
        external_unseen=unseen.as_json(),
        latency_ms=_latency(classifier, [e.text for e in external], latency_repeats),
        machine=f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch threads "
        f"{torch.get_num_threads()}, inference runtime {classifier.runtime}",
        external_overlap=overlap,
    )
    (adapter_dir / "training_log.json").write_text(
        json.dumps(asdict(report), indent=2) + "\n", encoding="utf-8"
    )
    write_model_card(report, adapter_dir / "MODEL_CARD.md")
    return report
