"""The sentence-transformers MiniLM pipeline, exported once to ONNX and run by ONNX Runtime.

A 6-layer encoder on a 10-token query is mostly framework overhead in PyTorch eager mode; the same
graph in ONNX Runtime gives the same vectors (max |difference| ~1e-7 after normalisation) at a
fraction of the cost (bench/embed.py, docs/results.md "Query embedding runtime").

What is exported is exactly what `SentenceTransformer.forward` computes: token embeddings → the
model's Pooling (mean over the attention mask for all-MiniLM-L6-v2) → its Normalize when present,
with dynamic batch and sequence axes. The file goes to the Hark cache
(`<cache>/embedder-onnx/<fingerprint>.onnx`, plus a small `.json` with the sequence limit), keyed
by the model folder's files and the library versions, and is reused by every later start.
Writes are temp-then-rename (a crash never leaves a half file; two processes exporting at once
both write a whole file and the last rename wins). Tokenisation stays in Python, with the model
folder's own tokenizer. Callers degrade to PyTorch when anything here raises.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from models.runtime.atomic import remove_stale_temps, write_atomic
from models.tokenizer import load_tokenizer

log = logging.getLogger(__name__)

EXPORT_FORMAT = 2  # bump when the exported graph or its inputs change (2: eager attention)
OUTPUT = "sentence_embedding"
INPUTS = ("input_ids", "attention_mask")
_LIBRARIES = ("torch", "transformers", "sentence-transformers", "onnxruntime")
_FULL_HASH_LIMIT = 8 << 20  # files above this (the weights) are keyed by size and mtime, not read
_export_lock = threading.Lock()


class SentenceEncoder(Protocol):
    """Token ids → sentence embeddings (n, dim), float32, not necessarily normalised."""

    name: str

    def encode(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray: ...


class TorchEncoder:
    """The loaded SentenceTransformer, PyTorch eager."""

    name = "torch"

    def __init__(self, model: Any) -> None:
        self.model = model

    def encode(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        import torch

        ids = torch.from_numpy(input_ids).to(self.model.device)
        features = {
            "input_ids": ids,
            "attention_mask": torch.from_numpy(attention_mask).to(self.model.device),
            "token_type_ids": torch.zeros_like(ids),
        }
        with torch.inference_mode():
            out = self.model(features)
        return out[OUTPUT].float().cpu().numpy()


def _session(path: Path, threads: int) -> Any:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    if threads:
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
    # idle pool threads sleep instead of spinning: a spinning pool keeps burning a core after the
    # call, which the rest of the turn (search, rerank, the LLM client) and other sessions need
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


class OnnxEncoder:
    """ONNX Runtime sessions on the exported pipeline. A single text (a query) runs on a session
    with `threads` threads (1: on the caller's thread, no pool); a batch of several texts (ingest,
    an answer's sentences) on a second session with `batch_threads`, created on first use (the
    assistant's warm-up makes it). `run` is thread-safe: one encoder serves every Hark session."""

    name = "onnx"

    def __init__(self, path: Path, threads: int, batch_threads: int | None = None) -> None:
        self.path = path
        self.threads = threads
        self.batch_threads = threads if batch_threads is None else batch_threads
        self.session = _session(path, threads)
        self._batch: Any = self.session if self.batch_threads == threads else None
        self._lock = threading.Lock()

    def _batch_session(self) -> Any:
        if self._batch is None:
            with self._lock:
                if self._batch is None:
                    self._batch = _session(self.path, self.batch_threads)
        return self._batch

    def encode(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        feeds = {
            "input_ids": input_ids.astype(np.int64, copy=False),
            "attention_mask": attention_mask.astype(np.int64, copy=False),
        }
        session = self.session if len(input_ids) == 1 else self._batch_session()
        return np.asarray(session.run([OUTPUT], feeds)[0], dtype=np.float32)


@dataclass(frozen=True)
class OnnxPipeline:
    """What the embedder needs to run on ONNX Runtime: the session, the tokenizer, the window."""

    encoder: OnnxEncoder
    tokenizer: Any
    max_seq_length: int


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "-"


def fingerprint(folder: Path) -> str:
    """A key over the model folder's files, the export format and the library versions."""
    h = hashlib.sha256(f"format={EXPORT_FORMAT}".encode())
    for dist in _LIBRARIES:
        h.update(f"|{dist}={_version(dist)}".encode())
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        st = f.stat()
        h.update(f"|{f.relative_to(folder).as_posix()}:{st.st_size}".encode())
        if st.st_size <= _FULL_HASH_LIMIT:
            h.update(f.read_bytes())
        else:  # re-saving the weights changes the mtime; reading 90 MB on every start does not pay
            h.update(str(st.st_mtime_ns).encode())
    return h.hexdigest()[:16]


def cache_path(folder: Path, cache_root: Path) -> Path:
    """Where the exported pipeline of this model folder lives (its `.json` beside it)."""
    return cache_root / "embedder-onnx" / f"{fingerprint(folder)}.onnx"


def export_pipeline(model: Any, target: Path) -> None:
    """Export a loaded SentenceTransformer's forward pass (CPU, float32) to `target` (+ `.json`)."""
    import torch

    class _Pipeline(torch.nn.Module):
        def __init__(self, st: Any) -> None:
            super().__init__()
            self.st = st

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            features = {
                "input_ids": input_ids,
                "attention_mask": attention_mask,
                "token_type_ids": torch.zeros_like(input_ids),
            }
            return self.st(features)[OUTPUT]

    sample = model.tokenizer(["what does the lease say about pets", "hi"], padding=True, return_tensors="pt")
    axes = {k: {0: "batch", 1: "tokens"} for k in INPUTS} | {OUTPUT: {0: "batch"}}

    def write_onnx(tmp: Path) -> None:
        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _Pipeline(model).eval(),
                tuple(sample[k] for k in INPUTS),
                str(tmp),
                input_names=list(INPUTS),
                output_names=[OUTPUT],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )

    meta = {"max_seq_length": int(model.max_seq_length), "format": EXPORT_FORMAT}
    target.parent.mkdir(parents=True, exist_ok=True)
    # the .json first: a present .onnx always has its .json
    write_atomic(target.with_suffix(".json"), lambda tmp: tmp.write_text(json.dumps(meta), encoding="utf-8"))
    with _eager_attention(model):
        write_atomic(target, write_onnx)


@contextmanager
def _eager_attention(model: Any) -> Iterator[None]:
    """Trace the plain attention (matmul, mask, softmax) rather than the SDPA kernel: the traced
    SDPA carries NaN guards ONNX Runtime cannot fuse, and runs ~15-20% slower there (bench/embed.py).
    Same maths; the vectors differ by ~1e-7. The model is restored afterwards."""
    changed: list[tuple[Any, str]] = []
    for module in model.modules():
        config = getattr(module, "config", None)
        current = getattr(config, "_attn_implementation", None)
        if hasattr(module, "set_attn_implementation") and current not in (None, "eager"):
            try:
                module.set_attn_implementation("eager")
                changed.append((module, current))
            except Exception as exc:  # noqa: BLE001 - export what the model has
                log.info("keeping %s attention for the ONNX export (%s)", current, exc)
    try:
        yield
    finally:
        for module, previous in changed:
            module.set_attn_implementation(previous)


def _read_meta(target: Path) -> dict[str, Any] | None:
    meta_file = target.with_suffix(".json")
    if not (target.is_file() and meta_file.is_file()):
        return None
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    return meta if meta.get("format") == EXPORT_FORMAT else None


def load_pipeline(
    folder: Path, cache_root: Path, threads: int, batch_threads: int, build_model: Callable[[], Any]
) -> OnnxPipeline:
    """The cached pipeline of `folder`, exported first when missing or unreadable. `build_model()`
    (the SentenceTransformer, on CPU) is called only to export. Raises when that is impossible."""
    if not folder.is_dir():
        raise FileNotFoundError(f"the ONNX export needs the model in a local folder, not {folder}")
    target = cache_path(folder, cache_root)
    with _export_lock:
        try:
            meta = _read_meta(target)
        except (OSError, ValueError) as exc:
            log.warning("unreadable ONNX metadata beside %s (%s); exporting again", target, exc)
            meta = None
        if meta is not None:
            try:
                encoder = OnnxEncoder(target, threads, batch_threads)
                return OnnxPipeline(encoder, load_tokenizer(folder), meta["max_seq_length"])
            except Exception as exc:  # noqa: BLE001 - a damaged cache file is replaced, once
                log.warning("the cached ONNX embedder %s does not load (%s); exporting again", target, exc)
        log.info("exporting the sentence embedder to ONNX (once): %s", target)
        remove_stale_temps(target.parent)
        model = build_model()
        export_pipeline(model, target)
        encoder = OnnxEncoder(target, threads, batch_threads)
        return OnnxPipeline(encoder, model.tokenizer, int(model.max_seq_length))
