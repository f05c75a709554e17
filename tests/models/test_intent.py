"""The intent classifier: generator, the committed adapter on real queries, bad CSV files.

The adapter under models/intent_adapter/ is loaded with the bundled MiniLM base (no download);
the held-out queries below were written by hand for this test and come neither from the
generator nor from the external file.
"""

from __future__ import annotations

import csv
import json
import threading
from collections import Counter
from pathlib import Path

import pytest

from models.intent import IntentClassifier
from models.intent_data import LABELS, build_dataset, generate, read_csv
from models.runtime.errors import HarkError, ModelLoadError
from models.settings import IntentSettings
from tests.conftest import ROOT

HELD_OUT = {
    "rag_search": [
        "what does the tenancy contract say about painting the walls",
        "how do i change the water filter in my fridge",
        "explain how vaccines train the immune system",
        "what was the operating profit in the 2024 annual report",
        "when is the coursework for econ 101 due",
    ],
    "web_search": [
        "is it snowing in denver right now",
        "latest score in the cricket match",
        "whats the price of tesla stock today",
        "search google for a cheap dentist nearby",
        "any breaking news this evening",
    ],
    "greeting": [
        "heya, hows your week been",
        "good morning to you",
        "thanks heaps, thats great",
        "alright im logging off now, bye",
        "hey hey hark",
    ],
    "conversation_meta": [
        "what was the very first thing i asked you today",
        "repeat your previous answer please",
        "can you summarise what weve covered",
        "what did you tell me about the notice period earlier",
        "which files did you use to answer that",
    ],
}


@pytest.fixture(scope="module")
def settings() -> IntentSettings:
    from assistant.config import load_config

    return load_config(ROOT / "config.yaml").intent


@pytest.fixture(scope="module")
def classifier(settings) -> IntentClassifier:
    clf = IntentClassifier(settings, ROOT)
    clf.warm_up()
    return clf


# --- the generator -----------------------------------------------------------------------------


def test_generator_size_balance_and_unique_rows():
    rows = generate(4000, seed=42)
    assert len(rows) == 4000
    assert Counter(r.label for r in rows) == {lab: 1000 for lab in LABELS}
    assert len({r.text.lower() for r in rows}) == 4000
    texts = " ".join(r.text.lower() for r in rows if r.label == "rag_search")
    for domain_word in ("regulation", "manual", "report", "syllabus", "lease", "photosynthesis"):
        assert domain_word in texts, domain_word
    # realistic noise: casual spellings and typos are present but not everywhere
    casual = sum(
        1 for r in rows if any(w in r.text.lower().split() for w in ("u", "pls", "rn", "whats", "thx"))
    )
    assert 0.03 * len(rows) < casual < 0.5 * len(rows)


def test_typing_and_hearing_slips_come_at_one_rate_for_every_label():
    """Stray symbols, joined or split words and dropped vowels (`garble`) are in every label's rows
    alike, so a slip never says which label a question has; world lookups are web_search rows."""
    import random
    import re

    from models.intent_data import garble

    rng = random.Random(0)
    slips = [garble("who painted the night watch", rng) for _ in range(200)]
    assert any(s.endswith(("#", "]", "/", ";")) for s in slips)  # a stray symbol
    assert any("paintedthe" in s or "whopainted" in s or "nightwatch" in s for s in slips)  # joined
    assert any(re.search(r"\b(pai nted|pain ted|paint ed|nig ht|ni ght)\b", s) for s in slips)  # split
    assert any("paintd" in s or "pinted" in s or "nght" in s for s in slips)  # a vowel dropped
    rows = generate(4000, seed=42)
    stray = re.compile(r"[#\]\\;=*`/]")
    shares = {lab: sum(bool(stray.search(r.text)) for r in rows if r.label == lab) / 1000 for lab in LABELS}
    assert all(0.02 < v < 0.2 for v in shares.values()), shares
    assert max(shares.values()) - min(shares.values()) < 0.06, shares
    web = " ".join(r.text.lower() for r in rows if r.label == "web_search")
    assert "capital of" in web and "who painted" in web


