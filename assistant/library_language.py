"""How much of the library is German, and a note when the embedder cannot read it well.

The bundled embedder, all-MiniLM-L6-v2, is trained on English. On a bilingual test library (German
Wikipedia articles, half also in English) English questions whose answer is only in a German article get
"not known" about half the time (`docs/results.md`, "Answerability and the offline answer"): mostly the
decision, as MiniLM scores an English question against a German passage low; the search misses the rest. A
multilingual embedder is what such a library needs, so the library tab and `ingest` say so.

The share is counted from the library's word counts (`LibraryWords`, built once per snapshot): occurrences
of German function words over German and English ones together (`word_match`'s marker lists).
"""

from __future__ import annotations

import logging
from typing import Any

from assistant.word_match import ENGLISH_MARKERS, GERMAN_MARKERS
from knowledge.types import LibraryWords

log = logging.getLogger(__name__)

NOTE_FROM = 0.2  # a German share from which the note is shown (a mixed or German library)
ENGLISH_ONLY = ("minilm-l6-v2",)  # identities (and their layouts) of embedders trained on English only


def german_share(words: LibraryWords | None) -> float | None:
    """German function words' share of the library's German and English ones (None: no counts, or none)."""
    if words is None or len(words.chunks) != len(words):
        return None
    de = sum(words.occurrences(w) for w in GERMAN_MARKERS - ENGLISH_MARKERS)
    en = sum(words.occurrences(w) for w in ENGLISH_MARKERS - GERMAN_MARKERS)
    return de / (de + en) if de + en else None


def embedder_note(share: float | None, embedder_identity: str | None) -> str | None:
    """What to tell the user about a German or mixed library searched by an English-only embedder."""
    if share is None or share < NOTE_FROM or not embedder_identity:
        return None
    if not embedder_identity.startswith(ENGLISH_ONLY):
        return None
    return (
        f"About {share:.0%} of the library is German text. The embedder, all-MiniLM-L6-v2, is trained on "
        "English: a question about a passage in another language is found mostly by its words, and an English "
        "question whose answer is only in German text often gets \"not known\". A multilingual embedder reads "
        "both: set embedder.text_model (README, \"Embedder\"), e.g. intfloat/multilingual-e5-small."
    )


def library_note(store: Any, embedder_identity: str | None) -> str | None:
    """`embedder_note` for the library in `store` (its current snapshot's word counts); None when they
    cannot be read: a note is never worth an error."""
    try:
        words = store.view().vocabulary()
    except Exception:  # noqa: BLE001 - the note is optional; the ingest it follows has succeeded
        log.warning("could not read the library's word counts", exc_info=True)
        return None
    return embedder_note(german_share(words), embedder_identity)
