"""The process environment Hark's libraries read once, at import time: set it in one place.

Call `prepare_process_env()` at the very top of an entry point (launch.py, tests/conftest.py, a
bench script, a child process), before anything imports torch, tokenizers, unstructured or gradio:
those read these variables when they are first imported, so setting them later does nothing. This
module imports only `os` for that reason.

Every value is a default (`os.environ.setdefault`): a variable the user exported wins.

- `OMP_WAIT_POLICY=PASSIVE`: OpenMP worker threads (torch, CTranslate2) otherwise spin-wait after
  each parallel region; on a small shared machine the spinning steals the cores the next region
  needs (torch measured 5–12× slower on 2 cores without it; docs/install.md).
- `OPENBLAS_NUM_THREADS=1`: numpy's OpenBLAS workers busy-wait after each call and ignore
  OMP_WAIT_POLICY; Hark's numpy products are small (a search's matrix-vector product, a 50 × 50 Gram
  matrix), and two BLAS threads made the other stages of a turn 3–5× slower (models/runtime/blas.py).
  torch and ONNX Runtime have their own thread pools and are not affected.
- `TOKENIZERS_PARALLELISM=false`: Hugging Face tokenizers' own Rust thread pool competes with torch
  for the same cores, and after a fork (a child process) it warns and can deadlock.
- `DO_NOT_TRACK=1`: unstructured pings its analytics server on import and on each partition.
- `GRADIO_ANALYTICS_ENABLED=False`: Gradio looks up its analytics host when the app starts.
- `HF_HUB_DISABLE_TELEMETRY=1`: no usage telemetry from huggingface_hub.
- with `offline=True` only — `HF_HUB_OFFLINE=1`, `TRANSFORMERS_OFFLINE=1`: never ask the hub
  (tests and benchmarks must not download anything). The app itself does NOT pass it: a real user
  has the hub, and the configured CLIP weights are fetched from it on first use (offline, Hark falls
  back to the bundled MiniLM by itself).
"""

from __future__ import annotations

import os

ALWAYS: dict[str, str] = {
    "OMP_WAIT_POLICY": "PASSIVE",
    "OPENBLAS_NUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "DO_NOT_TRACK": "1",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}
OFFLINE: dict[str, str] = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}


def prepare_process_env(*, offline: bool = False) -> None:
    """Set Hark's process-wide defaults (see the module docstring); `offline` also forbids the hub."""
    for name, value in (ALWAYS | OFFLINE if offline else ALWAYS).items():
        os.environ.setdefault(name, value)
