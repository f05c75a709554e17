"""Build the embedder and the chunk store together, from settings (for the CLI, the app, benches)."""

from __future__ import annotations

import logging

from knowledge.settings import StoreSettings
from knowledge.store import ChunkStore
from models.embedder import Embedder, load_embedder
from models.settings import EmbedderSettings

log = logging.getLogger(__name__)


def open_store(embedder: Embedder, store_settings: StoreSettings, uri: str) -> ChunkStore:
    """The store of this embedder's vector space (table `<prefix>__<identity>`)."""
    return ChunkStore.open(uri, embedder.identity, embedder.dim, store_settings)


def open_library(
    embedder_settings: EmbedderSettings, store_settings: StoreSettings, uri: str
) -> tuple[Embedder, ChunkStore]:
    """The configured embedder (CLIP, or the MiniLM fallback offline) and its store.

    `uri` is `HarkConfig.lancedb_uri` (a local folder, `s3://…`, or `db://…`). A fallback embedder
    has a different identity, hence a different table: vectors of different embedders never mix.
    """
    embedder = load_embedder(embedder_settings)
    if embedder.is_fallback:
        log.warning(
            "embedder: %s → %s (table %s)",
            embedder.fallback_reason,
            embedder.identity,
            store_settings.table_prefix,
        )
    return embedder, open_store(embedder, store_settings, uri)
