"""LanceDB full-text index settings: the index configuration and the name that identifies it."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from knowledge.settings import FtsSettings


def fts_config(settings: FtsSettings) -> Any:
    """The LanceDB full-text index configuration of these settings."""
    import lancedb

    return lancedb.index.FTS(**settings.model_dump())


def fts_index_name(settings: FtsSettings) -> str:
    """The full-text index's name: one per tokenizer configuration, so a change is seen and rebuilt."""
    blob = json.dumps(settings.model_dump(), sort_keys=True)
    return f"chunk_text_fts_{hashlib.sha256(blob.encode()).hexdigest()[:8]}"