def test_split_is_stratified_80_20_and_seeded(tmp_path):
    a = build_dataset(4000, 42, tmp_path / "a")
    b = build_dataset(4000, 42, tmp_path / "b")
    c = build_dataset(4000, 7, tmp_path / "c")
    assert (a.n_train, a.n_test) == (3200, 800)
    assert a.train.read_bytes() == b.train.read_bytes() and a.test.read_bytes() == b.test.read_bytes()
    assert a.train.read_bytes() != c.train.read_bytes()
    train, test = read_csv(a.train), read_csv(a.test)
    assert Counter(e.label for e in test) == {lab: 200 for lab in LABELS}
    assert Counter(e.label for e in train) == {lab: 800 for lab in LABELS}
    assert not {e.text for e in train} & {e.text for e in test}
    with open(a.train, newline="") as f:
        assert next(csv.reader(f)) == ["text", "label"]


def test_external_file_is_balanced_and_shares_only_trivial_greetings():
    external = read_csv(ROOT / "models" / "intent_external.csv")
    counts = Counter(e.label for e in external)
    assert len(external) >= 200 and min(counts.values()) >= 50, counts
    generated = {r.text.lower() for r in generate(4000, seed=42)}
    shared = [e for e in external if e.text.lower() in generated]
    assert all(e.label == "greeting" and len(e.text.split()) <= 3 for e in shared), shared


# --- the committed adapter ---------------------------------------------------------------------


def test_committed_adapter_is_small_and_complete(settings):
    adapter = ROOT / settings.adapter_dir
    for name in ("adapter_config.json", "adapter_model.safetensors", "label_map.json", "MODEL_CARD.md"):
        assert (adapter / name).is_file(), name
    assert (adapter / "adapter_model.safetensors").stat().st_size < 2_000_000
    assert json.loads((adapter / "label_map.json").read_text())["labels"] == list(LABELS)


def test_predicts_held_out_queries(classifier):
    wrong = []
    for label, texts in HELD_OUT.items():
        preds = classifier.predict_batch(texts)
        misses = [(t, p.label) for t, p in zip(texts, preds, strict=True) if p.label != label]
        wrong += misses
        assert len(misses) <= 1, (label, misses)
    assert len(wrong) <= 2, wrong


# world lookups typed fast or heard imperfectly, written for this test (not in the external file
# nor the templates): the web's, never taken for a question about the conversation
NOISY_WORLD = [
    "whos the author of les miserables#",
    "wat is the capitl of canada",
    "who pianted the arnolfini portrait]",
    "when ws the first iphone released",
    "whatis the currency of peru?/",
    "how many moons does jupitr have",
    "who discoverd gravity;",
    "what is the hightest waterfall in the world",
    "who inventedthe steam locomotive",
    "how long is the great wall of chin a",
]


def test_noisy_world_questions_go_to_the_web(classifier):
    preds = classifier.predict_batch(NOISY_WORLD)
    labels = [p.label for p in preds]
    assert "conversation_meta" not in labels, list(zip(NOISY_WORLD, labels, strict=True))
    assert labels.count("web_search") >= len(NOISY_WORLD) - 1, list(zip(NOISY_WORLD, labels, strict=True))


def test_prediction_shape_and_batch_consistency(classifier):
    texts = [t for group in HELD_OUT.values() for t in group[:2]] + ["", "   "]
    batch = classifier.predict_batch(texts)
    for text, p in zip(texts, batch, strict=True):
        assert set(p.scores) == set(LABELS)
        assert sum(p.scores.values()) == pytest.approx(1.0, abs=1e-4)
        assert p.confidence == pytest.approx(max(p.scores.values())) and p.scores[p.label] == p.confidence
        single = classifier.predict(text)
        assert single.label == p.label and single.confidence == pytest.approx(p.confidence, abs=1e-4)


def test_onnx_runtime_matches_pytorch(classifier, settings):
    assert classifier.runtime == "onnx"
    eager = IntentClassifier(settings.model_copy(update={"runtime": "torch"}), ROOT)
    texts = [t for group in HELD_OUT.values() for t in group]
    for a, b in zip(classifier.predict_batch(texts), eager.predict_batch(texts), strict=True):
        assert a.label == b.label
        assert max(abs(a.scores[k] - b.scores[k]) for k in a.scores) < 1e-4


