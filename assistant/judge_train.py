"""Trains the sentence judge (`python launch.py train-judge --data DIR`).

Data: BEIR folders whose queries carry answer strings (`answers`; nq_oracle and xquad_en by
default). Each question of a folder's select half (even positions, as every Hark default is chosen)
gives one group: the sentences of its judged passage, a sentence labelled right when it holds an
answer string (NFKC, case-insensitive), plus up to three sentences of another passage on the same
title (another of the article's paragraphs: close in topic, no answer). Groups where no sentence
or every sentence holds the answer teach nothing and are left out.

Training: LoRA on the base encoder's linear layers and a fresh one-logit head, one pass over the
groups in a seeded order, a listwise loss (−log of the softmax mass on the right sentences),
`accumulate` groups per optimiser step, a linearly falling learning rate. Held out: the report
halves, where the judge's best sentence is compared with the best by shared content words.
"""

from __future__ import annotations

import json
import logging
import random
import time
import unicodedata
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from assistant.llm.words import content_words
from knowledge.beir import load_beir
from knowledge.evaluate import half_of
from knowledge.sentences import split_sentences
from models.runtime.errors import HarkError
from models.settings import JudgeSettings

log = logging.getLogger(__name__)
MIN_WORDS = 3  # a shorter piece is a title or a label, not a sentence
EXTRA = 3  # sentences of another passage added to a group


@dataclass
class Group:
    question: str
    title: str
    sentences: list[str]
    labels: list[int]  # 1: the sentence holds an answer string
    source: str  # the folder it comes from


@dataclass
class HeldOut:
    groups: int
    judge_top1: float  # the judge's best sentence holds the answer
    overlap_top1: float  # the sentence sharing most content words holds it


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def load_groups(folder: Path, half: str) -> list[Group]:
    """One group per question of `half` with answer strings and a judged passage (see the module)."""
    data = load_beir(folder)
    answers: dict[str, list[str]] = {}
    order: list[str] = []
    with (folder / "queries.jsonl").open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                order.append(str(row["_id"]))
                answers[str(row["_id"])] = [a for a in row.get("answers") or [] if str(a).strip()]
    if not any(answers.values()):
        raise HarkError(f"{folder}/queries.jsonl has no answer strings", "the judge trains on sets with `answers`")
    docs = {d.doc_id: d for d in data.corpus}
    out: list[Group] = []
    for qid in half_of(order, half):
        rels = [d for d, r in data.qrels.get(qid, {}).items() if r > 0 and d in docs]
        if not rels or not answers.get(qid):
            continue
        doc = docs[rels[0]]
        sentences = [s for s in split_sentences(doc.text) if len(s.split()) >= MIN_WORDS]
        wanted = [_fold(a) for a in answers[qid]]
        labels = [int(any(a in _fold(s) for a in wanted)) for s in sentences]
        if len(sentences) >= 2 and 0 < sum(labels) < len(labels):
            out.append(Group(data.queries[qid], doc.title, sentences, labels, folder.name))
    return out


def _with_others(group: Group, by_title: dict[tuple[str, str], list[Group]], everything: list[Group],
                 rng: random.Random) -> tuple[list[str], list[int]]:  # fmt: skip
    pool = [g for g in by_title[(group.source, group.title)] if g.sentences != group.sentences] or everything
    other = rng.choice(pool)
    extra = [s for s in other.sentences if s not in group.sentences][:EXTRA]
    return group.sentences + extra, group.labels + [0] * len(extra)


def build_lora(settings: JudgeSettings) -> tuple[Any, Any]:
    from peft import LoraConfig, TaskType, get_peft_model

    from models.sentence_judge import load_model

    tokenizer, base = load_model(settings)
    config = LoraConfig(task_type=TaskType.SEQ_CLS, r=settings.lora_r, lora_alpha=settings.lora_alpha,
                        lora_dropout=settings.lora_dropout, target_modules=list(settings.target_modules),
                        modules_to_save=["classifier"])  # fmt: skip
    return tokenizer, get_peft_model(base, config)


