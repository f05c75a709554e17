"""Real Hark processes sharing one library, for tests/hostile/test_team.py and `bench/load.py --team`:
a config per "machine" (its own data folder and traces, the shared library URI), `launch.py ingest`
runs and `launch.py` app servers on free ports, credentials only in their environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import ROOT
from tests.hostile.load_rig import free_port
from tests.s3_server import env


def write_config(folder: Path, uri: str, options: dict[str, str] | None = None, *, refresh: float = 1.0,
                 providers: dict[str, Any] | None = None, concurrency: int = 4) -> Path:
    """One machine's config (JSON, which YAML reads): MiniLM, the shared library, no LLM unless
    `providers` (then in that order), no speech warm-up or synthesis."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "data"
    store: dict[str, Any] = {"data_dir": str(data), "uri": uri, "refresh_seconds": refresh}
    if options:
        store["storage_options"] = options
    cfg = {
        "embedder": {"backend": "minilm"},
        "store": store,
        "intent": {"adapter_dir": str(ROOT / "models" / "intent_adapter")},
        "speech": {"model": "tiny.en", "warm_up": False},
        "tts": {"enabled": False},
        "trace": {"path": str(data / "traces.jsonl"), "log_path": str(data / "hark.log")},
        "llm": {"order": list(providers or {}), "providers": providers or {}, "cooldown_seconds": 0,
                "connect_timeout": 1.0, "first_token_timeout": 5.0, "total_timeout": 30.0},
        "ui": {"library_dir": str(data / "library"), "concurrency_limit": concurrency, "max_queue": 256},
    }
    path = folder / "config.yaml"
    path.write_text(json.dumps(cfg, indent=1), encoding="utf-8")
    return path


def process_env() -> dict[str, str]:
    return {**os.environ, **env(), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "GRADIO_ANALYTICS_ENABLED": "False", "DO_NOT_TRACK": "1", "OMP_WAIT_POLICY": "PASSIVE"}


def ingest(cfg: Path, *paths: Path) -> subprocess.Popen:
    """`launch.py ingest PATH… --config cfg`, started (see `finish`)."""
    cmd = [sys.executable, str(ROOT / "launch.py"), "ingest", *map(str, paths), "--config", str(cfg)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=process_env(),
                            cwd=cfg.parent)


def finish(proc: subprocess.Popen, timeout: float = 600) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


@dataclass
class AppProcess:
    """A `launch.py` app server; `url` once it printed "Hark is running at …"."""

    proc: subprocess.Popen
    url: str = ""
    lines: list[str] = field(default_factory=list)
    ready: threading.Event = field(default_factory=threading.Event)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            if line.startswith("Hark is running at "):
                self.url = line.split(" at ", 1)[1].strip()
                self.ready.set()
        self.ready.set()

    def wait_ready(self, timeout: float = 300) -> str:
        if not (self.ready.wait(timeout) and self.url):
            raise RuntimeError("the app did not start:\n" + "".join(self.lines)[-3000:])
        return self.url

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_app(cfg: Path) -> AppProcess:
    cmd = [sys.executable, str(ROOT / "launch.py"), "--config", str(cfg), "--port", str(free_port())]
    app = AppProcess(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      env=process_env(), cwd=cfg.parent))
    threading.Thread(target=app._read, daemon=True).start()
    return app