def test_unusable_onnx_cache_degrades_to_pytorch(settings, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("HARK_CACHE", str(blocker))
    clf = IntentClassifier(settings, ROOT)
    assert clf.runtime == "torch"
    assert clf.predict("what did i ask you first").label == "conversation_meta"


def test_warm_up_loads_once_across_threads(settings):
    clf = IntentClassifier(settings, ROOT)
    calls = []
    original = clf._load

    def counting_load() -> None:
        calls.append(1)
        original()

    clf._load = counting_load  # type: ignore[method-assign]
    threads = [threading.Thread(target=clf.warm_up) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert clf.predict("hello there").label == "greeting"


def test_a_config_in_another_folder_loads_the_shipped_adapter_and_trains_into_its_own(tmp_path, settings):
    """`intent.adapter_dir` is relative: a config.yaml kept elsewhere, with no adapter beside it,
    still classifies with Hark's; training would write beside that config, never over Hark's."""
    from models.intent import configured_adapter_dir

    assert not Path(settings.adapter_dir).is_absolute()
    clf = IntentClassifier(settings, tmp_path)
    assert clf.adapter_dir == (ROOT / settings.adapter_dir).resolve()
    clf.warm_up()
    assert clf.predict("hello there").label == "greeting"
    assert configured_adapter_dir(settings, tmp_path) == (tmp_path / settings.adapter_dir).resolve()


def test_missing_or_mismatched_adapter_is_a_clear_error(tmp_path, settings):
    with pytest.raises(ModelLoadError, match="no trained intent adapter") as exc:
        IntentClassifier(settings.model_copy(update={"adapter_dir": str(tmp_path / "none")}), ROOT).warm_up()
    assert "train-intents" in exc.value.hint
    other = settings.model_copy(update={"base_model": "roberta-base"})
    with pytest.raises(ModelLoadError, match="was trained on"):
        IntentClassifier(other, ROOT).warm_up()


@pytest.mark.parametrize(
    "content, message",
    [
        ("text,label\nhi,smalltalk\n", "unknown label"),
        ("question,intent\nhi,greeting\n", "header"),
        ("text,label\n", "no rows"),
    ],
)
def test_bad_csv_is_a_user_error(tmp_path, content, message):
    bad = tmp_path / "bad.csv"
    bad.write_text(content)
    with pytest.raises(HarkError, match=message):
        read_csv(bad)
    with pytest.raises(HarkError):
        read_csv(Path(tmp_path / "missing.csv"))


# --- training ----------------------------------------------------------------------------------


def test_lora_recipe_trains_only_the_adapters_and_the_head(settings):
    from models.intent_train import build_lora_model

    _, model = build_lora_model(settings)
    trainable = {n: p.numel() for n, p in model.named_parameters() if p.requires_grad}
    assert all("lora_" in n or "classifier" in n for n in trainable), sorted(trainable)
    assert any(".query.lora_A" in n for n in trainable) and any(".key.lora_A" in n for n in trainable)
    assert not any(".value." in n for n in trainable)
    # 6 layers × (query, key) × (A: r×384 + B: 384×r) + head (384×4 + 4): the MiniLM recipe's count
    assert sum(trainable.values()) == 6 * 2 * (8 * 384 + 384 * 8) + 384 * 4 + 4


@pytest.mark.slow
def test_training_writes_a_loadable_adapter_and_card(tmp_path, settings):
    from models.intent_train import train

    small = settings.model_copy(
        update={
            "adapter_dir": str(tmp_path / "adapter"),
            "data_dir": str(tmp_path / "data"),
            "external_file": str(ROOT / "models" / "intent_external.csv"),
            "dataset_rows": 100,
            "epochs": 1,
            "learning_rate": 2e-3,
            "compare_learning_rates": [],
            "runtime": "torch",  # no ONNX export of a throwaway adapter
        }
    )
    evaluated: dict[str, object] = {}
    report = train(small, ROOT, latency_repeats=1, on_evaluated=evaluated.__setitem__)
    n_external = len(read_csv(ROOT / "models" / "intent_external.csv"))
    assert report.runs[0].learning_rate == 2e-3 and report.latency_ms["n"] == n_external
    adapter = tmp_path / "adapter"
    assert (tmp_path / "data" / "train.csv").is_file() and (tmp_path / "data" / "test.csv").is_file()
    card = (adapter / "MODEL_CARD.md").read_text()
    assert "Training curves" in card and "learning rate | 0.002" in card
    log = json.loads((adapter / "training_log.json").read_text())
    assert log["n_train"] + log["n_val"] + log["n_test"] == 100 and len(log["runs"][0]["curve"]) == 1
    assert (
        json.loads((adapter / "adapter_config.json").read_text())["base_model_name_or_path"]
        == settings.base_model
    )
    pred = IntentClassifier(small, ROOT).predict("hello")
    assert pred.label in LABELS
    assert any(title.startswith("external file") for title in evaluated)  # the front end prints these
