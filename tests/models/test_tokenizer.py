"""The model folder's tokenizer read without transformers: the same ids, masks and token types as
transformers' AutoTokenizer, and no PyTorch imported on the way."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from models.settings import EmbedderSettings
from models.tokenizer import FileTokenizer, load_tokenizer
from models.weights import minilm_path
from tests.conftest import ROOT

TEXTS = [
    "what does the lease say about pets",
    "hi",
    " ",
    "Grüße aus Köln – naïve café, 20 € 🎉",
    "The notice period is three months; the deposit is two months of rent. " * 30,
]


def test_same_encoding_as_transformers() -> None:
    from transformers import AutoTokenizer

    folder = minilm_path(EmbedderSettings().text_model)
    ours, theirs = load_tokenizer(folder), AutoTokenizer.from_pretrained(folder)
    assert isinstance(ours, FileTokenizer)
    assert (ours.cls_token_id, ours.sep_token_id, ours.pad_token_id) == (
        theirs.cls_token_id,
        theirs.sep_token_id,
        theirs.pad_token_id,
    )
    for max_length in (16, 64):
        a = ours(TEXTS, padding=True, truncation=True, max_length=max_length, return_tensors="np")
        b = theirs(TEXTS, padding=True, truncation=True, max_length=max_length, return_tensors="np")
        assert set(a) == set(b)
        for key in b:
            assert np.array_equal(a[key], b[key]), key
    one = ours(TEXTS[:2], return_tensors="pt")
    assert one["input_ids"].shape == theirs(TEXTS[:2], padding=True, return_tensors="pt")["input_ids"].shape


def test_loading_imports_no_torch(tmp_path: Path) -> None:
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from models.tokenizer import load_tokenizer\n"
        "from models.settings import EmbedderSettings\n"
        "from models.weights import minilm_path\n"
        "tok = load_tokenizer(minilm_path(EmbedderSettings().text_model))\n"
        "assert tok(['hello world'])['input_ids'].shape == (1, 4)\n"
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]", out.stdout


def test_settings_of_one_call_never_reach_another() -> None:
    """Each (truncation, padding) setting has its own configured backend, made once: calls that
    alternate settings, from several threads at once, give what a fresh tokenizer gives."""
    from concurrent.futures import ThreadPoolExecutor

    folder = Path(minilm_path(EmbedderSettings().text_model))
    shared = FileTokenizer(folder)
    calls = [dict(max_length=16), dict(max_length=64), dict(padding=False, max_length=8), dict(truncation=False)]
    expected = [FileTokenizer(folder)(TEXTS[:1] if c.get("padding") is False else TEXTS, **c) for c in calls]

    def run(i: int) -> bool:
        c = calls[i % len(calls)]
        got = shared(TEXTS[:1] if c.get("padding") is False else TEXTS, **c)
        return all(np.array_equal(got[k], expected[i % len(calls)][k]) for k in got)

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(run, range(40)))
    assert expected[0]["input_ids"].shape[1] == 16 and expected[1]["input_ids"].shape[1] == 64
    assert expected[3]["input_ids"].shape[1] > 64  # no truncation: the long text keeps its length
    assert len(shared._configured) == len(calls)  # one backend per setting, not one per call


def test_pairs_encode_as_transformers_does_only_the_second_text_cut() -> None:
    """A question and a sentence read together (the sentence judge's input): the same ids and token
    types as transformers' pair encoding, a long sentence cut and never the question."""
    from transformers import AutoTokenizer

    folder = minilm_path(EmbedderSettings().text_model)
    ours, theirs = load_tokenizer(folder), AutoTokenizer.from_pretrained(folder)
    questions = ["which option keeps the order of the answers?"] * 3
    sentences = [TEXTS[4], "ordered: keep the answers in the order given.", TEXTS[3]]
    a = ours(questions, text_pair=sentences, padding=True, truncation=True, max_length=32, return_tensors="np")
    b = theirs(questions, sentences, padding=True, truncation="only_second", max_length=32, return_tensors="np")
    for key in b:
        assert np.array_equal(a[key], b[key]), key
    assert a["input_ids"].shape[1] == 32
    first = ours(questions[:1], return_tensors="np")["input_ids"][0]
    assert list(a["input_ids"][0][: len(first)]) == list(first)  # the whole question, then the sentence
    assert a["token_type_ids"][1].max() == 1
