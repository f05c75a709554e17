"""Runs the merged intent model: ONNX Runtime (default) or plain PyTorch.

A 6-layer encoder on a 10-token query is mostly framework overhead in PyTorch eager mode; the
same graph in ONNX Runtime costs ~2.5× less CPU per query with identical logits (bench/intent.py,
docs/results.md). The ONNX file is exported once from the merged model into the Hark cache
(`~/.cache/hark/intent-onnx/<hash of base + adapter + versions>.onnx`, not committed: it holds the
whole base model) and reused; if exporting or loading it fails, inference degrades to PyTorch.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from models.weights import cache_dir

log = logging.getLogger(__name__)
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_export_lock = threading.Lock()


class LogitsRunner(Protocol):
    name: str

    def logits(self, batch: dict[str, np.ndarray]) -> np.ndarray: ...


class TorchRunner:
    name = "torch"

    def __init__(self, model: Any) -> None:
        self.model = model

    def logits(self, batch: dict[str, np.ndarray]) -> np.ndarray:
        import torch

        feeds = {k: torch.from_numpy(np.asarray(v, dtype=np.int64)) for k, v in batch.items()}
        with torch.inference_mode():
            return self.model(**feeds).logits.float().numpy()


class OnnxRunner:
    name = "onnx"

    def __init__(self, path: Path, threads: int) -> None:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        if threads:
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]

    def logits(self, batch: dict[str, np.ndarray]) -> np.ndarray:
        feeds = {k: batch[k].astype(np.int64) for k in self.inputs}
        return np.asarray(self.session.run(["logits"], feeds)[0], dtype=np.float32)


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "-"


def _fingerprint(base_model: str, adapter_dir: Path) -> str:
    """The cache key: base model, library versions (read without importing them), adapter files."""
    versions = "|".join(_version(d) for d in ("torch", "transformers", "onnxruntime"))
    h = hashlib.sha256(f"{base_model}|{versions}".encode())
    for name in ("adapter_model.safetensors", "adapter_config.json", "label_map.json"):
        f = adapter_dir / name
        if f.is_file():
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _export(model: Any, tokenizer: Any, target: Path) -> None:
    import torch

    sample = tokenizer(["what does the lease say about pets", "hi"], padding=True, return_tensors="pt")
    names = [k for k in _INPUTS if k in sample]
    axes = {k: {0: "batch", 1: "tokens"} for k in names} | {"logits": {0: "batch"}}
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            tuple(sample[k] for k in names),
            str(tmp),
            input_names=names,
            output_names=["logits"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    os.replace(tmp, target)


def make_runner(
    build_model: Callable[[], Any],
    tokenizer: Any,
    runtime: str,
    threads: int,
    base_model: str,
    adapter_dir: Path,
) -> LogitsRunner:
    """ONNX Runtime when asked for and possible (the export is cached, so later loads never build
    the PyTorch model), otherwise PyTorch on `build_model()`, with a logged reason."""
    if runtime == "onnx":
        try:
            target = cache_dir() / "intent-onnx" / f"{_fingerprint(base_model, adapter_dir)}.onnx"
            with _export_lock:
                if not target.is_file():
                    log.info("exporting the intent model to ONNX (once): %s", target)
                    _export(build_model(), tokenizer, target)
            return OnnxRunner(target, threads)
        except Exception as exc:  # noqa: BLE001 - degrade to PyTorch, never fail the load
            log.warning("ONNX Runtime unavailable for the intent model (%s); using PyTorch", exc)
    return TorchRunner(build_model())
