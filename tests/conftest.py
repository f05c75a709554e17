"""Shared test configuration. Environment first: torch must see OMP_WAIT_POLICY before import."""

from __future__ import annotations

import os

from models.runtime.env import prepare_process_env

prepare_process_env(offline=True)  # tests never reach the hub
for _key in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY", "GROQ_API_KEY", "SERPAPI_API_KEY"):
    os.environ.pop(_key, None)  # tests set the keys they need; a developer's real keys never leak in

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
EVAL_DATA = SHARED / "data" / "eval"


@pytest.fixture(scope="session")
def minilm():
    """The bundled all-MiniLM-L6-v2 embedder, loaded once for the whole run."""
    from models.embedder import MiniLMEmbedder
    from models.settings import EmbedderSettings

    emb = MiniLMEmbedder(EmbedderSettings(backend="minilm"))
    emb.warm_up()
    return emb


@pytest.fixture
def hark_config(tmp_path):
    """A HarkConfig whose data folder, traces and library live in a temp dir, with MiniLM."""
    from assistant.config import load_config

    cfg = load_config(ROOT / "config.yaml")
    cfg.embedder.backend = "minilm"
    cfg._base_dir = tmp_path
    return cfg


@pytest.fixture(scope="session")
def s3():
    """A real S3 server (moto, tests/s3_server.py) on 127.0.0.1, with the test credentials in the
    environment for the whole run (Hark reads them from there)."""
    from tests.s3_server import S3Server, credentials

    server = S3Server().start()
    try:
        with credentials():
            yield server
    finally:
        server.stop()
