"""Runs a merged LoRA encoder (the intent classifier, the sentence judge): ONNX Runtime (default)
or plain PyTorch.

A 6-layer encoder on a 10-token query is mostly framework overhead in PyTorch eager mode; the
same graph in ONNX Runtime costs ~2.5× less CPU per query with identical logits (bench/intent.py,
docs/results.md). The ONNX file is exported once from the merged model into the Hark cache
(`~/.cache/hark/intent-onnx/<hash of base + adapter + versions>.onnx`, not committed: it holds the
whole base model) and reused; if exporting or loading it fails, inference degrades to PyTorch.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import os
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from models.runtime.errors import ModelLoadError
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


def adapter_meta(adapter_dir: Path, meta: str, base_model: str, what: str, train: str) -> dict[str, Any]:
    """The adapter folder's metadata file, read once its adapter is there and it was trained on
    `base_model` (`what`: the model and its setting's section, "intent"; `train`: the command that
    makes one); otherwise a `ModelLoadError` saying what to do."""
    meta_file = adapter_dir / meta
    if not (adapter_dir / "adapter_config.json").is_file() or not meta_file.is_file():
        raise ModelLoadError(f"no trained {what} adapter in {adapter_dir}", f"train one with: {train}")
    data = json.loads(meta_file.read_text(encoding="utf-8"))
    if data.get("base_model") != base_model:
        raise ModelLoadError(
            f"the {what} adapter in {adapter_dir} was trained on {data.get('base_model')!r}, "
            f"but {what}.base_model is {base_model!r}",
            f"set {what}.base_model back, or retrain: {train}",
        )
    return data


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "-"


def _fingerprint(base_model: str, adapter_dir: Path, meta: str) -> str:
    """The cache key: base model, library versions (read without importing them), adapter files."""
    versions = "|".join(_version(d) for d in ("torch", "transformers", "onnxruntime"))
    h = hashlib.sha256(f"{base_model}|{versions}".encode())
    for name in ("adapter_model.safetensors", "adapter_config.json", meta):
        f = adapter_dir / name
        if f.is_file():
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _export(model: Any, sample: dict[str, Any], target: Path) -> None:
    import torch

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
    *,
    name: str = "intent",
    meta: str = "label_map.json",
    pairs: bool = False,
) -> LogitsRunner:
    """ONNX Runtime when asked for and possible (the export is cached, so later loads never build
    the PyTorch model), otherwise PyTorch on `build_model()`, with a logged reason. `name`: the
    cache folder's prefix and the model named in logs; `meta`: the adapter folder's own metadata
    file (part of the cache key); `pairs`: the model reads two texts (exported on a pair)."""
    if runtime == "onnx":
        try:
            target = cache_dir() / f"{name}-onnx" / f"{_fingerprint(base_model, adapter_dir, meta)}.onnx"
            with _export_lock:
                if not target.is_file():
                    log.info("exporting the %s model to ONNX (once): %s", name, target)
                    second = {"text_pair": ["Pets are allowed with a deposit.", "Hello."]} if pairs else {}
                    sample = tokenizer(["what does the lease say about pets", "hi"], padding=True,
                                       return_tensors="pt", **second)
                    _export(build_model(), sample, target)
            return OnnxRunner(target, threads)
        except Exception as exc:  # noqa: BLE001 - degrade to PyTorch, never fail the load
            log.warning("ONNX Runtime unavailable for the %s model (%s); using PyTorch", name, exc)
    return TorchRunner(build_model())
