"""What the bench scripts share: where the evaluation data lives and the small helpers of their
tables (percentiles, resident memory, the machine's load). The process environment is set by the
package itself (`bench/__init__.py`), before any script's own imports."""

from __future__ import annotations

import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVAL = ROOT.parent / "shared" / "data" / "eval"  # the BEIR-layout development sets (as in tests/conftest.py)
PROVIDER_KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY", "GROQ_API_KEY", "SERPAPI_API_KEY")


def jsonl(path: Path) -> list[dict]:
    """The objects of a JSON-lines file (blank lines skipped)."""
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def pct(values: list[float], q: float) -> float:
    """The `q` quantile (0..1) by nearest rank; NaN for no values."""
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))] if s else float("nan")


def memory_mb() -> dict[str, float]:
    """This process's resident (`VmRSS`) and peak resident (`VmHWM`) memory, MB (Linux)."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            out[line.split(":")[0]] = int(line.split()[1]) / 1024
    return out


def load_average() -> float:
    """The 1-minute load average: timings depend on it, so every table prints it."""
    return os.getloadavg()[0]


def without_provider_keys() -> None:
    """Drop the LLM and web-search keys from the environment: answers come from the extractive
    answerer (or a loopback server the bench configures), so numbers never depend on a provider."""
    for key in PROVIDER_KEYS:
        os.environ.pop(key, None)
