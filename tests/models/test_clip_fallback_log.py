"""Offline, open_clip logs its failed CLIP download at ERROR on the root logger before Hark's own
fallback warning: Hark demotes that one record to DEBUG (seen with -v only), keeps its warning, and
lets every other root record through."""

from __future__ import annotations

import logging

from models.embedder import load_embedder
from models.settings import EmbedderSettings


def test_offline_clip_fallback_logs_hark_warning_not_open_clip_error(caplog):
    caplog.set_level(logging.INFO)
    emb = load_embedder(EmbedderSettings(backend="clip"))  # CLIP + OpenAI weights: not reachable offline (HF_HUB_OFFLINE)
    assert emb.is_fallback
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]
    warnings = [r.getMessage() for r in caplog.records if r.name == "models.embedder"]
    assert any("offline fallback" in m and "Failed to download weights" in m for m in warnings), warnings
    assert logging.getLogger().filters == []  # the filter only lives during create_model

    # with debug logging (-v) the open_clip line is still there, at DEBUG
    caplog.clear()
    caplog.set_level(logging.DEBUG)
    load_embedder(EmbedderSettings(backend="clip"))
    demoted = [r for r in caplog.records if r.getMessage().startswith("Failed to download weights")]
    assert demoted and all(r.levelno == logging.DEBUG for r in demoted)
    # other root records of open_clip during the load still pass
    assert any(r.name == "root" and "model config" in r.getMessage() for r in caplog.records)
