"""`launch.py eval intents` (ui/cli_eval.py): the committed intent classifier on a small hand-made
CSV, its printed report and its JSON, directly and through launch.py."""

from __future__ import annotations

import csv
import json

import pytest

from models.intent_data import LABELS
from models.settings import IntentSettings
from tests.conftest import ROOT
from ui.cli_eval import eval_intents_command


@pytest.fixture(scope="module")
def settings() -> IntentSettings:
    from assistant.config import load_config

    return load_config(ROOT / "config.yaml").intent


def _f1_from_confusion(m: list[list[int]]) -> float:
    f1s = []
    for i in range(len(m)):
        tp = m[i][i]
        fp = sum(m[r][i] for r in range(len(m))) - tp
        fn = sum(m[i]) - tp
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
    return sum(f1s) / len(f1s)


def test_eval_command_prints_and_writes_json(tmp_path, settings, capsys):
    rows = [
        ("whats in chapter 2 of the employee handbook about sick days", "rag_search"),
        ("how does a heat exchanger work", "rag_search"),
        ("will it be windy in cardiff tomorrow", "web_search"),
        ("current price of a barrel of oil", "web_search"),
        ("hiya!", "greeting"),
        ("cheers, bye", "greeting"),
        ("what was the last thing i asked", "conversation_meta"),
        ("say that again but shorter", "conversation_meta"),
    ]
    data = tmp_path / "tiny.csv"
    with open(data, "w", newline="") as f:
        csv.writer(f).writerows([("text", "label"), *rows])
    out = tmp_path / "out" / "intents.json"
    assert eval_intents_command(settings, data, str(out), base_dir=ROOT) == 0
    printed = capsys.readouterr().out
    assert "macro-F1" in printed and "confusion" in printed
    result = json.loads(out.read_text())
    assert list(result) == ["accuracy", "macro_f1", "labels", "confusion"]
    assert result["labels"] == list(LABELS)
    m = result["confusion"]
    assert len(m) == 4 and all(len(r) == 4 for r in m) and sum(map(sum, m)) == len(rows)
    assert [sum(r) for r in m] == [2, 2, 2, 2]
    assert result["accuracy"] == pytest.approx(sum(m[i][i] for i in range(4)) / len(rows))
    assert result["macro_f1"] == pytest.approx(_f1_from_confusion(m))
    assert result["accuracy"] >= 0.75


def test_eval_command_through_launch(tmp_path):
    import launch

    data = tmp_path / "two.csv"
    data.write_text("text,label\nhello,greeting\nwhat's the weather in oslo right now,web_search\n")
    out = tmp_path / "r.json"
    assert launch.main(["eval", "intents", "--file", str(data), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["labels"] == list(LABELS)
