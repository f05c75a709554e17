"""Open the library: the configured embedder and the chunk store of its vector space.

The one way Hark builds them, used by the Assistant (`assistant/components.py`), the command line
(`launch.py ingest`, `eval retrieval`) and the ingest child (`knowledge/ingest_process.py`). A
fallback embedder (CLIP unavailable offline → the bundled MiniLM) has another identity, hence
another table: vectors of different embedders never mix.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knowledge.settings import StoreSettings
    from knowledge.store import ChunkStore
    from models.embedder import Embedder
    from models.settings import EmbedderSettings

log = logging.getLogger(__name__)


def open_embedder(settings: EmbedderSettings, *, identity: str = "", lazy: bool = False) -> Embedder:
    """The configured embedder, loaded (CLIP, or the MiniLM fallback offline, logged).

    `identity`: the embedder another process already runs. When that is MiniLM (configured, or
    CLIP's fallback) the MiniLM embedder is returned unloaded, without trying CLIP again: it loads
    on its first text, so a run with nothing to embed never loads a model. `lazy`: MiniLM (configured
    or CLIP's fallback) is returned unloaded in any case (the command-line ingest).
    """
    from models.embedder import MiniLMEmbedder, load_embedder

    if identity:
        minilm = MiniLMEmbedder(settings)
        if minilm.identity == identity:
            return minilm
    return load_embedder(settings, load_minilm=not lazy)


def open_store(embedder: Embedder, settings: StoreSettings, uri: str) -> ChunkStore:
    """The store of `embedder`'s vector space (table `<prefix>__<identity>`) at `uri` (a local
    folder, `s3://…` or `db://…`; `HarkConfig.lancedb_uri`, see docs/storage.md)."""
    from knowledge.store import ChunkStore

    return ChunkStore.open(uri, embedder.identity, embedder.dim, settings)


def open_library(
    embedder_settings: EmbedderSettings,
    store_settings: StoreSettings,
    uri: str,
    *,
    identity: str = "",
    lazy: bool = False,
) -> tuple[Embedder, ChunkStore]:
    """`open_embedder` then `open_store`: the pair every ingestion and search needs."""
    embedder = open_embedder(embedder_settings, identity=identity, lazy=lazy)
    return embedder, open_store(embedder, store_settings, uri)
