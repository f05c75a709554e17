"""Evidence from the library for one query: the Retriever's result, or why there is none.

Kept apart from the turn so the turn can search first and decide afterwards (an unsure web route
checks the library before going to the web) without emitting events it may not need.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from knowledge.types import Hit

log = logging.getLogger(__name__)


@dataclass
class Found:
    """What a search of the library gave (or why it gave nothing)."""

    hits: list[Hit] = field(default_factory=list)
    candidates: list[Hit] = field(default_factory=list)
    relevant: bool = False
    notices: list[str] = field(default_factory=list)  # the retriever's own (degraded stages)
    errors: list[str] = field(default_factory=list)  # why nothing could be searched
    timings_ms: dict[str, float] = field(default_factory=dict)
    ok: bool = False


def search_documents(retriever: Any, query: str) -> Found:
    """`retriever`: the Assistant's lazy retriever part (`get_or_none()`, `error`). Never raises."""
    r = retriever.get_or_none()
    if r is None:
        return Found(errors=[f"Your documents can't be searched right now ({retriever.error})."])
    try:
        retrieval = r.retrieve(query)
    except Exception as exc:  # noqa: BLE001 - degrade: the turn answers without evidence
        log.warning("retrieval failed: %s", exc)
        return Found(errors=[f"Searching your documents failed ({type(exc).__name__})."])
    return Found(
        hits=list(retrieval.hits),
        candidates=list(retrieval.candidates),
        relevant=bool(retrieval.relevant),
        notices=[str(n) for n in getattr(retrieval, "notices", None) or []],
        timings_ms={k: round(float(v), 1) for k, v in (getattr(retrieval, "timings_ms", None) or {}).items()},
        ok=True,
    )