def held_out(logits_of: Any, groups: list[Group]) -> HeldOut:
    """The judge's top-1 sentence against the content-word overlap's, on `groups`."""
    judge, overlap = [], []
    for g in groups:
        logits = np.asarray(logits_of(g.question, g.sentences))
        q = set(content_words(g.question))
        shared = [len(q & set(content_words(s))) for s in g.sentences]
        judge.append(g.labels[int(np.argmax(logits))])
        overlap.append(g.labels[int(np.argmax(shared))])
    return HeldOut(len(groups), round(float(np.mean(judge)), 4), round(float(np.mean(overlap)), 4))


def train(settings: JudgeSettings, data_dir: Path, out_dir: Path) -> dict[str, Any]:
    """Train on the select halves of `settings.train_sets` under `data_dir`, write the adapter and
    `judge.json` to `out_dir`, and return that summary (held-out accuracy on the report halves)."""
    import torch

    from models.sentence_judge import META_FILE

    rng = random.Random(settings.seed)
    torch.manual_seed(settings.seed)
    folders = [data_dir / name for name in settings.train_sets]
    groups = [g for f in folders for g in load_groups(f, "select")]
    by_title: dict[tuple[str, str], list[Group]] = {}
    for g in groups:
        by_title.setdefault((g.source, g.title), []).append(g)
    tokenizer, model = build_lora(settings)
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=settings.learning_rate, weight_decay=0.01)
    total = settings.epochs * len(groups)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: max(0.0, 1 - step / total))
    started, losses = time.perf_counter(), []
    model.train()
    for epoch in range(settings.epochs):
        rng.shuffle(groups)
        for i, g in enumerate(groups, 1):
            sentences, labels = _with_others(g, by_title, groups, rng)
            enc = tokenizer([g.question] * len(sentences), sentences, truncation="only_second",
                            max_length=settings.max_length, padding=True, return_tensors="pt")  # fmt: skip
            logits = model(**enc).logits.squeeze(-1)
            right = torch.tensor(labels, dtype=torch.bool)
            loss = torch.logsumexp(logits, 0) - torch.logsumexp(logits[right], 0)
            loss.backward()
            if i % settings.accumulate == 0 or i == len(groups):
                opt.step()
                opt.zero_grad()
            sched.step()
            losses.append(loss.item())
            if i % 400 == 0:
                log.info("epoch %d: %d of %d groups, loss %.3f", epoch + 1, i, len(groups), np.mean(losses[-400:]))
    model.eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out_dir))
    (out_dir / "README.md").unlink(missing_ok=True)  # peft's template; MODEL_CARD.md is ours
    config_file = out_dir / "adapter_config.json"  # the portable base name, not this machine's path
    config = json.loads(config_file.read_text(encoding="utf-8"))
    config["base_model_name_or_path"] = settings.base_model
    config_file.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    def logits_of(question: str, sentences: list[str]) -> np.ndarray:
        enc = tokenizer([question] * len(sentences), sentences, truncation="only_second",
                        max_length=settings.max_length, padding=True, return_tensors="pt")  # fmt: skip
        with torch.inference_mode():
            return model(**enc).logits.squeeze(-1).numpy()

    report = {f.name: asdict(held_out(logits_of, load_groups(f, "report"))) for f in folders}
    meta = {
        "base_model": settings.base_model,
        "train_sets": list(settings.train_sets),
        "train_groups": len(groups),
        "recipe": {k: getattr(settings, k) for k in ("lora_r", "lora_alpha", "lora_dropout", "target_modules",
                                                     "learning_rate", "epochs", "accumulate", "max_length", "seed")},
        "seconds": round(time.perf_counter() - started),
        "final_loss": round(float(np.mean(losses[-400:])), 4),
        "held_out": report,
    }
    (out_dir / META_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return meta
