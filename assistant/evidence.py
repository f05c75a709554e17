"""The evidence stage: what a turn answers from, and whether it is worth answering from.

`Evidence` holds one search result as the search gave it — the Retriever's `Retrieval` for the
library, the same type built from the web results — plus the decision the answer step receives
(`relevant`: the evidence can answer the question; for the library, the answerability model's
`decision`, made by `Answerer.assess` before any LLM call). The library search is `DocumentSearch`
(`prefetch.py`), the web search `search_web`; neither raises: a failure is an `Evidence` without a
retrieval and with the message to show.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from assistant.answerability import Decision
from knowledge.types import Hit, Retrieval

log = logging.getLogger(__name__)

Kind = Literal["documents", "web"]


@dataclass(frozen=True)
class Evidence:
    """One search's result (or why there is none) and the decision about it."""

    kind: Kind
    retrieval: Retrieval | None = None  # None: nothing could be searched (see `errors`)
    relevant: bool = False  # the decision: these hits can answer the question
    errors: tuple[str, ...] = ()  # why nothing could be searched (shown as errors)
    notices: tuple[str, ...] = ()  # degraded stages, empty results (shown as warnings)
    prefetched: bool = False  # the library result came from the search started ahead
    decision: Decision | None = None  # the answerability decision behind `relevant` (library only)

    @property
    def ok(self) -> bool:
        return self.retrieval is not None

    @property
    def hits(self) -> list[Hit]:
        return list(self.retrieval.hits) if self.retrieval is not None else []

    @property
    def candidates(self) -> list[Hit]:
        return list(self.retrieval.candidates) if self.retrieval is not None else []

    @property
    def timings_ms(self) -> dict[str, float]:
        """The retriever's own stages (embed, search, rerank), rounded."""
        got = self.retrieval.timings_ms if self.retrieval is not None else {}
        return {k: round(float(v), 1) for k, v in got.items()}


def search_library(retriever: Any, query: str) -> Evidence:
    """`retriever`: the lazy retriever part (`get_or_none()`, `error`). Never raises."""
    r = retriever.get_or_none()
    if r is None:
        return Evidence("documents", errors=(f"Your documents can't be searched right now ({retriever.error}).",))
    try:
        retrieval: Retrieval = r.retrieve(query)
    except Exception as exc:  # noqa: BLE001 - degrade: the turn answers without evidence
        log.warning("retrieval failed: %s", exc)
        return Evidence("documents", errors=(f"Searching your documents failed ({type(exc).__name__}).",))
    notices = tuple(str(n) for n in retrieval.notices or ())
    return Evidence("documents", retrieval, relevant=bool(retrieval.relevant), notices=notices)


def search_web(websearch: Any, query: str) -> Evidence:
    """`websearch`: a `WebSearch`. Its hits become a `Retrieval` without a first-stage pool."""
    results = websearch.search(query)
    retrieval = Retrieval(query, list(results.hits), [], relevant=True) if results.ok else None
    return Evidence("web", retrieval, relevant=bool(results.hits), notices=tuple(results.notices))
