"""Shared pieces for the conversation tests: a tiny real library (real Ingestor, real LanceDB,
MiniLM), and configs pointing at it (the SerpAPI loopback server is tests/serp_server.py).

The library is built once per test run (it is only read by the tests), in the run's temp folder.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import ROOT

DOCS = {
    "lease.md": """# Rental agreement for Flat 4B

## Notice period
The tenant must give two months' written notice before moving out. The landlord must give the
tenant three months' written notice to end the tenancy.

## Pets
Cats are allowed in the flat. Dogs require the landlord's written permission, and a pet deposit
of 300 euros is payable before the animal moves in.

## Rent
The monthly rent is 950 euros, due on the first working day of each month. Late payment incurs a
fee of 25 euros after five days.
""",
    "bicycle.md": """# City bicycle owner's manual

## Brakes
Check the brake pads every 500 kilometres. Replace the pads when the groove is less than one
millimetre deep. Never oil the rims or the brake discs.

## Tyres
Inflate the tyres to between 3.5 and 5 bar, as printed on the tyre wall. Check the pressure
every two weeks.
""",
    "handbook.md": """# Data Science course handbook

## Assessment
The course is assessed by three components: a written exam worth 50 percent, a group project
worth 30 percent, and weekly quizzes worth 20 percent.

## Attendance
Students must attend at least 80 percent of the lab sessions. Absences need a medical certificate.
""",
}


@dataclass
class Library:
    root: Path  # the documents
    uri: str  # the LanceDB folder
    store: Any
    embedder: Any


_built: dict[str, Library] = {}


def _build(base: str, emb: Any) -> Library:
    if base in _built:
        return _built[base]
    from knowledge.ingest import Ingestor
    from knowledge.settings import IngestSettings, StoreSettings
    from knowledge.store import ChunkStore

    base_dir = Path(base) / "conversation_library"
    docs = base_dir / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    uri = str(base_dir / "lancedb")
    store = ChunkStore.open(uri, emb.identity, emb.dim, StoreSettings(data_dir=str(base_dir)))
    report = Ingestor(store, emb, IngestSettings()).ingest([docs])
    assert store.count() >= len(DOCS), report
    _built[base] = Library(root=docs, uri=uri, store=store, embedder=emb)
    return _built[base]


def build_library(tmp_path_factory, minilm) -> Library:  # noqa: ANN001 - pytest fixtures
    """Built once per run with the session's MiniLM (tests/conftest.py `minilm`)."""
    return _build(str(tmp_path_factory.getbasetemp()), minilm)


def make_config(tmp_path: Path, library: Library | None = None, **changes: Any):  # noqa: ANN201
    """A HarkConfig whose traces live in `tmp_path`, MiniLM, and (optionally) the shared library."""
    from assistant.config import load_config

    cfg = load_config(ROOT / "config.yaml")
    cfg._base_dir = tmp_path
    cfg.embedder.backend = "minilm"
    cfg.intent.adapter_dir = str(ROOT / cfg.intent.adapter_dir)  # the committed adapter, if any
    if library is not None:
        cfg.store.uri = library.uri
    for dotted, value in changes.items():
        obj = cfg
        *path, last = dotted.split("__")
        for part in path:
            obj = getattr(obj, part)
        setattr(obj, last, value)
    return cfg


@functools.lru_cache(maxsize=1)
def shared_classifier() -> Any:
    """The committed intent classifier, loaded once per run; None before one is committed (the
    Assistant then routes by its rules)."""
    from models.intent import IntentClassifier
    from models.settings import IntentSettings

    settings = IntentSettings()
    if not (ROOT / settings.adapter_dir / "adapter_config.json").is_file():
        return None
    clf = IntentClassifier(settings, ROOT)
    clf.warm_up()
    return clf
