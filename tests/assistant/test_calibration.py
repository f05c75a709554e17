"""Another embedder's cosines in the fitted model's units (assistant/calibration.py), on a real
embedder whose cosines all sit high and close, as multilingual-e5's do, and a real LanceDB library."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assistant.answerability import Answerability, Logistic, Signals
from assistant.calibration import Calibrated, Calibration, Points, anchor_points_of
from models.embedder import Embedder
from tests.assistant.turn_fixtures import DOCS

# cosine' = HIGH + (1 − HIGH) · cosine: every pair between 0.7 and 1, unrelated ones near 0.7
HIGH = 0.7


class HighCosines(Embedder):
    """all-MiniLM-L6-v2 with one constant dimension added to every window vector: a real encoder
    whose cosines are HIGH + (1 − HIGH) · MiniLM's, so a model fitted on MiniLM reads them all as close."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner.settings)
        self.inner = inner
        self.name = "high-cosines-minilm"
        self.dim = inner.dim + 1

    def _load(self) -> None:
        self.inner.warm_up()

    def _token_ids(self, text: str) -> list[int]:
        return self.inner._token_ids(text)

    @property
    def window_size(self) -> int:
        return self.inner.window_size

    def _encode_windows(self, windows: list[list[int]]) -> np.ndarray:
        u = np.asarray(self.inner._encode_windows(windows), dtype=np.float32)
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        lift = np.full((len(u), 1), math.sqrt(HIGH / (1 - HIGH)), dtype=np.float32)
        return np.hstack([lift, u])


def test_the_line_through_two_points_maps_cosines_and_scales_their_differences():
    cal = Calibration.between(Points(0.85, 0.75), Points(0.6, 0.1))
    x = cal.apply({"dense_top": 0.85, "sentence_sim": 0.75, "library_gap": 0.02, "dense_gap": 0.01, "q_words": 2.0})
    assert x["dense_top"] == pytest.approx(0.6) and x["sentence_sim"] == pytest.approx(0.1)
    assert x["library_gap"] == pytest.approx(0.1) and x["dense_gap"] == pytest.approx(0.05)
    assert x["q_words"] == 2.0  # not a cosine
    with pytest.raises(ValueError, match="closer than mismatched"):  # cannot tell the pairs apart
        Calibration.between(Points(0.51, 0.5), Points(0.6, 0.1))


@pytest.fixture(scope="module")
def high(tmp_path_factory, minilm):
    """The high-cosine embedder and a real library of the conversation documents indexed with it."""
    from knowledge.ingest import Ingestor
    from knowledge.settings import IngestSettings, StoreSettings
    from knowledge.store import ChunkStore

    emb = HighCosines(minilm)
    base = tmp_path_factory.mktemp("high_cosines")
    docs = base / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    store = ChunkStore.open(str(base / "lancedb"), emb.identity, emb.dim, StoreSettings(data_dir=str(base)))
    Ingestor(store, emb, IngestSettings(isolation="inline")).ingest([docs])
    assert store.count() >= len(DOCS)
    return emb, store


QUESTIONS = {
    "How much is the pet deposit for a dog?": True,
    "How often should I check the tyre pressure?": True,
    "What dose of ibuprofen is safe for a small child?": False,  # another domain
    "which MACTURT store does the paper use": False,  # a misheard question
    "Who won the football world cup in 1954?": False,
    "How tall is the Eiffel Tower?": False,
    "What is the best way to learn to swim?": False,
}


def _decide(emb, store, answerability: Answerability, question: str):
    from assistant.answer import Answerer
    from assistant.config import LLMSettings, PromptSettings
    from knowledge.retrieve import Retriever
    from knowledge.settings import RetrievalSettings

    answerer = Answerer(LLMSettings(order=[]), PromptSettings(), embed=emb.embed_documents, answerability=answerability)
    r = Retriever(emb, store, RetrievalSettings()).retrieve(question)
    return answerer.assess(question, r.hits, r.candidates, Signals(library_level=r.library_level, vocabulary=r.vocabulary))


def test_an_embedder_with_high_cosines_gets_the_fitted_model_read_in_its_units(high, minilm, tmp_path_factory):
    """The anchors put the new embedder's cosines back on MiniLM's scale: each decision is the one
    MiniLM's own model makes on the same library. Read raw, the same model answers questions about
    another domain."""
    from tests.assistant.turn_fixtures import build_library

    emb, store = high
    own = anchor_points_of(minilm)()
    points = anchor_points_of(emb)()
    assert points.matched == pytest.approx(HIGH + (1 - HIGH) * own.matched, abs=1e-3)
    assert points.mismatched == pytest.approx(HIGH + (1 - HIGH) * own.mismatched, abs=1e-3)
    assert points.mismatched > 0.7 and own.matched - own.mismatched > 0.3

    calibrated = Answerability.for_embedder(emb)
    assert isinstance(calibrated.model, Calibrated) and calibrated.model.model.name == "minilm-l6-v2-wmax"
    reference = Answerability.load(minilm.identity)
    assert isinstance(reference.model, Logistic) and reference.model.name == "minilm-l6-v2-wmax"
    raw = Answerability(calibrated.model.model)  # the same coefficients without the calibration
    library = build_library(tmp_path_factory, minilm)
    for question, answerable in QUESTIONS.items():
        d = _decide(emb, store, calibrated, question)
        same = _decide(minilm, library.store, reference, question)
        assert d.answerable is answerable, (question, d.probability, d.features)
        assert d.probability == pytest.approx(same.probability, abs=0.02), question
        assert "calibrated" in d.to_trace()["model"]
    # read raw, the high cosines pass questions about another domain as answerable
    # (the model's own verdict: the unknown-term rule would refuse some of them anyway)
    passed = [q for q, answerable in QUESTIONS.items()
              if not answerable and _decide(emb, store, raw, q).probability >= raw.model.threshold]  # fmt: skip
    assert len(passed) >= 3, passed


def test_an_embedder_that_fails_on_the_anchors_gets_the_lexical_model(high):
    emb, _ = high

    def broken() -> Points:
        raise RuntimeError("the encoder is gone")

    assert Answerability.load(emb.identity, points=broken).model.name == "lexical"
    assert Answerability.load(emb.identity).model.name == "lexical"  # no points asked


def test_an_encoder_with_random_weights_is_not_calibrated():
    """CLIP's real text tower, randomly initialised: its matching pairs are hardly closer than the others,
    so a line through its points would stretch noise; it gets the lexical model."""
    import torch

    from models.embedder import ClipEmbedder
    from models.settings import EmbedderSettings

    torch.manual_seed(0)  # one draw of the random weights
    clip = ClipEmbedder(EmbedderSettings(backend="clip"), random_weights=True)
    clip.warm_up()
    points = anchor_points_of(clip)()
    assert points.matched - points.mismatched < 0.05
    assert Answerability.for_embedder(clip).model.name == "lexical"


def test_the_shipped_reference_points_are_the_reference_embedder_s_on_these_anchors(minilm):
    """Editing `ANCHORS` without `bench/fit_answerability.py --write-reference` breaks the calibration."""
    import json

    from assistant.answerability import MODEL_FILE, mean_space

    ref = json.loads(MODEL_FILE.read_text())["reference"]
    assert ref["embedder"] == mean_space(minilm.identity)
    points = anchor_points_of(minilm)()
    assert (ref["matched"], ref["mismatched"]) == pytest.approx((points.matched, points.mismatched), abs=1e-4)
