"""Training the sentence judge: groups from a BEIR folder's answer strings (one half, labels where the
answer is), and a short real training run whose adapter the judge then loads."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from assistant.judge_train import load_groups, train
from models.runtime.errors import HarkError
from models.sentence_judge import META_FILE, SentenceJudge
from models.settings import JudgeSettings

PASSAGES = [
    ("Tea", "Tea is a drink made from leaves. It was first drunk in China. Green tea is not fermented."),
    ("Tea", "Black tea is fully oxidised before it is dried. Most tea sold in Europe is black tea. It keeps for years."),
    ("Rivers", "The Rhine flows through six countries. It is 1,230 kilometres long. Barges carry coal on it."),
    ("Rivers", "The Danube ends in the Black Sea. Vienna and Budapest stand on it. It freezes in hard winters."),
]
QUESTIONS = [  # (question, answer, passage)
    ("Where was tea first drunk?", "China", 0),
    ("Where is most black tea sold?", "Europe", 1),
    ("How long is the Rhine?", "1,230 kilometres", 2),
    ("Which cities stand on the Danube?", "Vienna", 3),
    ("What is tea made from?", "leaves", 0),
    ("Where does the Danube end?", "Black Sea", 3),
]


def _folder(root: Path, answers: bool = True) -> Path:
    d = root / "tiny_qa"
    (d / "qrels").mkdir(parents=True)
    (d / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"p{i}", "title": t, "text": x}) + "\n"
                                            for i, (t, x) in enumerate(PASSAGES)), encoding="utf-8")  # fmt: skip
    (d / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{i}", "text": q, **({"answers": [a]} if answers else {})})
                                             + "\n" for i, (q, a, _) in enumerate(QUESTIONS)), encoding="utf-8")  # fmt: skip
    (d / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"q{i}\tp{p}\t1\n" for i, (_, _, p) in enumerate(QUESTIONS)), encoding="utf-8")  # fmt: skip
    return d


def test_groups_label_the_sentences_holding_the_answer_one_half_only(tmp_path):
    folder = _folder(tmp_path)
    select = load_groups(folder, "select")
    assert [g.question for g in select] == [q for q, _, _ in QUESTIONS[0::2]]
    first = select[0]
    assert first.labels == [0, 1, 0] and "China" in first.sentences[1] and first.title == "Tea"
    assert [g.question for g in load_groups(folder, "report")] == [q for q, _, _ in QUESTIONS[1::2]]


def test_a_set_without_answer_strings_is_refused(tmp_path):
    with pytest.raises(HarkError, match="no answer strings"):
        load_groups(_folder(tmp_path, answers=False), "select")


def test_a_short_training_run_writes_an_adapter_the_judge_loads(tmp_path):
    folder = _folder(tmp_path)
    settings = JudgeSettings(train_sets=[folder.name], accumulate=1, lora_r=2, lora_alpha=4, runtime="torch")
    out = tmp_path / "adapter"
    meta = train(settings, tmp_path, out)
    assert meta["train_groups"] == 3 and set(meta["held_out"]) == {"tiny_qa"}
    assert meta["held_out"]["tiny_qa"]["groups"] == 3
    assert json.loads((out / META_FILE).read_text(encoding="utf-8"))["base_model"] == settings.base_model
    assert not (out / "README.md").exists()
    assert json.loads((out / "adapter_config.json").read_text(encoding="utf-8"))["base_model_name_or_path"] == settings.base_model
    judge = SentenceJudge(settings.model_copy(update={"adapter_dir": str(out)}), tmp_path)
    logits = judge.logits("Where was tea first drunk?", ["It was first drunk in China.", "Green tea is not fermented."])
    assert logits.shape == (2,) and np.all(np.isfinite(logits))
