"""The turn trace: one JSON line per turn, appended to `trace.path`.

A record holds the intent and its confidence, the original and rewritten query, candidate and
reranked scores, the provider and per-stage milliseconds. It never holds secrets: fields whose
name looks like a credential are dropped, and the values of Hark's secret environment variables
are scrubbed from every string before writing.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

from knowledge.types import Hit

log = logging.getLogger(__name__)

SECRET_ENV = (
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "OPENAI_API_KEY",
    "GROQ_API_KEY",
    "SERPAPI_API_KEY",
    "HARK_PASSWORD",
)
_SECRET_FIELD = re.compile(r"(api[_-]?key|secret|password|token_value|authorization|credential)", re.I)


def hit_scores(hits: list[Hit], limit: int = 50) -> list[dict[str, Any]]:
    """The scores of `hits`, compact (no text, no vectors)."""
    out = []
    for h in hits[:limit]:
        row: dict[str, Any] = {"chunk_id": h.chunk_id, "source_path": h.source_path, "score": _round(h.score)}
        for name in ("dense_score", "bm25_score", "diffusion_score", "first_stage_rank"):
            value = getattr(h, name)
            if value is not None:
                row[name.removesuffix("_score") if name != "first_stage_rank" else name] = _round(value)
        out.append(row)
    return out


def _round(value: Any) -> Any:
    return round(float(value), 5) if isinstance(value, float) else value


def scrub(value: Any, secrets: list[str]) -> Any:
    """`value` with credential-like fields dropped and secret values replaced (recursively)."""
    if isinstance(value, dict):
        return {k: scrub(v, secrets) for k, v in value.items() if not _SECRET_FIELD.search(str(k))}
    if isinstance(value, list | tuple):
        return [scrub(v, secrets) for v in value]
    if isinstance(value, str):
        for s in secrets:
            if s and s in value:
                value = value.replace(s, "***")
        return value
    return value


class TraceLog:
    """Appends one JSON line per turn. Thread-safe; a write failure is logged, never raised."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def write(self, record: dict[str, Any]) -> dict[str, Any]:
        secrets = [v for v in (os.environ.get(n, "").strip() for n in SECRET_ENV) if len(v) >= 4]
        clean = scrub(dict(record), secrets)
        clean.setdefault("ts", time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        line = json.dumps(clean, ensure_ascii=False, default=str)
        try:
            with self._lock:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(line + "\n")
        except OSError as exc:
            log.warning("could not write the turn trace to %s: %s", self.path, exc)
        return clean

    def read(self) -> list[dict[str, Any]]:
        """All records (for tests and tools)."""
        if not self.path.is_file():
            return []
        with self._lock:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]
