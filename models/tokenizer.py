"""A model folder's BERT-style fast tokenizer (`tokenizer.json`) through the `tokenizers` library.

It gives the ids, attention masks and token types transformers' `AutoTokenizer` gives for the same
folder (checked on the development corpora and the intent data), without importing transformers,
which imports PyTorch: seconds of every cold start that runs on ONNX Runtime. Folders with another
kind of tokenizer get transformers' (`load_tokenizer`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

BERT_CLASSES = ("BertTokenizer", "BertTokenizerFast")


class FileTokenizer:
    """Called like a transformers tokenizer on a batch: `tok(texts, padding=True, truncation=True,
    max_length=n, return_tensors="np" | "pt")` → input_ids, token_type_ids, attention_mask; with
    `text_pair`, each text and its pair as one input, only the pair truncated (as "only_second")."""

    def __init__(self, folder: Path) -> None:
        from tokenizers import Tokenizer

        self.backend_tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        ids: dict[str, int] = {}
        for role in ("cls", "sep", "pad"):
            token = config.get(f"{role}_token")
            token = token.get("content") if isinstance(token, dict) else token
            found = self.backend_tokenizer.token_to_id(token) if isinstance(token, str) else None
            if found is None:
                raise ValueError(f"{folder / 'tokenizer_config.json'} names no {role} token in the vocabulary")
            ids[role] = found
        self.pad_token = str(config.get("pad_token"))
        self.cls_token_id, self.sep_token_id, self.pad_token_id = ids["cls"], ids["sep"], ids["pad"]
        self.model_max_length = int(config.get("model_max_length") or 512)
        # one configured copy of the backend per (truncation length, padding), made once: parsing
        # tokenizer.json again costs ~14 ms, far more than encoding a question (~0.1 ms); a copy is
        # never reconfigured after it is made, so concurrent callers share it safely
        self._configured: dict[tuple[int | None, bool, bool], Any] = {}
        self._lock = threading.Lock()

    def _backend_for(self, max_length: int | None, padding: bool, pairs: bool = False) -> Any:
        key = (max_length, padding, pairs)
        tok = self._configured.get(key)
        if tok is None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_str(self.backend_tokenizer.to_str())
            tok.no_padding()
            tok.no_truncation()
            if max_length is not None:
                tok.enable_truncation(max_length, strategy="only_second" if pairs else "longest_first")
            if padding:
                tok.enable_padding(pad_id=self.pad_token_id, pad_token=self.pad_token)
            with self._lock:
                tok = self._configured.setdefault(key, tok)
        return tok

    def __call__(
        self,
        texts: str | Sequence[str],
        padding: bool = True,
        truncation: bool = True,
        max_length: int | None = None,
        return_tensors: str = "np",
        add_special_tokens: bool = True,
        text_pair: str | Sequence[str] | None = None,
    ) -> dict[str, Any]:
        batch: list[Any] = [texts] if isinstance(texts, str) else list(texts)
        if text_pair is not None:
            seconds = [text_pair] if isinstance(text_pair, str) else list(text_pair)
            batch = list(zip(batch, seconds, strict=True))
        limit = (max_length or self.model_max_length) if truncation else None
        tok = self._backend_for(limit, bool(padding), text_pair is not None)
        encs = tok.encode_batch(batch, add_special_tokens=add_special_tokens)
        out = {
            "input_ids": np.array([e.ids for e in encs], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encs], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encs], dtype=np.int64),
        }
        if return_tensors == "pt":
            import torch

            return {k: torch.from_numpy(v) for k, v in out.items()}
        return out


def is_bert_folder(folder: Path) -> bool:
    try:
        config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (folder / "tokenizer.json").is_file() and config.get("tokenizer_class") in BERT_CLASSES


def load_tokenizer(folder: str | Path) -> Any:
    """`FileTokenizer` for a local folder with a BERT fast tokenizer, else transformers' AutoTokenizer."""
    path = Path(folder)
    if path.is_dir() and is_bert_folder(path):
        return FileTokenizer(path)
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(folder))
